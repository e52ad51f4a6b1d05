"""The mitigations of ``incast mitigate`` as one sorted bar chart: goodput (left) and the
99th-percentile block time (right), one colour per mitigation, best goodput on top."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from incastlab.plot import save_figure, scenario_line
from incastlab.plot.ticks import log_axis

if TYPE_CHECKING:
    from incastlab.studies.mitigate import Ranking


def distinct_colors(n: int) -> list[tuple[float, float, float, float]]:
    """``n`` colours no two alike and none grey (grey is the baseline's): tab20 without its
    greys holds 18; beyond, hues spread evenly."""
    if n <= 18:
        cmap = plt.get_cmap("tab20")
        # Dark shades first, then the light ones: neighbours in the list differ most.
        order = [i for i in (*range(0, 20, 2), *range(1, 20, 2)) if i not in (14, 15)]
        return [cmap(order[i]) for i in range(n)]
    cmap = plt.get_cmap("hsv")
    return [cmap(i / n) for i in range(n)]


def ranking_bars(ranking: Ranking, path: str | Path) -> Path:
    """One bar per mitigation that ran, sorted by mean goodput (best on top), its colour the
    same in both panels; the baseline hatched, with a dashed line at its value; with several
    sender counts each count's goodput as a marker on the bar."""
    ranked = ranking.ranked
    names = [o.mitigation.name for o in ranked]
    # The baseline in grey, every mitigation in a colour of its own.
    palette = iter(distinct_colors(len(ranked) - 1))
    colors = [(0.6, 0.6, 0.6, 1.0) if n == "baseline" else next(palette) for n in names]
    ns = [r.senders for r in ranked[0].results]
    height = 0.34 * len(ranked) + 1.9
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, height), sharey=True)
    fig.subplots_adjust(
        left=0.16, right=0.98, top=1 - 0.95 / height, bottom=0.6 / height, wspace=0.06
    )
    ys = list(range(len(ranked)))[::-1]
    good = [o.mean_goodput / 1e6 for o in ranked]
    p99 = [1e3 * o.block_quantile(0.99) for o in ranked]
    hatch = ["//" if n == "baseline" else "" for n in names]
    ax.barh(ys, good, color=colors, hatch=hatch, edgecolor="white", lw=0.5)
    ax2.barh(ys, p99, color=colors, hatch=hatch, edgecolor="white", lw=0.5)
    if len(ns) > 1:
        markers = "ov^sD<>p*h"
        for k, n in enumerate(ns):
            ax.scatter(
                [o.results[k].goodput_bps / 1e6 for o in ranked],
                ys,
                marker=markers[k % len(markers)],
                s=16,
                color="0.15",
                zorder=3,
                label=f"N = {n}",
            )
        ax.legend(frameon=False, fontsize=8, loc="lower right")
    base = ranking.baseline
    ax.axvline(base.mean_goodput / 1e6, color="0.3", ls="--", lw=1)
    ax2.axvline(1e3 * base.block_quantile(0.99), color="0.3", ls="--", lw=1)
    link = ranked[0].results[0].link_bps / 1e6
    ax.axvline(link, color="0.6", lw=1)
    ax.set_xlim(0, link * 1.05)
    ax.set_yticks(ys, names)
    ax.set_xlabel("goodput (Mbps)" + (", mean over the sender counts" if len(ns) > 1 else ""))
    ax2.set_xscale("log")
    log_axis(ax2.xaxis)
    ax2.set_xlabel("99th-percentile block time (ms), all blocks")
    for a in (ax, ax2):
        a.grid(alpha=0.3, axis="x", which="both")
        a.spines[["top", "right"]].set_visible(False)
    counts = ", ".join(str(n) for n in ns)
    ax.set_title("Incast mitigations, best goodput first", loc="left", fontweight="bold", pad=30)
    first = base.results[0]
    ax.text(
        0,
        1.02,
        f"{scenario_line(first)} · N = {counts}\n"
        "hatched and dashed: the scenario as given (baseline); grey line: the link",
        transform=ax.transAxes,
        fontsize=8,
        color="0.35",
        va="bottom",
    )
    return save_figure(fig, path)
