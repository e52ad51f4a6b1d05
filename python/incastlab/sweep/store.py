"""A sweep's directory: one Parquet file per finished point, one JSON file per failed one.

::

    DIR/sweep.json            the spec, its name, backend, total points, incastlab version
    DIR/points/KEY.parquet    one record (incastlab.result.record): coordinates, headline
                              numbers, sweep params, scenario, full report
    DIR/failed/KEY.json       the coordinates, the scenario and the error

``KEY`` hashes the normalized scenario, the backend and the incastlab version, so a rerun of
the same spec skips every point already stored and runs the rest; a point that failed is
tried again. Files appear atomically (written aside, then renamed), so a sweep killed at any
moment leaves only whole points behind.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from incastlab.result import schema

if TYPE_CHECKING:
    import pandas as pd


def _atomic_write(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write(tmp)
    os.replace(tmp, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


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
        self._remove_stale_temporaries()
        text = json.dumps(meta, indent=1, sort_keys=True, default=str)
        _atomic_write(self.root / "sweep.json", lambda p: p.write_text(text, encoding="utf-8"))

    def _remove_stale_temporaries(self) -> None:
        """Delete the half-written files of writers that died (a sweep killed mid-write); a
        live writer's file is left alone, since two runs may share a directory."""
        for d in (self.root, self.points_dir, self.failed_dir):
            for tmp in d.glob(".*.tmp"):
                pid = tmp.name.rsplit(".", 2)[-2]
                if pid.isdigit() and not _alive(int(pid)):
                    tmp.unlink(missing_ok=True)

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

    def write_point(self, key: str, record: dict[str, Any]) -> None:
        """Store one finished point, a record with its ``key`` and ``params`` (and forget an
        earlier failure of it)."""
        table = schema.to_table([record], "point")

        def write(p: Path) -> None:
            # One row: dictionary pages and statistics would only double the file.
            pq.write_table(table, p, use_dictionary=False, write_statistics=False)

        _atomic_write(self.points_dir / f"{key}.parquet", write)
        (self.failed_dir / f"{key}.json").unlink(missing_ok=True)

    def write_failure(self, key: str, failure: dict[str, Any]) -> None:
        """Record a point that failed, with its error."""
        text = json.dumps(failure, indent=1, sort_keys=True, default=str)
        _atomic_write(self.failed_dir / f"{key}.json", lambda p: p.write_text(text))

    def rows(self) -> list[dict[str, Any]]:
        """Every stored point's record, with ``params``, ``scenario`` and ``report`` decoded
        (points of earlier versions are rebuilt as records)."""
        out: list[dict[str, Any]] = []
        for path in sorted(self.points_dir.glob("*.parquet")):
            out += schema.read_records(path)
        return out

    def failures(self) -> list[dict[str, Any]]:
        """Every recorded failure."""
        if not self.failed_dir.exists():
            return []
        return [json.loads(p.read_text()) for p in sorted(self.failed_dir.glob("*.json"))]


def flat_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records for CSV: every column but the nested scenario and report; lists and the
    sweep params as JSON text."""
    out = []
    for r in rows:
        flat = {k: v for k, v in r.items() if k not in ("scenario", "report")}
        out.append({k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in flat.items()})
    return out


def over_seeds(rows: Sequence[dict[str, Any]], axes: Sequence[str]) -> pd.DataFrame:
    """A sweep's records aggregated over seeds (:func:`incastlab.result.aggregate`): one row
    per combination of the other ``axes``, their values as the spec wrote them (as in
    ``params``), with ``n`` and each metric's ``_mean`` and ``_ci95``."""
    import pandas as pd

    from incastlab.result.stats import NUMERIC, aggregate

    keys = [k for k in axes if k != "seed"]

    def label(v: Any) -> Any:
        # A table-valued coordinate ({bytes = ...}) groups by its JSON text.
        return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else v

    frame = pd.DataFrame(
        [
            {**{k: label(r["params"].get(k)) for k in keys}, **{m: r.get(m) for m in NUMERIC}}
            for r in rows
        ],
        columns=[*keys, *NUMERIC],
    )
    return aggregate(frame, by=keys)


def results_view(
    rows: Sequence[dict[str, Any]], axes: Sequence[str], *, per_seed: bool = False
) -> tuple[list[dict[str, Any]], pd.DataFrame | None]:
    """What ``incast results`` shows: the flat rows of every point, or, when the sweep has
    several seeds and ``per_seed`` is not asked for, one row per configuration aggregated
    over seeds (:func:`over_seeds`; NaN becomes ``None``). The aggregate frame is returned
    too, ``None`` for the per-point view."""
    if per_seed or "seed" not in axes:
        return flat_rows(rows), None
    summary = over_seeds(rows, axes)
    view = [
        {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
        for r in summary.to_dict("records")
    ]
    return view, summary


def write_csv(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """``rows`` as CSV, with every key any row has as a column (in order of appearance)."""
    import csv

    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
