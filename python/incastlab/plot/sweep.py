"""Figures of a sweep: a metric against a coordinate with 95% intervals over seeds (and the
model's curve where it applies), block-time CDFs, successive-timeout histograms, FCT overhead
over optimal, and the cwnd and queue time series of one run. PNG, PDF or SVG by extension.
What a figure may average, and how its caption says so, is :mod:`incastlab.plot.facets`'s."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

from incastlab.plot import COLORS, save_figure
from incastlab.plot.facets import Layout, axis_label, lay_out, panel_axes
from incastlab.plot.ticks import log_axis, plain
from incastlab.result import Result, mean_ci
from incastlab.sweep.metrics import metric
from incastlab.sweep.order import natural_key as natural_key
from incastlab.sweep.order import params_key as params_key

Row = dict[str, Any]


def _hue_groups(rows: Sequence[Row], hue: str | None) -> list[tuple[str, list[Row]]]:
    groups: dict[Any, list[Row]] = defaultdict(list)
    for r in rows:
        groups[r["params"].get(hue) if hue else None].append(r)
    keys = sorted(groups, key=natural_key)
    return [(f"{axis_label(hue)} {k}" if hue else "", groups[k]) for k in keys]


def style_axes(ax: Any, title: str, subtitle: str = "") -> None:
    ax.set_title(title, loc="left", fontweight="bold", fontsize=12, pad=18 if subtitle else 8)
    if subtitle:
        ax.text(0, 1.02, subtitle, transform=ax.transAxes, fontsize=8.5, color="0.35")
    ax.grid(alpha=0.3, which="both")
    ax.spines[["top", "right"]].set_visible(False)


def _figure(lay: Layout, w: float = 8.0, h: float = 4.8) -> tuple[Any, list[Any]]:
    """One panel per facet of ``lay`` (smaller when there are several)."""
    n = len(lay.panels)
    return panel_axes(w if n == 1 else 4.7, h if n == 1 else 3.7, n)


def _finish(fig: Any, axes: list[Any], lay: Layout, title: str, subtitle: str) -> None:
    """The title and the caption over all panels, each panel's facet values, tidy axes."""
    for ax, (values, _) in zip(axes, lay.panels, strict=True):
        if len(axes) > 1:
            ax.set_title(lay.panel_title(values), loc="left", fontsize=9.5)
        ax.grid(alpha=0.3, which="both")
        ax.spines[["top", "right"]].set_visible(False)
    lines = 1 + subtitle.count("\n")
    top = 1 - (0.34 + 0.17 * lines) / fig.get_figheight()
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.text(0.01, 1 - 0.12 / fig.get_figheight(), title, fontweight="bold", fontsize=12, va="top")
    fig.text(0.01, top + 0.02 / fig.get_figheight(), subtitle, fontsize=8.5, color="0.35")


def _hue_colors(rows: Sequence[Row], hue: str | None) -> dict[Any, str]:
    """One colour per hue value, the same in every panel."""
    values = sorted({r["params"].get(hue) for r in rows}, key=natural_key) if hue else [None]
    return {v: COLORS[i % len(COLORS)] for i, v in enumerate(values)}


