"""Check of Swift's large-scale incast (Kumar et al., SIGCOMM 2020, §5.3 and Table 3): a
5000-to-1 incast with and without windows below one packet.

Two sweeps of one run each: ``swift`` (Swift as the paper runs it, windows down to 0.001
packets, paced) and ``no_pacing`` (windows floored at one packet, Table 3's "Swift w/o
cwnd < 1"). The columns read: ``drops``, ``goodput_bps``, ``link_bps``, ``app_bytes``,
``timeouts``, ``bottleneck_max_bytes``, ``flow_completion_s`` and the scenario's
``swift.mtu``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.plot import COLORS, save_figure
from incastlab.plot import sweep as sweep_plot
from incastlab.reproductions.checks.eqds import jain, rates_mbps
from incastlab.reproductions.findings import Findings, Row, Runs, Within, md_row


def _loss(r: Row) -> float:
    """Drops per data packet the read needs (its bytes in packets of ``swift.mtu``)."""
    packets = float(r["app_bytes"]) / float(r.get("swift.mtu") or 4000)
    return float(r["drops"] or 0) / max(packets, 1.0)


def _gbps(r: Row) -> float:
    return float(r["goodput_bps"]) / 1e9


def _queue_us(r: Row) -> float:
    """The receiver's peak queue as time at its link's rate, µs."""
    return float(r["bottleneck_max_bytes"]) * 8 / float(r["link_bps"]) * 1e6


def _jain(r: Row) -> float:
    """Jain's index of the flows' mean throughputs (each flow's bytes over its completion)."""
    return jain(rates_mbps(r))


def _pct(x: float) -> str:
    return f"{100 * x:.4g}%"


def swift_incast(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    import matplotlib.pyplot as plt

    f = Findings()
    paced, floored = runs["swift"][0], runs["no_pacing"][0]
    link = float(paced["link_bps"]) / 1e9
    f.number(
        "Swift keeps a 5000-to-1 incast near line rate (Table 3: 49.5 Gbps of 50)",
        _gbps(paced),
        paper["throughput_gbps"],
        Within(rel=0.1),
        direction=_gbps(paced) > _gbps(floored),
        shown=lambda x: f"{x:.1f} Gbps",
    )
    f.number(
        "Swift's loss is almost zero (Table 3: 0.0003%)",
        _loss(paced),
        paper["loss"],
        Within(factor=2),
        direction=_loss(paced) * 10 <= _loss(floored),
        shown=_pct,
    )
    f.number(
        "Without cwnd < 1 the loss is high (Table 3: 28.7%)",
        _loss(floored),
        paper["no_pacing_loss"],
        Within(factor=2),
        direction=_loss(floored) > _loss(paced),
        shown=_pct,
    )
    f.number(
        "Without cwnd < 1 the throughput collapses (Table 3: 8.7 Gbps)",
        _gbps(floored),
        paper["no_pacing_throughput_gbps"],
        Within(factor=2),
        direction=_gbps(floored) < _gbps(paced),
        shown=lambda x: f"{x:.1f} Gbps",
    )
    f.number(
        "Swift shares the link fairly among the 5000 flows (Figure 21: Jain's index 0.91)",
        _jain(paced),
        paper["jain"],
        Within(rel=0.1),
        direction=_jain(paced) > _jain(floored),
        shown=lambda x: f"{x:.3f}",
        where=" (of the flows' mean throughputs over their lives; the paper's: a snapshot)",
    )
    lines = [
        "| run | throughput | paper | dropped | paper | peak queue | paper's average RTT | "
        "Jain's index | timeouts |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r, key in (("Swift", paced, ""), ("Swift w/o cwnd < 1", floored, "no_pacing_")):
        cells = [
            f"{_gbps(r):.1f} Gbps",
            f"{paper[key + 'throughput_gbps']:g} Gbps",
            _pct(_loss(r)),
            _pct(paper[key + "loss"]),
            f"{_queue_us(r):.0f} µs",
            f"{paper[key + 'rtt_us']:g} µs",
            f"{_jain(r):.3f}",
        ]
        lines.append(md_row(name, *cells, int(r["timeouts"] or 0)))
    machines, per = int(paced["senders"]), int(paced.get("workload.tasks") or 1)
    size = float(paced["app_bytes"]) / (machines * per) / 1e6
    f.table = "\n".join(lines) + (
        f"\n\n{machines * per} flows of {size:g} MB ({machines} machines × {per}) into one "
        f"{link:g} Gbps host. Dropped: "
        "drops per data packet of the read (4000 B packets). Peak queue: the receiver's port "
        "at its most, as time at the link's rate (its 4 MB buffer is 640 µs); incastlab "
        "reports no average RTT, so the paper's is shown beside it, not compared."
    )
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    names = ["Swift", "w/o cwnd < 1"]
    pairs = [
        (
            axes[0],
            [_gbps(paced), _gbps(floored)],
            [paper["throughput_gbps"], paper["no_pacing_throughput_gbps"]],
            "throughput (Gbps)",
            "Throughput",
        ),
        (
            axes[1],
            [100 * _loss(paced), 100 * _loss(floored)],
            [100 * paper["loss"], 100 * paper["no_pacing_loss"]],
            "dropped (% of packets)",
            "Loss",
        ),
    ]
    for ax, ours, theirs, label, title in pairs:
        xs = range(len(names))
        ax.bar([x - 0.2 for x in xs], ours, 0.4, color=COLORS[0], label="incastlab")
        ax.bar([x + 0.2 for x in xs], theirs, 0.4, color=COLORS[1], label="paper (Table 3)")
        ax.set_xticks(list(xs), names)
        ax.set_ylabel(label)
        sweep_plot.style_axes(ax, title)
    axes[1].set_yscale("log")  # the paper's 0.0003% beside 28.7%
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    f.figures.append(save_figure(fig, out / "swift_incast.png").name)
    return f
