"""A sweep's directory: one Parquet file per finished point, one JSON file per failed one.

::

    DIR/sweep.json            the spec, its name, backend, total points, incastlab version
    DIR/points/KEY.parquet    one row: coordinates, headline numbers, scenario, full report
    DIR/failed/KEY.json       the coordinates, the scenario and the error

``KEY`` hashes the normalized scenario, the backend and the incastlab version, so a rerun of
the same spec skips every point already stored and runs the rest; a point that failed is
tried again. Files appear atomically (written aside, then renamed), so a sweep killed at any
moment leaves only whole points behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from incastlab import _core


def _atomic_write(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write(tmp)
    os.replace(tmp, path)


class SweepStore:
    """The directory of one sweep."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.points_dir = self.root / "points"
        self.failed_dir = self.root / "failed"

    def create(self, meta: dict[str, Any]) -> None:
        """Make the directory (or reuse it) and record what the sweep is."""
        self.points_dir.mkdir(parents=True, exist_ok=True)
        self.failed_dir.mkdir(parents=True, exist_ok=True)
        text = json.dumps(meta, indent=1, sort_keys=True, default=str)
        _atomic_write(self.root / "sweep.json", lambda p: p.write_text(text, encoding="utf-8"))

    def meta(self) -> dict[str, Any]:
        """What :meth:`create` recorded."""
        try:
            meta: dict[str, Any] = json.loads((self.root / "sweep.json").read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"{self.root}: not a sweep directory (no sweep.json)") from None
        return meta

    def done(self) -> set[str]:
        """Keys of the points already stored."""
        if not self.points_dir.exists():
            return set()
        return {p.stem for p in self.points_dir.glob("*.parquet")}

    def write_point(self, key: str, row: dict[str, Any]) -> None:
        """Store one finished point (and forget an earlier failure of it)."""
        table = pa.Table.from_pylist([row])
        meta = {b"incastlab.version": _core.__version__.encode(), b"incastlab.kind": b"point"}
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
        _atomic_write(self.points_dir / f"{key}.parquet", lambda p: pq.write_table(table, p))
        (self.failed_dir / f"{key}.json").unlink(missing_ok=True)

    def write_failure(self, key: str, failure: dict[str, Any]) -> None:
        """Record a point that failed, with its error."""
        text = json.dumps(failure, indent=1, sort_keys=True, default=str)
        _atomic_write(self.failed_dir / f"{key}.json", lambda p: p.write_text(text))

    def rows(self) -> list[dict[str, Any]]:
        """Every stored point, with ``params``, ``scenario`` and ``report`` decoded."""
        out: list[dict[str, Any]] = []
        for path in sorted(self.points_dir.glob("*.parquet")):
            for row in pq.read_table(path).to_pylist():
                for k in ("params", "scenario", "report"):
                    if isinstance(row.get(k), str):
                        row[k] = json.loads(row[k])
                out.append(row)
        return out

    def failures(self) -> list[dict[str, Any]]:
        """Every recorded failure."""
        if not self.failed_dir.exists():
            return []
        return [json.loads(p.read_text()) for p in sorted(self.failed_dir.glob("*.json"))]


def flat_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for CSV: coordinates and headline numbers, without nested JSON."""
    out = []
    for r in rows:
        flat = {k: v for k, v in r.items() if k not in ("params", "scenario", "report")}
        flat.update(r.get("params", {}))
        out.append({k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in flat.items()})
    return out