def line(
    rows: Sequence[Row],
    path: str | Path,
    *,
    x: str = "topology.senders",
    y: str = "goodput",
    hue: str | None = None,
    model: bool = False,
    title: str = "",
    logy: bool = False,
    reference: dict[str, Sequence[tuple[float, float]]] | None = None,
    pool: Sequence[str] = (),
    filters: Sequence[str] = (),
) -> Path:
    """``y`` against coordinate ``x``, one line per ``hue`` value: the mean over seeds (and
    the coordinates in ``pool``) with its 95% interval, and optionally the analytical model's
    prediction for the same runs, dashed (synchronized reads only). Any other coordinate that
    varies gets a panel per value, or the figure is refused (:mod:`incastlab.plot.facets`);
    the caption names what was averaged and the ``filters`` applied. ``reference`` maps a
    label to published (x, y) points, drawn as open markers."""
    col, scale, label = metric(y)
    lay = lay_out(rows, x=x, hue=hue, pool=pool, filters=filters)
    fig, axes = _figure(lay)
    colors = _hue_colors(rows, hue)
    drew_model = False
    for ax, (_, panel) in zip(axes, lay.panels, strict=True):
        link = None
        for name, group in _hue_groups(panel, hue):
            color = colors[group[0]["params"].get(hue) if hue else None]
            by_x: dict[Any, list[Row]] = defaultdict(list)
            for r in group:
                if x in r["params"] and r.get(col) is not None:
                    by_x[r["params"][x]].append(r)
            xs = sorted(by_x, key=natural_key)
            if not xs:
                continue
            stats = [mean_ci([float(r[col]) * scale for r in by_x[v]]) for v in xs]
            pos = [natural_key(v)[1] if natural_key(v)[0] == 0 else k for k, v in enumerate(xs)]
            means = [m for m, _ in stats]
            ax.plot(pos, means, "o-", color=color, lw=2, ms=4, label=name or None)
            if y in ("goodput", "goodput_fraction"):
                link = by_x[xs[0]][0].get("link_bps")
            # Every metric here is non-negative, and goodput cannot beat the link.
            top = (link * scale if y == "goodput" else 100.0) if link else math.inf
            if any(h > 0 for _, h in stats):
                ax.fill_between(
                    pos,
                    [max(0.0, m - h) for m, h in stats],
                    [min(top, m + h) for m, h in stats],
                    color=color,
                    alpha=0.18,
                    lw=0,
                )
            if model and y in ("goodput", "goodput_fraction"):
                pred = _model_points([by_x[v] for v in xs], scale if y == "goodput" else None)
                if pred:
                    ax.plot(pos, [p[0] for p in pred], "--", color=color, lw=1.2, alpha=0.85)
                    # The model's 10-90% interval for the simulator (hatched, apart from the
                    # 95% band over random seeds).
                    ax.fill_between(
                        pos,
                        [p[1] for p in pred],
                        [p[2] for p in pred],
                        facecolor="none",
                        edgecolor=color,
                        hatch="//",
                        alpha=0.35,
                        lw=0,
                    )
                    drew_model = True
        for i, (name, pts) in enumerate((reference or {}).items()):
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                "s",
                mfc="none",
                mec=COLORS[i % len(COLORS)],
                mew=1.5,
                ms=7,
                label=name,
            )
        if link and y == "goodput":
            ax.axhline(link * scale, color="0.4", ls="--", lw=1)
            if not logy:
                ax.set_ylim(0, link * scale * 1.08)
        _x_scale(ax, [r for r in rows if x in r["params"]], x)
        if logy:
            ax.set_yscale("log")
            log_axis(ax.yaxis)
        ax.set_xlabel(axis_label(x))
        ax.set_ylabel(label)
    if hue or reference:
        axes[0].legend(frameon=False, fontsize=8 if len(axes) > 1 else 9)
    sub = lay.caption()
    if drew_model:
        sub += " · dashed: the model for the same runs"
    what = label.split(" (")[0]
    _finish(fig, axes, lay, title or f"{what[0].upper()}{what[1:]} against {axis_label(x)}", sub)
    return save_figure(fig, path)


