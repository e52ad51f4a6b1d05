"""Seed aggregation: the mean of a metric over the seeds of one configuration, with its 95%
Student-t interval. The one implementation behind ``incast results`` and the sweep figures."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from incastlab.result.record import FLOAT, INT, METRICS

if TYPE_CHECKING:
    import pandas as pd

#: Two-sided 95% Student t quantiles by degrees of freedom 1..30 (1.96, the normal's, beyond).
_T95 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14]
_T95 += [2.13, 2.12, 2.11, 2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05]
_T95 += [2.05, 2.04]


def t95(dof: int) -> float:
    """The two-sided 95% Student t quantile for ``dof`` degrees of freedom."""
    return _T95[dof - 1] if dof <= len(_T95) else 1.96


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval (0 for one value)."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, 0.0
    return m, t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


#: Metrics :func:`aggregate` summarizes by default: every numeric headline column but those
#: that describe the configuration rather than measure it.
NUMERIC = [
    name for name, kind in METRICS if kind in (INT, FLOAT) and name not in ("senders", "link_bps")
]


def aggregate(
    df: pd.DataFrame,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per configuration: ``df``'s rows grouped by ``by`` (default: the backend and
    every coordinate that varies except ``seed``), with ``n`` (rows in the group) and, per
    metric, ``<metric>_mean`` and ``<metric>_ci95``, the half-width of the 95% Student-t
    interval of the mean over the group's non-null values (NaN with fewer than two).
    Metrics default to the numeric headline columns that ``df`` holds a value of."""
    import pandas as pd

    from incastlab.result.record import coordinates

    if by is None:
        candidates = ["backend"] + [c for c, _ in coordinates() if c != "seed"]
        by = [c for c in candidates if c in df.columns and df[c].nunique(dropna=False) > 1]
    if metrics is None:
        metrics = [m for m in NUMERIC if m in df.columns and df[m].notna().any()]
    rows: list[dict[str, Any]] = []
    groups = df.groupby(list(by), dropna=False, sort=False) if by else [((), df)]
    for keys, group in groups:
        keys = keys if isinstance(keys, tuple) else (keys,)
        row: dict[str, Any] = dict(zip(by, keys, strict=True))
        row["n"] = len(group)
        for m in metrics:
            values = [float(v) for v in group[m] if pd.notna(v)]
            mean, half = mean_ci(values) if values else (math.nan, math.nan)
            row[f"{m}_mean"] = mean
            row[f"{m}_ci95"] = half if len(values) >= 2 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)
