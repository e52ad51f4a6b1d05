"""What the shuffle study writes: Eq. 5 on each backend, the times, timeouts and drops, the
figure and the README (``incast validate shuffle``)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from incastlab.validation.shuffle_points import (
    BUFFER,
    HOSTS,
    KERNELS,
    LINK_BPS,
    REDUCERS,
    RTOS_MS,
    RTT_US,
    SCALE,
    SHAPES,
    Run,
)


def groups(runs: Sequence[Run]) -> list[tuple[str, str, list[Run]]]:
    """The runs by kernel and shape, in :data:`KERNELS` and :data:`SHAPES` order: (kernel,
    shape, runs) for each pair with runs."""
    out = []
    for kernel in KERNELS:
        for shape in SHAPES:
            rs = [r for r in runs if r.point.kernel == kernel and r.point.shape == shape]
            if rs:
                out.append((kernel, shape, rs))
    return out


def label(kernel: str, shape: str) -> str:
    """A shuffle's name in the tables: its shape, and the kernel when it is not today's."""
    return shape if kernel == "today" else f"{shape}, 2009-like kernel"


def eq5(runs: Sequence[Run], which: str) -> tuple[float, float, float]:
    """Eq. 5 over the seeds (mean time at the long RTOmin over the mean at the short one,
    less 1), and its range over the seeds' own pairs."""
    longs = {r.point.seed: r.seconds(which) for r in runs if r.point.rto_ms == RTOS_MS[0]}
    shorts = {r.point.seed: r.seconds(which) for r in runs if r.point.rto_ms == RTOS_MS[1]}
    seeds = sorted(longs.keys() & shorts.keys())
    if not seeds:
        return (float("nan"),) * 3
    mean = statistics.mean(longs[s] for s in seeds) / statistics.mean(shorts[s] for s in seeds)
    pairs = [longs[s] / shorts[s] - 1 for s in seeds]
    return mean - 1, min(pairs), max(pairs)