def _x_scale(ax: Any, rows: Sequence[Row], x: str) -> None:
    """Whole-number x axes: logarithmic over a span of 32× or more, else integer ticks."""
    from matplotlib.ticker import MaxNLocator

    xs_all = [natural_key(r["params"][x])[1] for r in rows]
    if xs_all and all(isinstance(v, int) for v in xs_all):
        if min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 32:
            ax.set_xscale("log", base=2)
            log_axis(ax.xaxis, base=2)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _model_points(
    points: Sequence[Sequence[Row]], scale: float | None
) -> list[tuple[float, float, float]] | None:
    """The model's goodput and the ends of its 10-90% interval for every stored run behind
    each figure point, averaged as the runs are (in Mbps with ``scale``, else in % of the
    link); None unless every run is a synchronized read."""
    import json

    from incastlab import scenario as sc_mod
    from incastlab.backends.model import predict_scenario

    cache: dict[str, tuple[float, float, float]] = {}

    def predicted(r: Row) -> tuple[float, float, float]:
        # Seeds do not change the model's answer: one prediction per scenario without them.
        key = json.dumps({**r["scenario"], "seed": 0}, sort_keys=True)
        if key not in cache:
            p = predict_scenario(sc_mod.from_dict(r["scenario"], normalized=True))
            g = float(p.prediction.goodput_bps)
            cache[key] = (g, *(p.interval or (g, g)))
        k = scale if scale is not None else 100 / float(r["link_bps"])
        g, lo, hi = cache[key]
        return g * k, lo * k, hi * k

    if any(r["scenario"]["workload"]["kind"] != "sync_read" for rs in points for r in rs):
        return None
    out = []
    for rs in points:
        each = [predicted(r) for r in rs]
        g, lo, hi = (statistics.fmean(x[j] for x in each) for j in range(3))
        out.append((g, lo, hi))
    return out


def block_cdf(
    rows: Sequence[Row],
    path: str | Path,
    *,
    hue: str | None = None,
    pool: Sequence[str] = (),
    filters: Sequence[str] = (),
) -> Path:
    """CDF of block completion times, one line per ``hue`` value: every block of its runs
    (seeds, and the coordinates in ``pool``) together; a panel per value of any other
    coordinate that varies."""
    lay = lay_out(rows, x=None, hue=hue, pool=pool, filters=filters)
    fig, axes = _figure(lay, 7, 4.4)
    colors = _hue_colors(rows, hue)
    for ax, (_, panel) in zip(axes, lay.panels, strict=True):
        for name, group in _hue_groups(panel, hue):
            times = sorted(
                t * 1e3 / 1e12 for r in group for t in r["report"].get("block_times", [])
            )
            if not times:
                continue
            ys = [(k + 1) / len(times) for k in range(len(times))]
            color = colors[group[0]["params"].get(hue) if hue else None]
            ax.step(times, ys, where="post", color=color, lw=2, label=name or None)
        ax.set_xscale("log")
        log_axis(ax.xaxis)
        ax.set_xlabel("block completion time (ms)")
        ax.set_ylabel("fraction of blocks")
    # One time axis for every panel, so that their distributions compare at a glance.
    lo = min(ax.get_xlim()[0] for ax in axes)
    hi = max(ax.get_xlim()[1] for ax in axes)
    for ax in axes:
        ax.set_xlim(lo, hi)
    if hue:
        axes[0].legend(frameon=False, fontsize=9)
    sub = lay.caption("all blocks pooled").replace("one run per point", "one run per line")
    _finish(
        fig,
        axes,
        lay,
        "Block completion times",
        sub + "\na jump near RTOmin is a block that waited out a timeout",
    )
    return save_figure(fig, path)


def timeout_histogram(
    rows: Sequence[Row],
    path: str | Path,
    *,
    hue: str | None = None,
    pool: Sequence[str] = (),
    filters: Sequence[str] = (),
) -> Path:
    """How often a flow suffered k successive timeouts, per ``hue`` value, summed over its
    runs (seeds, and the coordinates in ``pool``); a panel per value of any other
    coordinate that varies."""
    lay = lay_out(rows, x=None, hue=hue, pool=pool, filters=filters)
    fig, axes = _figure(lay, 7, 4.2)
    colors = _hue_colors(rows, hue)
    for ax, (_, panel) in zip(axes, lay.panels, strict=True):
        groups = _hue_groups(panel, hue)
        width = 0.8 / max(1, len(groups))
        for i, (name, group) in enumerate(groups):
            runs: list[int] = []
            for r in group:
                tr = r["report"].get("timeout_runs", [])
                runs = [a + b for a, b in zip(runs or [0] * len(tr), tr, strict=True)]
            ks = list(range(1, len(runs) + 1))
            ax.bar(
                [k + (i - (len(groups) - 1) / 2) * width for k in ks],
                runs,
                width=width,
                color=colors[group[0]["params"].get(hue) if hue else None],
                label=name or None,
            )
        ax.set_yscale("symlog")
        ax.yaxis.set_major_formatter(FuncFormatter(plain))
        ax.set_xlabel("successive timeouts of one flow (last bar: that many or more)")
        ax.set_ylabel("occurrences")
    if hue:
        axes[0].legend(frameon=False, fontsize=9)
    sub = lay.caption("summed").replace("one run per point", "one run per bar")
    _finish(fig, axes, lay, "Successive retransmission timeouts", sub)
    return save_figure(fig, path)


