"""What RTOmin costs a MapReduce shuffle on real Linux TCP, beside the simulator.

The job model (:mod:`incastlab.jobs`) times every shuffle with the simulator's ``shuffle``
workload: all of a job's reducers fetching at once, every host a receiver and a sender. Its
verdict rests on how much a long RTOmin costs such a shuffle. This study runs the same
shuffles on the kernel (``incast emulate``, the simulator's fetches in the simulator's order)
and in the simulator, under a long and a short RTOmin, and compares Chen et al.'s Eq. 5 (the
long RTOmin's extra time over the short one's) on both.

A 2-core machine cannot shape 10 hosts at 1 Gbps, so the article's fabric is slowed down
:data:`SCALE` times: the links run at 1 Gbps / SCALE and every RTOmin is SCALE times longer
(200 ms → 2 s, 1 ms → 10 ms), while bytes, packets, the port buffer and the flows per port stay
the article's. A fetch then takes SCALE times as long and so does each timeout, so a timeout
costs a fetch the same share as at 1 Gbps. Two things do not scale: the testbed's base RTT (the
veths', about 30 µs, where the article's 100 µs would become 1 ms) and the kernel's fixed
timers (the 4 ms tick, delayed ACKs of at least 40 ms). The simulator runs the slowed-down
shuffle with the testbed's measured RTT and framing (as ``incast validate`` tells it), and
the article's own fabric too, so the table shows what the slowing down changed.

    sudo python -m incastlab.studies.shuffle_emulation --out docs/validation/shuffle

The kernel's runs are kept (``real/<point>.parquet``) and only missing ones are run again;
the simulator's are rerun every time (seconds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.result import Result
    from incastlab.scenario import Scenario

#: The article's fabric is slowed down this many times (rates ÷, times ×).
SCALE = 10
#: The article's fabric: one switch, 64 KB per port, 1 Gbps, 100 µs.
LINK_BPS = 1_000_000_000
BUFFER = "64KB"
RTT_US = 100
#: The article's RTOmin values, before scaling.
RTOS_MS = (200, 1)
#: The shuffle: 10 hosts, two reducers on each, every reducer fetching from the 9 other hosts.
HOSTS = 10
REDUCERS = 20


@dataclass(frozen=True)
class Shape:
    """One shuffle: its map outputs, how many each reducer fetches from every host, and how
    many hosts a reducer fetches from at once (mapred.reduce.parallel.copies; 0: all)."""

    output: int
    outputs: int
    copies: int
    about: str


#: The job model's default shuffle fetches 1.86 MB outputs (64 MiB map inputs over 36
#: reducers) 5 at once; its tuned one 14.6 MB outputs (512 MiB inputs) from every host at once;
#: 256 KB outputs are where the model's fetch-size table says incast bites. Each with the
#: outputs per host that make a run of 10-25 s at 100 Mbps.
SHAPES: dict[str, Shape] = {
    "default": Shape(1_858_045, 4, 5, "1.86 MB outputs, 5 copies (Hadoop's defaults)"),
    "tuned": Shape(14_619_883, 1, 0, "14.6 MB outputs, every host at once (tuned)"),
    "256KB": Shape(256_000, 16, 5, "256 KB outputs, 5 copies"),
}
SEEDS = tuple(range(1, 9))


@dataclass(frozen=True)
class Kernel:
    """How the kernel runs (sysctls set in every host's namespace, scenario keys both backends
    take) and the simulator's profile for it."""

    sysctls: dict[str, str]
    scenario: dict[str, Any]
    profile: str
    about: str


