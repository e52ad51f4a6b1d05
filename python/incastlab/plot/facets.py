"""What a sweep figure may average, and what it must say it did: the one owner of that rule.

A point of a figure is the mean over the stored points that share its x, its line (hue) and
its panel. Seeds may differ among them, and coordinates the user pools by name (``--pool``);
any other coordinate that varies among them would mix unlike runs into one mean (RTOmin
200 ms and 1 ms in one line), so it gets a panel per value (a facet), or, with more panels
than fit, the figure is refused with what to do instead. The caption names every pooling
and filter.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]

#: Most panels one figure holds.
MAX_PANELS = 9


class FigureRefused(ValueError):
    """The figure would average runs that differ in a coordinate it does not show."""


def _value(row: Row, key: str) -> Any:
    return row["params"].get(key)


def _shown(v: Any) -> str:
    return "-" if v is None else str(v)


def _natural(v: Any) -> tuple[int, Any]:
    from incastlab.sweep.order import natural_key

    return natural_key(v)


def _span(values: Sequence[Any]) -> str:
    """Distinct values, in natural order, short: ``1..47`` for a run of whole numbers."""
    vs = sorted(set(values), key=_natural)
    if len(vs) > 3 and all(isinstance(v, int) and not isinstance(v, bool) for v in vs):
        return f"{vs[0]}..{vs[-1]}"
    shown = ", ".join(_shown(v) for v in vs[:4])
    return shown + (", …" if len(vs) > 4 else "")


def axis_label(key: str | None) -> str:
    """A coordinate's name for people: its last part, unless that alone is ambiguous."""
    if not key:
        return ""
    section, _, name = key.rpartition(".")
    if name in ("flows", "kind", "source", "destination", "ecn"):
        return f"{section} {name}"
    return name.replace("_", " ")


def seed_of(row: Row) -> Any:
    """The seed of a stored point (a coordinate when the sweep had several)."""
    if "seed" in row["params"]:
        return row["params"]["seed"]
    return row.get("seed", (row.get("scenario") or {}).get("seed"))


@dataclass
class Layout:
    """How a figure's rows fall into panels, lines and points, and what that pooled."""

    x: str | None
    hue: str | None
    #: Coordinates with a panel per combination of values.
    facets: list[str] = field(default_factory=list)
    #: Coordinates pooled because the user asked.
    pooled: list[str] = field(default_factory=list)
    #: (the panel's facet values, its rows), in natural order.
    panels: list[tuple[dict[str, Any], list[Row]]] = field(default_factory=list)
    #: The filters applied before (``rto_min = 1ms``).
    filters: list[str] = field(default_factory=list)
    #: Most stored points behind one figure point.
    per_point: int = 1
    seeds: list[Any] = field(default_factory=list)
    #: Values of each pooled coordinate.
    pooled_values: dict[str, list[Any]] = field(default_factory=dict)

    def panel_title(self, values: dict[str, Any]) -> str:
        return " · ".join(f"{axis_label(k)} {_shown(v)}" for k, v in values.items())

    def caption(self, statistic: str = "mean and 95% interval") -> str:
        """What each point is, over what, and what was filtered out: the figure's subtitle."""
        parts = []
        over = []
        if len(self.seeds) > 1:
            over.append(f"seeds {_span(self.seeds)}")
        for k in self.pooled:
            over.append(f"{axis_label(k)} {_span(self.pooled_values.get(k, []))} (pooled)")
        if self.per_point > 1 and over:
            parts.append(f"{statistic} over " + " and ".join(over))
        elif len(self.seeds) == 1:
            parts.append(f"one run per point, seed {self.seeds[0]}")
        else:
            parts.append("one run per point")
        if self.filters:
            parts.append("where " + ", ".join(self.filters))
        return " · ".join(parts)


def lay_out(
    rows: Sequence[Row],
    *,
    x: str | None,
    hue: str | None,
    pool: Sequence[str] = (),
    filters: Sequence[str] = (),
    max_panels: int = MAX_PANELS,
) -> Layout:
    """The panels of a figure of ``rows`` with ``x`` and ``hue``: every coordinate that varies
    among rows of one (x, hue, seed) and is not pooled gets a panel per value;
    :class:`FigureRefused` if that makes more than ``max_panels``."""
    keys = sorted({k for r in rows for k in r["params"]})
    fixed = {x, hue, "seed", *pool}
    same: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for r in rows:
        same[(_value(r, x) if x else None, _value(r, hue) if hue else None, seed_of(r))].append(r)
    facets = [
        k
        for k in keys
        if k not in fixed and any(len({repr(_value(r, k)) for r in g}) > 1 for g in same.values())
    ]
    by_panel: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for r in rows:
        by_panel[tuple(_value(r, k) for k in facets)].append(r)
    if len(by_panel) > max_panels:
        what = "; ".join(f"{k} ({_span([_value(r, k) for r in rows])})" for k in facets)
        from incastlab.sweep.store import coordinate_columns

        first = facets[0]
        column = coordinate_columns(rows, [first])[0]
        raise FigureRefused(
            f"these points differ in {what}, which one line would average together and "
            f"{len(by_panel)} panels cannot show: pick one with --where {column}=VALUE, draw "
            f"it as --hue {first}, or average it on purpose with --pool {first}"
        )
    order = sorted(by_panel, key=lambda t: [_natural(v) for v in t])
    layout = Layout(
        x=x,
        hue=hue,
        facets=facets,
        pooled=[k for k in pool if k in keys],
        panels=[(dict(zip(facets, t, strict=True)), by_panel[t]) for t in order],
        filters=list(filters),
    )
    points: dict[tuple[Any, ...], int] = defaultdict(int)
    for r in rows:
        pk = tuple(_value(r, k) for k in facets)
        points[(pk, _value(r, x) if x else None, _value(r, hue) if hue else None)] += 1
    layout.per_point = max(points.values(), default=1)
    layout.seeds = sorted({seed_of(r) for r in rows if seed_of(r) is not None}, key=_natural)
    layout.pooled_values = {k: [_value(r, k) for r in rows] for k in layout.pooled}
    return layout


def grid(n: int) -> tuple[int, int]:
    """Rows and columns of ``n`` panels: up to three across."""
    cols = min(3, n)
    return (n + cols - 1) // cols, cols


def panel_axes(fig_w: float, fig_h: float, n: int, *, sharey: bool = True) -> tuple[Any, list[Any]]:
    """A figure with ``n`` panels of ``fig_w`` × ``fig_h`` inches each; its axes in order (the
    unused ones of the last row hidden)."""
    import matplotlib.pyplot as plt

    rows, cols = grid(n)
    fig, axes = plt.subplots(
        rows, cols, figsize=(fig_w * cols, fig_h * rows), sharey=sharey, squeeze=False
    )
    flat = list(itertools.chain.from_iterable(axes))
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]
