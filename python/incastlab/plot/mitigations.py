"""The mitigations of ``incast mitigate`` as one sorted bar chart, one colour per mitigation,
the baseline grey and hatched: for TCP goodput and the 99th-percentile block time, best goodput
on top; for RDMA (RoCE) the last flow's completion, the time links spent paused and the flows
left unfinished, earliest last flow on top."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from incastlab.plot import save_figure, scenario_line
from incastlab.plot.ticks import log_axis

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from incastlab.studies.mitigate import Ranking
    from incastlab.studies.mitigate_rdma import RdmaRanking


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


def _time_unit(values: list[float]) -> tuple[float, str]:
    """A scale and unit name that writes the largest of ``values`` (seconds) readably."""
    top = max(values, default=0.0)
    for scale, unit in ((1.0, "s"), (1e3, "ms"), (1e6, "µs")):
        if top * scale >= 1:
            return scale, unit
    return 1e9, "ns"


def _panel(
    ax: Axes,
    ys: list[int],
    values: list[float | None],
    style: dict[str, Any],
    *,
    base: float | None,
    label: str,
) -> None:
    """Bars of ``values``, each labelled with its value ("n/a": not measured), the baseline's
    a dashed line. Values over more than a decade (a lossy remedy's retransmissions beside a
    lossless one's microseconds) go on a log axis, where every bar stays readable."""
    drawn = [v if v is not None else 0.0 for v in values]
    positive = [v for v in drawn if v > 0]
    log = len(positive) > 1 and max(positive) > 10 * min(positive)
    if log:
        ax.set_xscale("log")
        log_axis(ax.xaxis)
        ax.set_xlim(min(positive) / 2, max(positive) * 3)
    else:
        ax.set_xlim(0, max(drawn, default=0.0) * 1.15 or 1.0)
        whole = all(v.is_integer() for v in drawn)  # counts: no tick at 0.2 of a flow
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=whole))
    ax.barh(ys, drawn, **style)
    left = ax.get_xlim()[0]
    for y, v, at in zip(ys, values, drawn, strict=True):
        text = "n/a" if v is None else f"{v:,.3g}"
        ax.text(max(at, left), y, f" {text}", va="center", fontsize=7, color="0.25")
    if base is not None and (base > 0 or not log):
        ax.axvline(base, color="0.3", ls="--", lw=1)
    ax.set_xlabel(f"{label[:-1]}, log scale)" if log and label.endswith(")") else label)
    ax.grid(alpha=0.3, axis="x", which="both" if log else "major")
    ax.spines[["top", "right"]].set_visible(False)


def rdma_ranking_bars(ranking: RdmaRanking, path: str | Path) -> Path:
    """One bar per RDMA remedy that ran, in the ranking's order (earliest last flow on top):
    the last flow's completion, the time the links spent paused (PFC, summed over the links)
    and the flows left unfinished, each a mean over the sender counts; the baseline grey and
    hatched, with a dashed line at its value."""
    ranked, base = ranking.ranked, ranking.baseline
    names = [o.remedy.name for o in ranked]
    palette = iter(distinct_colors(len(ranked) - 1))
    colors = [(0.6, 0.6, 0.6, 1.0) if n == "baseline" else next(palette) for n in names]
    hatch = ["//" if n == "baseline" else "" for n in names]
    style = {"color": colors, "hatch": hatch, "edgecolor": "white", "lw": 0.5}
    height = 0.34 * len(ranked) + 1.9
    fig, axes = plt.subplots(1, 3, figsize=(12, height), sharey=True)
    fig.subplots_adjust(
        left=0.11, right=0.98, top=1 - 0.95 / height, bottom=0.6 / height, wspace=0.1
    )
    ys = list(range(len(ranked)))[::-1]

    def scaled(v: float | None, k: float) -> float | None:
        return None if v is None else v * k

    last, paused = [o.last_s for o in ranked], [o.paused_s for o in ranked]
    k, unit = _time_unit([v for v in last if v is not None])
    pk, p_unit = _time_unit([v for v in paused if v is not None])
    _panel(
        axes[0],
        ys,
        [scaled(v, k) for v in last],
        style,
        base=scaled(base.last_s, k),
        label=f"last flow's completion ({unit})",
    )
    _panel(
        axes[1],
        ys,
        [scaled(v, pk) for v in paused],
        style,
        base=scaled(base.paused_s, pk),
        label=f"time links spent paused ({p_unit}, summed)",
    )
    unfinished: list[float | None] = [float(o.unfinished) for o in ranked]
    _panel(axes[2], ys, unfinished, style, base=float(base.unfinished), label="flows unfinished")
    axes[0].set_yticks(ys, names)
    axes[0].set_title(
        "RDMA remedies, earliest last flow first", loc="left", fontweight="bold", pad=30
    )
    counts = ", ".join(str(r.senders) for r in base.results)
    axes[0].text(
        0,
        1.02,
        f"{scenario_line(base.results[0])} · N = {counts}"
        + (" (means over N)" if len(base.results) > 1 else "")
        + "\nhatched and dashed: the scenario as given (baseline)",
        transform=axes[0].transAxes,
        fontsize=8,
        color="0.35",
        va="bottom",
    )
    return save_figure(fig, path)