#: Today's Linux as it ships, and the same kernel brought nearer to the article's 2.6.28: no
#: RACK and no tail loss probe (both came with Linux 3.x and 4.x), an initial window of 3
#: (RFC 3390, as 2.6.28; 10 came with 3.0). What this kernel cannot take back: PRR (3.2; 2.6.28
#: halved the rate), HyStart (2.6.29), TCP Small Queues (3.6). The simulator runs the
#: classic profile (2009's TCP) with CUBIC for it.
KERNELS: dict[str, Kernel] = {
    "today": Kernel({}, {}, "linux", "as it ships (RACK-TLP, IW 10)"),
    "2009": Kernel(
        {"net.ipv4.tcp_recovery": "0", "net.ipv4.tcp_early_retrans": "0"},
        {"tcp.profile": "classic", "tcp.initial_window": 3},
        "classic",
        "without RACK-TLP, IW 3 (nearer 2.6.28)",
    ),
}
#: The shapes and seeds run on the 2009-like kernel: the two of Figure 6.
KERNEL_2009_SHAPES = ("default", "tuned")
KERNEL_2009_SEEDS = SEEDS[:5]
#: The article's kernel on its own fabric: a 1 ms RTOmin needs timers of HZ = 1000 (this
#: machine's 4 ms tick, slowed down 10 times, is 0.4 ms).
ARTICLE_KERNEL = {"tcp.timer_granularity": "1ms"}


@dataclass(frozen=True)
class Point:
    """One shuffle on one RTOmin (the article's value, before scaling) and seed."""

    shape: str
    rto_ms: int
    seed: int
    kernel: str = "today"

    @property
    def key(self) -> str:
        tail = "" if self.kernel == "today" else f"-{self.kernel}"
        return f"{self.shape}-rto{self.rto_ms}ms-seed{self.seed}{tail}"


def points(seeds: Sequence[int] = SEEDS) -> list[Point]:
    """Every point, seed after seed with both RTOmin values side by side, so that a drift of
    the machine over the kernel's runs (its load, its other tenants) falls on both alike; then
    the 2009-like kernel's."""
    today = [Point(s, r, seed) for seed in seeds for s in SHAPES for r in RTOS_MS]
    old = [
        Point(s, r, seed, "2009")
        for seed in seeds
        if seed in KERNEL_2009_SEEDS
        for s in KERNEL_2009_SHAPES
        for r in RTOS_MS
    ]
    return today + old


def scenario(point: Point, scale: int = SCALE, overrides: dict[str, Any] | None = None) -> Scenario:
    """The point's shuffle on the fabric slowed down ``scale`` times (1: the article's)."""
    from incastlab.scenario import apply_overrides, from_dict

    shape = SHAPES[point.shape]
    base = {
        "seed": point.seed,
        "topology": {
            "senders": HOSTS,
            "link": f"{LINK_BPS // scale}bps",
            "buffer": BUFFER,
            "rtt": f"{RTT_US * scale}us",
        },
        "tcp": {
            "profile": "linux",
            "congestion_control": "cubic",
            "rto_min": f"{point.rto_ms * scale}ms",
        },
        "workload": {
            "kind": "shuffle",
            "sru": f"{shape.output}B",
            "blocks": shape.outputs,
            "fanout_window": shape.copies,
            "reducers": REDUCERS,
        },
    }
    return from_dict(apply_overrides(base, {**KERNELS[point.kernel].scenario, **(overrides or {})}))


def sim_overrides(rtt_s: float, jitter_s: float = 0.0, kernel: str = "today") -> dict[str, Any]:
    """What the simulator is told about the testbed (as ``incast validate`` tells it): the
    measured RTT, the veths' timing noise (``jitter_s``, at most what the RTT allows), tbf's
    framing, the block protocol's 24-byte messages, the veths' NICs and ports, and the
    kernel's profile (:data:`KERNELS`) on this kernel's 4 ms tick."""
    from incastlab.studies.validation import PROFILES, testbed_overrides

    return {**testbed_overrides(rtt_s, jitter_s), **PROFILES[KERNELS[kernel].profile]}


def real_file(real_dir: Path, point: Point) -> Path:
    return real_dir / f"{point.key}.parquet"


def load_real(path: Path) -> Result:
    from incastlab.result.store import read_results

    (r,) = read_results(path)
    return r


