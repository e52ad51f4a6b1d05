"""The key-value store's figure: drops per host and p99 get latency against average
utilization, with and without a sender cap, over the ranges an article reports."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from incastlab.plot import COLORS, save_figure
from incastlab.plot.ticks import log_axis

Row = dict[str, Any]


def drops_and_latency(
    plain: Sequence[Row], capped: Sequence[Row], paper: dict[str, Any], path: str | Path
) -> Path:
    """Top: drops/s per host (log scale) with the article's boxes; bottom: p99 get latency."""
    fig, (ax, ax2) = plt.subplots(
        2, 1, figsize=(8, 6.4), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    for key in ("low", "high"):
        (u0, u1), (d0, d1) = paper[f"{key}_utilization"], paper[f"{key}_drops"]
        ax.fill_between(
            [100 * u0, 100 * u1],
            d0,
            d1,
            color="0.85",
            label="article (Fritchie, Riak)" if key == "low" else None,
        )
    for i, (label, rows) in enumerate((("no cap", plain), ("egress capped at 80%", capped))):
        if not rows:
            continue
        u = [100 * r["kv_utilization"] for r in rows]
        # A point without drops sits on the axis's floor rather than vanishing from a log axis.
        d = [max(r["kv_drops_per_s_per_host"], 0.1) for r in rows]
        ax.plot(u, d, "o-", color=COLORS[i], label=label)
        ax2.plot(u, [1e3 * r["kv_latency_p99_s"] for r in rows], "o-", color=COLORS[i])
    ax.set_yscale("log")
    log_axis(ax.yaxis)
    ax.set_ylabel("dropped frames / s per host (none: 0.1)")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3, which="both")
    ax2.set_ylabel("p99 get latency (ms)")
    ax2.set_xlabel("average utilization of each host's link (%), measured")
    ax2.grid(alpha=0.3)
    fig.suptitle("20-node key-value store, R = 3, 100 KB values, 1 Gbps, small shared buffer")
    fig.tight_layout()
    return save_figure(fig, path)
