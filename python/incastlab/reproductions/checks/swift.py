"""Check of Swift's large-scale incast (Kumar et al., SIGCOMM 2020): loss, throughput and
queueing as the incast grows to thousands of flows.

One sweep (``swift.toml``) of Swift runs, one row per fan-in. The columns read: ``drops``,
``goodput_bps``, ``link_bps``, ``app_bytes``, ``timeouts``, ``bottleneck_max_bytes`` and the
scenario's ``swift.mtu``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.plot import COLORS, save_figure
from incastlab.plot import sweep as sweep_plot
from incastlab.reproductions.findings import Findings, Row, Runs, md_row


def _loss(r: Row) -> float:
    """Drops per data packet the read needs (its bytes in packets of ``swift.mtu``)."""
    packets = float(r["app_bytes"]) / float(r.get("swift.mtu") or 4000)
    return float(r["drops"] or 0) / max(packets, 1.0)


def _throughput(r: Row) -> float:
    """Goodput over the receiver's link rate."""
    return float(r["goodput_bps"]) / float(r["link_bps"])


def _queue_us(r: Row) -> float:
    """The receiver's peak queue as time at its link's rate, µs."""
    return float(r["bottleneck_max_bytes"]) * 8 / float(r["link_bps"]) * 1e6


def swift_incast(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    import matplotlib.pyplot as plt

    f = Findings()
    rows = {int(r["senders"]): r for r in runs["swift"]}
    ns = sorted(rows)
    loss = {n: _loss(rows[n]) for n in ns}
    tput = {n: _throughput(rows[n]) for n in ns}
    queue = {n: _queue_us(rows[n]) for n in ns}
    worst = max(ns, key=lambda n: loss[n])
    f.claim(
        f"Near-zero loss from {ns[0]} to {ns[-1]} flows",
        loss[worst] <= paper["loss"],
        f"at most {100 * loss[worst]:.3f}% of the data packets dropped (N = {worst})",
        tolerance=f"at most {100 * paper['loss']:g}% at every N",
        direction=loss[worst] <= 4 * paper["loss"],
    )
    low = min(ns, key=lambda n: tput[n])
    f.claim(
        "The receiver's link stays near line rate",
        tput[low] >= paper["throughput"],
        f"at least {100 * tput[low]:.1f}% of 100 Gbps (N = {low}); "
        + ", ".join(f"{100 * tput[n]:.1f}% at {n}" for n in ns),
        tolerance=f"at least {100 * paper['throughput']:g}% at every N",
        direction=tput[low] >= 0.7,
    )
    bound = paper["queue_over_target"] * paper["target_us"]
    deep = max(ns, key=lambda n: queue[n])
    f.claim(
        "The delay target bounds the receiver's queue",
        queue[deep] <= bound,
        f"peak {queue[deep]:.0f} µs of queue (N = {deep}); "
        + ", ".join(f"{queue[n]:.0f} µs at {n}" for n in ns),
        tolerance=f"at most {paper['queue_over_target']:g} × the largest fabric target "
        f"({paper['target_us']:g} µs) = {bound:.0f} µs at every N",
        direction=all(queue[n] <= bound for n in ns[:-1]),
    )
    lines = [
        "| N | dropped | goodput / line | peak queue | timeouts |",
        "|---|---|---|---|---|",
    ]
    for n in ns:
        r = rows[n]
        cells = [f"{100 * loss[n]:.3f}%", f"{100 * tput[n]:.1f}%", f"{queue[n]:.0f} µs"]
        lines.append(md_row(n, *cells, int(r["timeouts"] or 0)))
    f.table = "\n".join(lines) + (
        "\n\nDropped: drops per data packet of the 625 MB read (4000 B packets). Peak queue: "
        "the receiver's port at its most, as time at 100 Gbps (its 4 MB buffer is 320 µs)."
    )
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    panels = [
        (axes[0], [100 * tput[n] for n in ns], "goodput / line rate (%)", "Throughput"),
        (axes[1], [100 * loss[n] for n in ns], "dropped (% of packets)", "Loss"),
        (axes[2], [queue[n] for n in ns], "peak queue (µs at 100 Gbps)", "Queueing"),
    ]
    for i, (ax, ys, label, title) in enumerate(panels):
        ax.plot(ns, ys, "o-", color=COLORS[i], lw=1.8)
        ax.set_xscale("log")
        ax.set_xlabel("flows")
        ax.set_ylabel(label)
        sweep_plot.style_axes(ax, title)
    axes[2].axhline(paper["target_us"], color="0.4", lw=0.8, ls="--")
    fig.tight_layout()
    f.figures.append(save_figure(fig, out / "swift_incast.png").name)
    return f
