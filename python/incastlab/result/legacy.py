"""Rows written before the record schema (incastlab without ``incastlab.schema_version`` in its
Parquet metadata): each carried its normalized scenario and, in sweep points, the backend's
full report as JSON text, which is all a record is computed from."""

from __future__ import annotations

import json
from typing import Any

from incastlab.result.run import Result
from incastlab.units import PS_PER_S


def _decoded(v: Any) -> Any:
    return json.loads(v) if isinstance(v, str) else v


def upgrade(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Old rows as records. A results file (``incast sim --out``) stored no report, so its
    rows are rebuilt from the columns it did store."""
    out = []
    for row in rows:
        scenario = _decoded(row.get("scenario"))
        backend = str(row.get("backend") or "sim")
        report = _decoded(row.get("report"))
        if backend == "model":
            from incastlab.model.report import model_report

            report = model_report(row, scenario)
        elif not isinstance(report, dict):
            report = _report_from_row(row)
        r = Result(scenario=scenario, report=report, version=str(row["version"]), backend=backend)
        point = {"key": row.get("key"), "params": _decoded(row.get("params"))}
        out.append(r.record(**point, wall_s=row.get("wall_s")))
    return out


def _report_from_row(row: dict[str, Any]) -> dict[str, Any]:
    """What a report said, as far as an old results row kept it (times back to picoseconds)."""
    keep = (
        "senders",
        "workload",
        "goodput_bps",
        "link_bps",
        "app_bytes",
        "timeouts",
        "timeout_runs",
        "fast_recoveries",
        "retx_fast",
        "retx_timeout",
        "ecn_reductions",
        "drops",
        "bottleneck_utilization",
        "background_bps",
        "pfc_pauses",
        "events",
        "block_timeouts",
    )
    report: dict[str, Any] = {k: row[k] for k in keep if row.get(k) is not None}
    if row.get("duration_s") is not None:
        report["duration"] = round(row["duration_s"] * PS_PER_S)
    if row.get("block_times_s") is not None:
        report["block_times"] = [round(t * PS_PER_S) for t in row["block_times_s"]]
    if row.get("flow_completion_s") is not None:
        timeouts = row.get("flow_timeouts") or [None] * len(row["flow_completion_s"])
        report["flows"] = [
            {"fct": None if t is None else round(t * PS_PER_S), "timeouts": n}
            for t, n in zip(row["flow_completion_s"], timeouts, strict=True)
        ]
    bottleneck = {
        k: row[f"bottleneck_{k}"]
        for k in ("drops", "max_bytes", "marks")
        if row.get(f"bottleneck_{k}") is not None
    }
    if bottleneck:
        report["bottleneck"] = bottleneck
    return report