def fct_overhead(
    rows: Sequence[Row],
    path: str | Path,
    *,
    x: str = "topology.senders",
    hue: str | None = None,
    pool: Sequence[str] = (),
    filters: Sequence[str] = (),
) -> Path:
    """The last flow's completion time over the optimal N·bytes·8/rate (incast workload),
    the mean over seeds (and the coordinates in ``pool``)."""
    lay = lay_out(rows, x=x, hue=hue, pool=pool, filters=filters)
    fig, axes = _figure(lay, 7, 4.4)
    colors = _hue_colors(rows, hue)
    for ax, (_, panel) in zip(axes, lay.panels, strict=True):
        for name, group in _hue_groups(panel, hue):
            by_x: dict[Any, list[float]] = defaultdict(list)
            for r in group:
                w, n = r["scenario"]["workload"], r["senders"]
                if w["kind"] != "incast" or not r.get("fct_max_s"):
                    continue
                optimal = n * w["flow_size"] * 8 / r["link_bps"]
                by_x[r["params"].get(x, n)].append(r["fct_max_s"] / optimal)
            xs = sorted(by_x, key=natural_key)
            if xs:
                means = [statistics.fmean(by_x[v]) for v in xs]
                color = colors[group[0]["params"].get(hue) if hue else None]
                ax.plot(xs, means, "o-", color=color, lw=2, label=name or None)
        ax.axhline(1.0, color="0.4", ls="--", lw=1)
        ax.set_xscale("log")
        log_axis(ax.xaxis)
        ax.set_xlabel(axis_label(x))
        ax.set_ylabel("last FCT / optimal")
    if hue:
        axes[0].legend(frameon=False, fontsize=9)
    sub = lay.caption("mean") + " · optimal: N·bytes·8 / link rate"
    _finish(fig, axes, lay, "Incast completion over optimal", sub)
    return save_figure(fig, path)


def time_series(r: Result, path: str | Path, *, flows: int = 8) -> Path:
    """Bottleneck queue (top) and the congestion windows of the first ``flows`` flows."""
    s = r.series
    if not s or not s.get("t"):
        raise ValueError("this run has no time series: set run.sample_interval")
    t = [v / 1e9 for v in s["t"]]
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(8, 5.6), sharex=True)
    ax.plot(t, [q / 1e3 for q in s["queue_bytes"]], color=COLORS[0], lw=1.2)
    limit = r.scenario["topology"]["buffer"]["bytes"]
    if limit and not r.scenario["topology"]["pfc"]:
        ax.axhline(limit / 1e3, color="0.4", ls="--", lw=1)
    ax.set_ylabel("bottleneck queue (KB)")
    for i, w in enumerate(s["cwnd"][:flows]):
        ax2.plot(t, w, lw=1, color=COLORS[i % len(COLORS)], alpha=0.85)
    ax2.set_ylabel(f"cwnd (segments), {min(flows, len(s['cwnd']))} flows")
    ax2.set_xlabel("time since the workload started (ms)")
    from incastlab.plot import scenario_line

    style_axes(ax, f"One run, {r.senders} senders", scenario_line(r))
    style_axes(ax2, "")
    fig.tight_layout()
    return save_figure(fig, path)
