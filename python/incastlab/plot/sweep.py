"""Figures of a sweep: a metric against a coordinate with 95% intervals over seeds (and the
model's curve where it applies), block-time CDFs, successive-timeout histograms, FCT overhead
over optimal, and the cwnd and queue time series of one run. PNG, PDF or SVG by extension."""

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
from incastlab.result import Result, mean_ci
from incastlab.sweep.metrics import metric

Row = dict[str, Any]


def natural_key(v: Any) -> tuple[int, Any]:
    from incastlab.units import parse_rate, parse_size, parse_time

    if isinstance(v, int | float) and not isinstance(v, bool):
        return (0, v)
    for parse in (parse_time, parse_size, parse_rate):
        try:
            return (0, parse(v))
        except (ValueError, TypeError):
            pass
    return (1, str(v))


def params_key(row: Row) -> list[tuple[int, Any]]:
    """Sort key of a stored point: its coordinates in natural order."""
    return [natural_key(v) for v in row["params"].values()]


def _hue_groups(rows: Sequence[Row], hue: str | None) -> list[tuple[str, list[Row]]]:
    groups: dict[Any, list[Row]] = defaultdict(list)
    for r in rows:
        groups[r["params"].get(hue) if hue else None].append(r)
    keys = sorted(groups, key=natural_key)
    return [(f"{axis_label(hue)} {k}" if hue else "", groups[k]) for k in keys]


def axis_label(key: str | None) -> str:
    """A coordinate's name for people: its last part, unless that alone is ambiguous."""
    if not key:
        return ""
    section, _, name = key.rpartition(".")
    if name in ("flows", "kind", "source", "destination", "ecn"):
        return f"{section} {name}"
    return name.replace("_", " ")


def style_axes(ax: Any, title: str, subtitle: str = "") -> None:
    ax.set_title(title, loc="left", fontweight="bold", fontsize=12, pad=18 if subtitle else 8)
    if subtitle:
        ax.text(0, 1.02, subtitle, transform=ax.transAxes, fontsize=8.5, color="0.35")
    ax.grid(alpha=0.3, which="both")
    ax.spines[["top", "right"]].set_visible(False)


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
) -> Path:
    """``y`` against coordinate ``x``, one line per ``hue`` value: the mean over every other
    coordinate (normally the seeds) with its 95% interval, and optionally the analytical
    model's prediction dashed (synchronized reads only). ``reference`` maps a label to
    published (x, y) points, drawn as open markers in the matching line's colour."""
    col, scale, label = metric(y)
    fig, ax = plt.subplots(figsize=(8, 4.8))
    link = None
    for i, (name, group) in enumerate(_hue_groups(rows, hue)):
        color = COLORS[i % len(COLORS)]
        by_x: dict[Any, list[float]] = defaultdict(list)
        first: dict[Any, Row] = {}
        for r in group:
            if x not in r["params"] or r.get(col) is None:
                continue
            by_x[r["params"][x]].append(float(r[col]) * scale)
            first.setdefault(r["params"][x], r)
        xs = sorted(by_x, key=natural_key)
        if not xs:
            continue
        stats = [mean_ci(by_x[v]) for v in xs]
        pos = [natural_key(v)[1] if natural_key(v)[0] == 0 else k for k, v in enumerate(xs)]
        means = [m for m, _ in stats]
        ax.plot(pos, means, "o-", color=color, lw=2, ms=4, label=name or None)
        if y in ("goodput", "goodput_fraction"):
            link = first[xs[0]].get("link_bps")
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
            pred = _model_points([first[v] for v in xs], scale if y == "goodput" else None)
            if pred:
                ax.plot(pos, pred, "--", color=color, lw=1.2, alpha=0.85)
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
    xs_all = [natural_key(r["params"][x])[1] for r in rows if x in r["params"]]
    if xs_all and all(isinstance(v, int) for v in xs_all):
        from matplotlib.ticker import MaxNLocator

        if min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 32:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel(axis_label(x))
    ax.set_ylabel(label)
    sub = "mean and 95% interval over seeds" + (" · dashed: model" if model else "")
    what = label.split(" (")[0]
    style_axes(ax, title or f"{what[0].upper()}{what[1:]} against {x.split('.')[-1]}", sub)
    if hue or reference:
        ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def _model_points(rows: Sequence[Row], scale: float | None) -> list[float] | None:
    from incastlab import scenario as sc_mod
    from incastlab.backends.model import predict_scenario

    out = []
    for r in rows:
        sc = sc_mod.from_dict(r["scenario"], normalized=True)
        if sc.workload.kind != "sync_read":
            return None
        p = predict_scenario(sc).prediction
        bps = float(p.goodput_bps)
        out.append(bps * scale if scale is not None else 100 * bps / float(r["link_bps"]))
    return out


def block_cdf(rows: Sequence[Row], path: str | Path, *, hue: str | None = None) -> Path:
    """CDF of block completion times, one line per ``hue`` value (all its points pooled)."""
    fig, ax = plt.subplots(figsize=(7, 4.4))
    for i, (name, group) in enumerate(_hue_groups(rows, hue)):
        times = sorted(t * 1e3 / 1e12 for r in group for t in r["report"].get("block_times", []))
        if not times:
            continue
        ys = [(k + 1) / len(times) for k in range(len(times))]
        ax.step(times, ys, where="post", color=COLORS[i % len(COLORS)], lw=2, label=name or None)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("block completion time (ms)")
    ax.set_ylabel("fraction of blocks")
    style_axes(
        ax, "Block completion times", "a jump near RTOmin is a block that waited out a timeout"
    )
    if hue:
        ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def timeout_histogram(rows: Sequence[Row], path: str | Path, *, hue: str | None = None) -> Path:
    """How often a flow suffered k successive timeouts, per ``hue`` value."""
    groups = _hue_groups(rows, hue)
    fig, ax = plt.subplots(figsize=(7, 4.2))
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
            color=COLORS[i % len(COLORS)],
            label=name or None,
        )
    ax.set_yscale("symlog")
    ax.set_xlabel("successive timeouts of one flow (last bar: that many or more)")
    ax.set_ylabel("occurrences")
    style_axes(ax, "Successive retransmission timeouts")
    if hue:
        ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def fct_overhead(
    rows: Sequence[Row], path: str | Path, *, x: str = "topology.senders", hue: str | None = None
) -> Path:
    """The last flow's completion time over the optimal N·bytes·8/rate (incast workload)."""
    fig, ax = plt.subplots(figsize=(7, 4.4))
    for i, (name, group) in enumerate(_hue_groups(rows, hue)):
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
            ax.plot(xs, means, "o-", color=COLORS[i % len(COLORS)], lw=2, label=name or None)
    ax.axhline(1.0, color="0.4", ls="--", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel(x.split(".")[-1])
    ax.set_ylabel("last FCT / optimal")
    style_axes(ax, "Incast completion over optimal", "optimal: N·bytes·8 / link rate")
    if hue:
        ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
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
