"""Figures: goodput versus the number of senders, the picture of incast collapse."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, MaxNLocator

from incastlab.result import Result
from incastlab.units import format_rate, format_size, format_time

COLORS = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989"]


def _subtitle(r: Result, omit: str = "") -> str:
    """One line describing the scenario; ``omit`` names a key that varies between series."""
    s = r.scenario
    t, tcp, w = s["topology"], s["tcp"], s["workload"]
    if w["kind"] == "sync_read":
        unit = f"SRU {format_size(w['sru'])}" if w["sru"] else f"block {format_size(w['block'])}"
        what = f"synchronized reads, {unit}, {w['blocks']} blocks"
    else:
        what = f"incast, {format_size(w['flow_size'])} per flow"
    buf = t["buffer"]
    buffer = format_size(buf["bytes"]) if buf["bytes"] else f"{buf['packets']} pkt"
    parts = {
        "workload": what,
        "link": format_rate(t["receiver_link"]),
        "rtt": f"RTT {format_time(t['rtt'])}",
        "buffer": f"{buffer}/port",
        "rto_min": f"RTOmin {format_time(tcp['rto_min'])}",
    }
    return " · ".join(v for k, v in parts.items() if k != omit)


def goodput_vs_senders(
    series: Sequence[tuple[str, Sequence[Result]]],
    path: str | Path,
    *,
    title: str = "Incast goodput collapse",
    varied: str = "",
) -> Path:
    """Goodput (top) and block or flow completion time (bottom) against senders, one line
    per labelled series."""
    fig, (ax, ax2) = plt.subplots(
        2, 1, figsize=(8, 6.4), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    link = None
    for i, (label, results) in enumerate(series):
        pts = sorted(results, key=lambda r: r.senders)
        if not pts:
            continue
        color = COLORS[i % len(COLORS)]
        n = [r.senders for r in pts]
        ax.plot(n, [r.goodput_bps / 1e6 for r in pts], "o-", color=color, lw=2, ms=5, label=label)
        link = pts[0].link_bps
        times = []
        for r in pts:
            b = r.block_times_s or [x for x in r.flow_completion_s if x is not None]
            times.append(1e3 * (sum(b) / len(b) if b else float("nan")))
        ax2.plot(n, times, "o-", color=color, lw=1.5, ms=4)
        to = [r.timeouts for r in pts]
        if any(to):
            hit = [(x, y) for x, y, k in zip(n, times, to, strict=True) if k > 0]
            ax2.scatter(*zip(*hit, strict=True), marker="x", color=color, s=30, zorder=3)
    if link:
        ax.axhline(link / 1e6, color="0.4", ls="--", lw=1)
        ax.text(
            ax.get_xlim()[1], link / 1e6, " link", va="center", ha="left", color="0.4", fontsize=9
        )
        ax.set_ylim(0, link / 1e6 * 1.08)
    ax.set_ylabel("goodput (Mbps)")
    ax.set_title(title, fontsize=13, loc="left", fontweight="bold", pad=20)
    first = next((r for _, rs in series for r in rs), None)
    if first is not None:
        ax.text(
            0, 1.025, _subtitle(first, varied), transform=ax.transAxes, fontsize=8.5, color="0.35"
        )
    ax.grid(alpha=0.3)
    if len(series) > 1 or series[0][0]:
        ax.legend(frameon=False)
    ax2.set_yscale("log")
    ax2.set_ylabel("mean block / flow time (ms)\n× = with timeouts", fontsize=9)
    ax2.set_xlabel("number of senders")
    ax2.grid(alpha=0.3, which="both")
    ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax2.xaxis.set_major_locator(MaxNLocator(integer=True))
    for a in (ax, ax2):
        a.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=130)
    plt.close(fig)
    return p