def table(runs: Sequence[Run]) -> list[str]:
    """Per shuffle and RTOmin: the mean time, timeouts and drops on each backend."""
    lines = [
        "| shuffle | RTOmin (article's; run ×10) | kernel: time | timeouts (data / requests) "
        "| drops | simulator: time | timeouts | drops | simulator at 1 Gbps: time |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kernel, shape, group in groups(runs):
        for rto in RTOS_MS:
            rs = [r for r in group if r.point.rto_ms == rto]
            if not rs:
                continue

            def mean(f: Callable[[Run], float], rs: list[Run] = rs) -> float:
                return statistics.mean(f(r) for r in rs)

            lines.append(
                f"| {label(kernel, shape)} | {rto} ms | "
                f"{mean(lambda r: r.seconds('real')):.3f} s | "
                f"{mean(lambda r: r.count('real', 'timeouts')):.1f} "
                f"({mean(lambda r: r.side('map_rtos')):.1f} / "
                f"{mean(lambda r: r.side('reducer_rtos')):.1f}) | "
                f"{mean(lambda r: r.count('real', 'drops')):,.0f} | "
                f"{mean(lambda r: r.seconds('sim')):.3f} s | "
                f"{mean(lambda r: r.count('sim', 'timeouts')):.1f} | "
                f"{mean(lambda r: r.count('sim', 'drops')):,.0f} | "
                f"{mean(lambda r: r.seconds('article')):.3f} s |"
            )
    return lines


def overheads(runs: Sequence[Run]) -> tuple[list[str], list[str]]:
    """Eq. 5 per shuffle on each backend, and the verdict lines."""
    lines = [
        "| shuffle | kernel: Eq. 5 [seeds] | simulator [seeds] | simulator at 1 Gbps "
        "[seeds] | simulator / kernel |",
        "|---|---|---|---|---|",
    ]
    verdicts = []
    for kernel, shape, rs in groups(runs):
        k, s, a = eq5(rs, "real"), eq5(rs, "sim"), eq5(rs, "article")
        ratio = s[0] / k[0] if k[0] > 0 else float("nan")
        lines.append(
            f"| {label(kernel, shape)}: {SHAPES[shape].about} | "
            f"{k[0]:+.1%} [{k[1]:+.1%} to {k[2]:+.1%}] | "
            f"{s[0]:+.1%} [{s[1]:+.1%} to {s[2]:+.1%}] | "
            f"{a[0]:+.1%} [{a[1]:+.1%} to {a[2]:+.1%}] | {ratio:.2f} |"
        )
        if k[0] <= 0:
            off = "the kernel lost nothing"
        else:
            off = "more than 2× off" if not 0.5 <= ratio <= 2 else "within 2×"
        verdicts.append(
            f"- {label(kernel, shape)}: the kernel loses {k[0]:.1%} to the long RTOmin, the "
            f"simulator {s[0]:.1%} on the same slowed-down shuffle ({off}) and {a[0]:.1%} on the "
            "article's own fabric."
        )
    return lines, verdicts


def plot(runs: Sequence[Run], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grouped = groups(runs)
    series = (
        ("real", "real Linux TCP (slowed down ×10)", "#c0392b"),
        ("sim", "simulator, same testbed", "#2c7fb8"),
        ("article", "simulator, the article's 1 Gbps fabric", "#7fcdbb"),
    )
    seeds = ", ".join(map(str, sorted({r.point.seed for r in runs})))
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    width = 0.26
    for k, (which, name, color) in enumerate(series):
        xs, ys, lo, hi = [], [], [], []
        for i, (_, _, rs) in enumerate(grouped):
            m, a, b = eq5(rs, which)
            xs.append(i + (k - 1) * width)
            ys.append(100 * m)
            lo.append(100 * (m - a))
            hi.append(100 * (b - m))
        ax.bar(xs, ys, width, label=name, color=color, yerr=[lo, hi], capsize=3)
    ax.set_xticks(
        range(len(grouped)),
        [
            SHAPES[shape].about.replace(", ", "\n", 1)
            + ("" if kernel == "today" else f"\n{KERNELS[kernel].about}")
            for kernel, shape, _ in grouped
        ],
        fontsize=7,
    )
    ax.set_ylabel("shuffle time lost to RTOmin 200 ms\nagainst 1 ms (Eq. 5, %)")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_title(
        f"All-to-all shuffle: {HOSTS} hosts, {REDUCERS} reducers, {BUFFER} per port, "
        f"RTOmin 200 ms against 1 ms\nmeans over seeds {seeds} (bars: the seeds' own pairs)",
        fontsize=10,
    )
    ax.legend(frameon=False, fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_readme(out: Path, runs: Sequence[Run], jitter_s: float) -> Path:
    from incastlab import _core

    rows, verdicts = overheads(runs)
    busy = [r.real.report["machine"].get("cpu_busy", float("nan")) for r in runs]
    rtts = [r.real.report["emulated"]["rtt_measured_s"] or 0.0 for r in runs]
    releases = sorted({r.real.report["emulated"]["kernel"].get("release", "?") for r in runs})
    release = " and ".join(releases)
    lines = [
        "# The shuffle's incast on real Linux TCP and in the simulator",
        "",
        "Generated by `incast validate shuffle` (incastlab "
        f"{_core.__version__}); the kernel's runs are stored in `real/`.",
        "",
        f"An all-to-all shuffle as the job model runs it: {HOSTS} hosts, {REDUCERS} reducers "
        f"(two on each), every reducer fetching its outputs from the {HOSTS - 1} other hosts "
        "one at a time per host and a few hosts at once (mapred.reduce.parallel.copies), in "
        f"the simulator's order; CUBIC, {BUFFER} per switch port. Two kernels: Linux "
        f"{release} {KERNELS['today'].about}, which the simulator runs with its linux "
        f"profile, and the same kernel {KERNELS['2009'].about} (`incast emulate --sysctl` "
        f"{', '.join(f'{k}={v}' for k, v in KERNELS['2009'].sysctls.items())}), which it runs "
        "with its classic profile; what this kernel cannot take back from 2.6.28's: PRR, "
        f"HyStart, TCP Small Queues. The article's 1 Gbps fabric is slowed down {SCALE} times "
        f"for the kernel: {LINK_BPS // SCALE // 1_000_000} Mbps links and RTOmin "
        f"{RTOS_MS[0] * SCALE} ms against {RTOS_MS[1] * SCALE} ms; times below are divided by "
        f"{SCALE}, so they read as the article's. The base RTT does not scale (the veths': "
        f"median {statistics.median(rtts) * 1e6:.0f} µs measured), nor do the kernel's fixed "
        "timers. The simulator runs the same slowed-down shuffle with the measured RTT, the "
        f"veths' timing noise (`topology.link_jitter` up to {jitter_s * 1e6:.1f} µs, from the "
        "runs' RTT probes, as `incast validate` takes it), tbf's framing and the veths' NICs "
        "and ports, and the article's own fabric "
        f"(1 Gbps, {RTT_US} µs, 200 ms against 1 ms). The CPUs were "
        f"{statistics.median(busy):.0%} busy during the kernel's runs (median).",
        "",
        "![shuffle.png](shuffle.png)",
        "",
        "## Eq. 5: what the long RTOmin costs the shuffle",
        "",
        "Mean over seeds of the time until the last reducer has every output at the long "
        "RTOmin, over the mean at the short one, less 1; in brackets the range of the seeds' "
        "own pairs.",
        "",
        *rows,
        "",
        *verdicts,
        "",
        "## Times, timeouts and drops",
        "",
        "Means over seeds. Timeouts: every host's TcpExt.TCPTimeouts (both ends), split by "
        "each socket's TCP_INFO into the map hosts' ends (data) and the reducers' (their "
        "requests: pure ACKs are never retransmitted); drops: the switch ports' (the kernel's "
        "tbf drops).",
        "",
        *table(runs),
        "",
    ]
    path = out / "README.md"
    path.write_text("\n".join(lines))
    return path
