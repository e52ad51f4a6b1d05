"""The metrics of a sweep's rows by short name, for `incast plot --y` and its help (a light
module: the parser lists them without importing matplotlib)."""

from __future__ import annotations

#: Metrics by short name: (row column, scale, axis label).
METRICS: dict[str, tuple[str, float, str]] = {
    "goodput": ("goodput_bps", 1e-6, "goodput (Mbps)"),
    "goodput_fraction": ("goodput_fraction", 100.0, "goodput (% of link)"),
    "block_time": ("block_time_median_s", 1e3, "median block time (ms)"),
    "block_time_max": ("block_time_max_s", 1e3, "longest block time (ms)"),
    "timeouts": ("timeouts", 1.0, "retransmission timeouts"),
    "drops": ("drops", 1.0, "packets dropped"),
    "fct_max": ("fct_max_s", 1e3, "last flow completion (ms)"),
    "query_fct_p99": ("query_fct_p99_s", 1e3, "99th-percentile query FCT (ms)"),
}


def metric(name: str) -> tuple[str, float, str]:
    """The row column, scale and label of a metric (a short name or any numeric column)."""
    return METRICS.get(name, (name, 1.0, name))
