"""What the key-value store's study writes: the side-by-side table, the direction claims, the
cap's effects, the figure and the README (``incast validate kv``)."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from incastlab.validation.kv_points import (
    CAPS,
    DURATION,
    ENVELOPE,
    UTILIZATIONS,
    WARMUP,
    Row,
    envelope_file,
    load_real,
)


def envelope_table(real_dir: Path) -> list[str]:
    """The stored envelope probes: what the CPUs carried and how late the gets left."""
    lines = [
        "| hosts × link | offered at 50% | CPUs busy | gets late, p50 / p99 | utilization | "
        "get p50 |",
        "|---|---|---|---|---|---|",
    ]
    for hosts, link in ENVELOPE:
        path = envelope_file(real_dir, hosts, link)
        if not path.exists():
            continue
        r = load_real(path)
        kv, rep = r.report["kv"], r.report
        lag = rep["kv_run"]["issue_lag_us"]
        offered = hosts * r.link_bps * 0.5
        lines.append(
            f"| {hosts} × {link} | {offered / 1e6:,.0f} Mbps | "
            f"{rep['machine'].get('cpu_busy', math.nan):.0%} | "
            f"{lag['p50'] / 1e3:.1f} / {lag['p99'] / 1e3:.1f} ms | {kv['utilization']:.0%} | "
            f"{kv['latency_p50'] / 1e9:.0f} ms |"
        )
    return lines


def rising(values: Sequence[float]) -> float:
    """Share of successive steps that rise (ties count half): 1 when every step rises."""
    steps = list(itertools.pairwise(values))
    if not steps:
        return math.nan
    return sum(1.0 if b > a else 0.5 if b == a else 0.0 for a, b in steps) / len(steps)


def directions(rows: Sequence[Row]) -> dict[str, Any]:
    """The direction claims, per backend: drops and p99 rise with utilization (share of
    rising steps, uncapped and capped), and the cap's effect on drops and p99 per
    utilization (its sign on each backend, and how often the signs agree)."""
    out: dict[str, Any] = {}
    seeds = sorted({r.point.seed for r in rows})
    for b in ("emulate", "sim"):
        for seed in seeds:
            for cap in CAPS:
                series = sorted(
                    (r for r in rows if r.point.cap == cap and r.point.seed == seed),
                    key=lambda r: r.point.utilization,
                )
                for what, name in (("drops", "drops/s/host"), ("p99_ms", "get p99")):
                    who = "real" if b == "emulate" else "sim"
                    cap_name = "no cap" if cap == "off" else f"{cap} cap"
                    out[f"{who}: {name} rises with utilization ({cap_name}, seed {seed})"] = rising(
                        [r.figures(b)[what] for r in series]
                    )
    by = {(r.point.utilization, r.point.cap, r.point.seed): r for r in rows}
    agree = {"drops": 0, "p99_ms": 0}
    pairs = 0
    for u, seed in itertools.product(UTILIZATIONS, seeds):
        if (u, "off", seed) not in by or (u, CAPS[1], seed) not in by:
            continue
        pairs += 1
        for what in agree:
            signs = [
                math.copysign(
                    1,
                    by[(u, CAPS[1], seed)].figures(b)[what] - by[(u, "off", seed)].figures(b)[what],
                )
                for b in ("emulate", "sim")
            ]
            agree[what] += signs[0] == signs[1]
    out["cap effect, same sign on both (drops)"] = f"{agree['drops']} of {pairs}"
    out["cap effect, same sign on both (p99)"] = f"{agree['p99_ms']} of {pairs}"
    return out


def table(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| target | cap | seed | util real | util sim | drops/s/host real | sim | timeouts/s real "
        "| sim | p50 real | sim | p99 real | sim | gets | late p99 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(
        rows, key=lambda r: (CAPS.index(r.point.cap), r.point.utilization, r.point.seed)
    ):
        e, s = r.figures("emulate"), r.figures("sim")
        lines.append(
            f"| {r.point.utilization:.0%} | {r.point.cap} | {r.point.seed} | "
            f"{e['utilization']:.0%} | "
            f"{s['utilization']:.0%} | {e['drops']:.1f} | {s['drops']:.1f} | "
            f"{e['timeouts']:.1f} | {s['timeouts']:.1f} | {e['p50_ms']:.0f} ms | "
            f"{s['p50_ms']:.0f} ms | {e['p99_ms']:.0f} ms | {s['p99_ms']:.0f} ms | "
            f"{e['gets']:,} | {e['late_p99_ms']:.1f} ms |"
        )
    return lines


def ratios(rows: Sequence[Row]) -> list[str]:
    """The simulator over the kernel, median and range over points, per figure."""
    lines = ["| figure | sim / real, median | range |", "|---|---|---|"]
    for what, name in (
        ("utilization", "utilization"),
        ("drops", "drops/s/host"),
        ("p50_ms", "get p50"),
        ("p99_ms", "get p99"),
    ):
        rs = [
            r.figures("sim")[what] / r.figures("emulate")[what]
            for r in rows
            if r.figures("emulate")[what] > 0
        ]
        if rs:
            lines.append(f"| {name} | {statistics.median(rs):.2f} | {min(rs):.2f}–{max(rs):.2f} |")
    return lines


def drops_verdict(rows: Sequence[Row]) -> str:
    """How far the simulator's drop counts are from the kernel's, said plainly."""
    rs = [
        r.figures("sim")["drops"] / r.figures("emulate")["drops"]
        for r in rows
        if r.figures("emulate")["drops"] > 0
    ]
    if not rs:
        return "The kernel dropped nothing at any point."
    med, hi = statistics.median(rs), max(rs)
    verdict = "more than 2× off" if hi > 2 or hi < 0.5 else "within 2×"
    return (
        f"Drop counts: the simulator drops {med:.2f}× the kernel's frames (median; at most "
        f"{hi:.2f}×), {verdict}. The direction is shared, but the simulator's counts are "
        "not the kernel's."
    )


def seed_spread(rows: Sequence[Row]) -> str:
    """How much a second seed moves each backend's figures at the same point: the yardstick
    for the cap's effects."""
    groups: dict[tuple[float, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.point.utilization, r.point.cap), []).append(r)
    parts = []
    for b, who in (("emulate", "the kernel's"), ("sim", "the simulator's")):
        for what, name in (("drops", "drops/s/host"), ("p99_ms", "p99")):
            spreads = [
                (max(v) - min(v)) / statistics.mean(v)
                for g in groups.values()
                if len(g) > 1 and statistics.mean(v := [r.figures(b)[what] for r in g]) > 0
            ]
            if spreads:
                parts.append(f"{who} {name} by {statistics.median(spreads):.0%}")
    if not parts:
        return "One seed per point: how much another seed moves a figure is not measured here."
    return (
        "Between seeds at the same point (range over mean, median over points), "
        + ", ".join(parts)
        + ": a cap effect smaller than that is noise."
    )


