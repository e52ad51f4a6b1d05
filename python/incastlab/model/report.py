"""A prediction as a backend's report: the shape a :class:`~incastlab.result.Result` of the
model carries, so that predictions are stored, printed and compared as records like runs. Kept
apart from the model's equations and from the backend, so that reading old stored predictions
(:mod:`incastlab.result.legacy`) needs neither."""

from __future__ import annotations

from typing import Any


def model_report(row: dict[str, Any], scenario: dict[str, Any]) -> dict[str, Any]:
    """The model's report for one point: every block takes the predicted block time, and the
    model's own figures (regime, onset, timeouts per block, ignored fields) sit under
    ``model``. Counters the model does not predict (drops, events) are left out."""
    fields = (
        "regime",
        "onset",
        "sru",
        "block_time_s",
        "timeouts_per_block",
        "dominant",
        "ignored",
        "interval_bps",
        "outside_domain",
        "mechanisms_bps",
        "correction",
    )
    blocks = int(scenario["workload"]["blocks"])
    block_ps = round(row["block_time_s"] * 1e12)
    return {
        "senders": row["senders"],
        "workload": "sync_read",
        "app_bytes": row["senders"] * row["sru"] * blocks,
        "start": 0,
        "duration": block_ps * blocks,
        "goodput_bps": row["goodput_bps"],
        "link_bps": row["link_bps"],
        "base_latency": 0,
        "block_times": [block_ps] * blocks,
        "flows": [
            {"flow": i, "background": False, "bytes": row["sru"] * blocks, "fct": None}
            for i in range(row["senders"])
        ],
        "model": {k: row.get(k) for k in fields},
    }
