"""Results on disk: Parquet, one row per point, each carrying its normalized scenario, seed
and incastlab version (also in the file's metadata)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from incastlab.result import Result


def to_table(results: Sequence[Result]) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for r in results:
        row = r.row()
        row["block_times_s"] = r.block_times_s
        row["block_timeouts"] = r.report.get("block_timeouts")
        row["flow_completion_s"] = r.flow_completion_s
        row["flow_timeouts"] = [f.get("timeouts") for f in r.report["flows"]]
        row["scenario"] = json.dumps(r.scenario, sort_keys=True)
        rows.append(row)
    table = pa.Table.from_pylist(rows)
    versions = sorted({r.version for r in results})
    meta = {b"incastlab.version": ",".join(versions).encode(), b"incastlab.kind": b"results"}
    return table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})


def write_parquet(results: Sequence[Result], path: str | Path) -> Path:
    """Write ``results`` to ``path`` (a .parquet file)."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(to_table(results), p)
    return p


def read_parquet(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a results file, with ``scenario`` decoded."""
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    for row in rows:
        row["scenario"] = json.loads(row["scenario"])
    return rows