def cap_effects(rows: Sequence[Row]) -> list[str]:
    """The 80% cap against no cap at each target, on each backend: change in drops, p50
    and p99."""
    by = {(r.point.utilization, r.point.cap, r.point.seed): r for r in rows}
    lines = [
        "| target | seed | drops real | drops sim | p50 real | p50 sim | p99 real | p99 sim |",
        "|---|---|---|---|---|---|---|---|",
    ]
    seeds = sorted({r.point.seed for r in rows})
    for u, seed in itertools.product(UTILIZATIONS, seeds):
        if (u, "off", seed) not in by or (u, CAPS[1], seed) not in by:
            continue
        cells = []
        for what in ("drops", "p50_ms", "p99_ms"):
            for b in ("emulate", "sim"):
                off = by[(u, "off", seed)].figures(b)[what]
                on = by[(u, CAPS[1], seed)].figures(b)[what]
                change = on / off - 1 if off else math.nan
                # Below half a percent is shown as no change (not "-0%").
                cells.append("-" if not off else "0%" if abs(change) < 0.005 else f"{change:+.0%}")
        lines.append(f"| {u:.0%} | {seed} | " + " | ".join(cells) + " |")
    return lines


def plot(rows: Sequence[Row], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from incastlab.plot import COLORS, save_figure

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    for what, ax, label in (
        ("drops", axes[0], "drops per second per host"),
        ("p99_ms", axes[1], "p99 get latency (ms)"),
    ):
        for k, b in enumerate(("sim", "emulate")):
            for cap, style in zip(CAPS, ("-", "--"), strict=True):
                # Each target's mean over seeds (its measured utilization too).
                targets = sorted({r.point.utilization for r in rows if r.point.cap == cap})
                if not targets:
                    continue
                at = [
                    [r for r in rows if r.point.cap == cap and r.point.utilization == u]
                    for u in targets
                ]
                x = [statistics.mean(100 * r.figures(b)["utilization"] for r in g) for g in at]
                y = [statistics.mean(r.figures(b)[what] for r in g) for g in at]
                name = "simulator" if b == "sim" else "real Linux TCP"
                cap_label = "no cap" if cap == "off" else f"{cap} cap"
                ax.plot(
                    x,
                    y,
                    style,
                    marker="o" if b == "emulate" else "s",
                    color=COLORS[k],
                    lw=1.8,
                    ms=5,
                    label=f"{name}, {cap_label}",
                )
        ax.set_xlabel("average receive utilization (%)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def write_readme(
    out: Path, rows: Sequence[Row], base: Path, link: str, notes: dict[str, Any]
) -> Path:
    d = directions(rows)
    real0 = rows[0].real.report
    seed_list = ", ".join(str(x) for x in sorted({r.point.seed for r in rows}))
    lines = [
        "# The key-value store's incast: real Linux TCP beside the simulator",
        "",
        f"The cluster of `{base.as_posix()}` (20 hosts, every host a coordinator and a replica, "
        "R = 3, 100 KB values, a get complete at all 3 replies, CUBIC, initial window 3, RTOmin "
        "200 ms, 125 KB per switch port) with its links at "
        f"{link}, at target utilizations {', '.join(f'{u:.0%}' for u in UTILIZATIONS)}, "
        "without and with every host's egress capped at 80% of its link (tbf on the NICs). "
        f"The kernel: {real0['emulated']['kernel']['release']}, HZ = "
        f"{real0['emulated']['kernel']['hz']}. Each point runs the same plan of gets "
        f"(seeds {seed_list}) on both backends; {DURATION} of arrivals of which the first "
        f"{WARMUP} are not measured.",
        "",
        "Regenerate (the kernel's runs are kept under `real/`; a rerun runs only the missing "
        "ones, and the simulator's every time):",
        "",
        "```sh",
        "sudo incast validate kv --out docs/validation/kv --seeds " + seed_list.replace(", ", ","),
        "```",
        "",
        "![kv](kv.png)",
        "",
        "## Scale",
        "",
        "The article's cluster runs 1 Gbps links. Here every rate is divided and every time "
        "multiplied by the same factor while every size is kept: the values, the windows and "
        "the buffer in bytes are the article setting's, the gets per second per host fall by "
        "the factor at the same utilization (the simulator's rate rule), and a 100 KB reply "
        "takes the factor longer. The emulated switch has no shared buffer, so each port "
        "has the 2.5 MB of the 1 Gbps experiment's shared buffer divided among the 20 ports "
        "(125 KB). Two things do not scale: RTOmin stays 200 ms (a timeout costs less "
        "against gets that last longer), and the RTT is the testbed's, tens of µs (no netem).",
        "",
        "## The CPU envelope",
        "",
        *notes.get("envelope", []),
        "",
        "## Side by side",
        "",
        "Utilization is measured (bytes each switch port sent, as a share of the link, "
        "averaged over hosts); drops are the switch ports' (the kernel: tbf drops, "
        "`tc -s qdisc`); timeouts are all hosts' together (the kernel: TcpExt.TCPTimeouts).",
        "",
        *table(rows),
        "",
        "The simulator over the kernel, over all points:",
        "",
        *ratios(rows),
        "",
        drops_verdict(rows),
        "",
        "## Direction",
        "",
        "Share of successive utilization steps over which the figure rises (1 = always), and "
        "whether the cap moves a figure the same way on both backends:",
        "",
        "| claim | value |",
        "|---|---|",
        *[f"| {k} | {v if isinstance(v, str) else f'{v:.2f}'} |" for k, v in d.items()],
        "",
        "The 80% cap against no cap, at each target:",
        "",
        *cap_effects(rows),
        "",
        seed_spread(rows),
        "",
    ]
    path = out / "README.md"
    path.write_text("\n".join(lines))
    return path


#: Why the sweep runs where it does (the probes' table above it says how far off the rest are).
ENVELOPE_TEXT = [
    "Every frame crosses two tbf qdiscs, a bridge and two veths in softirq, one segment per "
    "packet (no GSO, so that the switch ports drop frames, not bursts). 20 hosts at 100 Mbps "
    "offer 1 Gbps at 50%: the recording host's two cores, shared with other work, fall "
    "behind (gets leave hundreds of milliseconds late and queue up behind each other). The "
    "sweep runs 20 hosts at 25 Mbps (a factor of 40 from the article's gigabit), where gets "
    "leave within milliseconds of their planned times against get latencies above 100 ms.",
]