def run_real(
    real_dir: Path,
    backend: Callable[[Kernel], Backend],
    say: Callable[[str], None],
    seeds: Sequence[int],
) -> list[str]:
    """Run every point the kernel has no stored run of, on ``backend(kernel)``; the failures,
    one line each."""
    from incastlab.studies.validation import run_missing

    real_dir.mkdir(parents=True, exist_ok=True)

    def summary(r: Result) -> str:
        rep = r.report
        return (
            f"{rep['duration'] / 1e12:.2f} s, {rep['timeouts']} timeouts, "
            f"{rep['drops']} drops, {rep['wall_s']:.0f} s wall"
        )

    failures = []
    for name, k in KERNELS.items():
        jobs = [
            (p.key, real_file(real_dir, p), scenario(p)) for p in points(seeds) if p.kernel == name
        ]
        failures += run_missing(jobs, backend(k), say, summary)
    return failures


@dataclass
class Run:
    """One point on the kernel and in the simulator (slowed down, and at the article's
    fabric), times in the article's seconds (the slowed-down ones divided by SCALE)."""

    point: Point
    real: Result
    sim: Result
    article: Result

    def seconds(self, which: str) -> float:
        r = getattr(self, which)
        scale = 1 if which == "article" else SCALE
        return float(r.report["duration"]) / 1e12 / scale

    def count(self, which: str, key: str) -> int:
        return int(getattr(self, which).report[key])

    def side(self, key: str) -> float:
        """A per-side count of the kernel's sockets (``map_rtos``, ``reducer_rtos``, ...);
        NaN where the kernel's TCP_INFO does not count timeouts."""
        sides = self.real.report["shuffle"].get("sides")
        return float(sides[key]) if sides else float("nan")


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
        "Generated by `python -m incastlab.studies.shuffle_emulation` (incastlab "
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


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m incastlab.studies.shuffle_emulation",
        description="What RTOmin 200 ms costs an all-to-all MapReduce shuffle, real Linux TCP "
        "(incast emulate, root) beside the simulator.",
    )
    p.add_argument(
        "--out",
        default="docs/validation/shuffle",
        help="directory for the README, the figure and the kernel's runs",
    )
    p.add_argument(
        "--seeds",
        default=",".join(map(str, SEEDS)),
        help="seeds of every point, comma-separated (e.g. 1,2)",
    )
    p.add_argument(
        "--skip-real", action="store_true", help="only the stored kernel runs (no root needed)"
    )
    a = p.parse_args(argv)
    from incastlab import simulate
    from incastlab.backends import get

    out = Path(a.out)
    try:
        seeds = [int(x) for x in a.seeds.split(",")]
    except ValueError:
        print(f"--seeds: expected integers such as 1,2, got {a.seeds!r}", file=sys.stderr)
        return 2
    real_dir = out / "real"
    if not a.skip_real:

        def emulation(k: Kernel) -> Backend:
            return get("emulate", sysctls=k.sysctls)

        for f in run_real(real_dir, emulation, print, seeds):
            print(f"failed: {f}", file=sys.stderr)
    from incastlab.studies.validation import testbed_jitter_s

    stored = {
        pt: load_real(real_file(real_dir, pt))
        for pt in points(seeds)
        if real_file(real_dir, pt).exists()
    }
    # The veths' timing noise, from every run's RTT probe (the testbed is the same for all).
    jitter = testbed_jitter_s(list(stored.values())) or 0.0
    runs = []
    for pt, real in stored.items():
        rtt = real.report["emulated"]["rtt_measured_s"] or 30e-6
        sim = simulate(scenario(pt, overrides=sim_overrides(rtt, jitter, pt.kernel)))
        article = simulate(scenario(pt, scale=1, overrides=ARTICLE_KERNEL))
        runs.append(Run(pt, real, sim, article))
    if not runs:
        print("no kernel runs stored: run without --skip-real, as root", file=sys.stderr)
        return 1
    plot(runs, out / "shuffle.png")
    print(write_readme(out, runs, jitter))
    return 0


if __name__ == "__main__":
    sys.exit(main())
