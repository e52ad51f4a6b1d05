"""Check of the NDP paper's incast figures (20a, 20b): completion over optimal on a fat tree."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from incastlab.plot import COLORS, save_figure
from incastlab.plot import sweep as sweep_plot
from incastlab.reproductions.findings import Findings, Row, Runs, md_row


def _overhead(r: Row) -> float:
    """The last flow's completion over optimal, minus one (stored with every point)."""
    return float(r["fct_overhead"])


def ndp_incast_scaling(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    import matplotlib.pyplot as plt

    f = Findings()
    ndp: dict[int, dict[int, Row]] = defaultdict(dict)
    for r in runs["ndp"]:
        ndp[r["params"]["ndp.initial_window"]][r["senders"]] = r
    tcp = {r["senders"]: r for r in runs["tcp"]}
    few = paper["few_percent"]
    slow = [n for n in sorted(ndp[1]) if n < paper["iw1_slow_below"]]
    worst_slow = min(_overhead(ndp[1][n]) for n in slow)
    iw10_small = max(_overhead(ndp[10][n]) for n in slow)
    f.claim(
        f"IW 1 cannot fill the receiver's link below {paper['iw1_slow_below']} senders",
        worst_slow > 0.05 and worst_slow > 3 * iw10_small,
        f"{100 * _overhead(ndp[1][slow[0]]):.0f}% over optimal at N = {slow[0]}, falling to "
        f"{100 * worst_slow:.0f}% at N = {slow[-1]} (IW 10: at most {100 * iw10_small:.1f}%)",
        tolerance="more than 5% over optimal and 3× IW 10's at every N below "
        f"{paper['iw1_slow_below']}",
        direction=worst_slow > iw10_small,
    )
    for iw in (10, 23):
        big = {n: _overhead(r) for n, r in ndp[iw].items() if n >= 8}
        worst = max(big.values())
        at = max(big, key=lambda n: big[n])
        f.claim(
            f"IW {iw} stays within a few percent of optimal from 8 to 8000 senders",
            worst <= few,
            f"at most {100 * worst:.2f}% (N = {at}); {100 * big[max(big)]:.2f}% at N = {max(big)}",
            tolerance=f"at most {100 * few:.0f}% over optimal at every N ≥ 8",
            direction=worst <= 2 * few,
        )
    ndp10 = ndp[10]
    fails = [
        n
        for n in sorted(tcp)
        if n >= 64 and _overhead(tcp[n]) > 10 * max(_overhead(ndp10[n]), 0.01)
    ]
    f.claim(
        "TCP on the same fat tree fails where NDP holds (64 senders on)",
        fails == [n for n in sorted(tcp) if n >= 64],
        f"TCP at N = 8000: {_overhead(tcp[8000]) + 1:.3g}× optimal; NDP IW 10: "
        f"{_overhead(ndp10[8000]) + 1:.4f}×",
        tolerance="TCP's overhead over 10× NDP IW 10's at every N ≥ 64",
        direction=bool(fails),
    )
    lines = ["| N | NDP IW 1 | IW 10 | IW 23 | TCP |", "|---|---|---|---|---|"]
    for n in sorted(tcp):
        cells = [
            f"{100 * _overhead(ndp[iw][n]):+.2f}%" if n in ndp[iw] else "-" for iw in (1, 10, 23)
        ]
        lines.append(md_row(n, *cells, f"{100 * _overhead(tcp[n]):+.3g}%"))
    f.table = "\n".join(lines) + (
        "\n\nOverhead: the last flow's completion over optimal (N·270000·8 / 10 Gbps plus the "
        "unloaded latency of one packet), minus one. One packet time is 0.27% of N = 1's optimal. "
        "A single flow beats the yardstick by up to 2%: the yardstick counts store-and-forward "
        "of a full packet at every hop."
    )
    # Figure 20a: overhead against N.
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    for i, iw in enumerate((1, 10, 23)):
        ns = sorted(ndp[iw])
        ax.plot(
            ns,
            [100 * _overhead(ndp[iw][n]) for n in ns],
            "-",
            color=COLORS[i],
            lw=1.6,
            label=f"NDP, IW {iw}",
        )
    ax.set_xscale("log")
    ax.set_ylim(-5, 30)
    ax.axhline(0, color="0.4", lw=0.8)
    ax.set_xlabel("senders")
    ax.set_ylabel("last flow's completion over optimal (%)")
    sweep_plot.style_axes(
        ax, "NDP incast: completion overhead", "IW 1 is off the scale below 8 senders"
    )
    ax.legend(frameon=False, fontsize=9)
    ns = sorted(tcp)
    ax2.plot(
        ns,
        [_overhead(tcp[n]) + 1 for n in ns],
        "o-",
        color=COLORS[3],
        lw=1.8,
        label="TCP, RTOmin 1 ms",
    )
    ax2.plot(
        ns, [_overhead(ndp10[n]) + 1 for n in ns], "o-", color=COLORS[1], lw=1.8, label="NDP, IW 10"
    )
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("senders")
    ax2.set_ylabel("last completion / optimal")
    sweep_plot.style_axes(ax2, "Against TCP on the same fat tree")
    ax2.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    f.figures.append(save_figure(fig, out / "incast_sensitivity.png").name)
    # Figure 20b: retransmissions per packet by cause.
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), sharey=True)
    for ax, iw in zip(axes, (1, 10, 23), strict=True):
        ns = sorted(ndp[iw])
        for j, (key, name) in enumerate(
            (
                ("ndp_retx_bounce", "bounce"),
                ("ndp_retx_nack", "NACK"),
                ("ndp_retx_timeout", "timeout"),
            )
        ):
            per = [ndp[iw][n][key] / (n * 30) for n in ns]
            ax.plot(ns, per, "-", color=COLORS[j], lw=1.6, label=name)
        ax.set_xscale("log")
        ax.set_xlabel("senders")
        sweep_plot.style_axes(ax, f"IW {iw}")
    axes[0].set_ylabel("retransmissions per packet")
    axes[0].legend(frameon=False, fontsize=9)
    fig.tight_layout()
    f.figures.append(save_figure(fig, out / "incast_overhead.png").name)
    return f
