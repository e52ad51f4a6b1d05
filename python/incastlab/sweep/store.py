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

A point file damaged since (truncated, emptied, overwritten, or a flipped bit anywhere in
its data while its footer stays whole) is not a point: each file carries a checksum of its
rows (:mod:`incastlab.result.schema`) that every read checks, so a damaged one does not count
as done, the next run computes it again and replaces it (and says so), and readers skip it
and name it (:attr:`SweepStore.unreadable`). Points written before checksums read as
*unverified* (:meth:`SweepStore.verify`), not damaged.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pyarrow.parquet as pq

from incastlab import files
from incastlab.result import schema

if TYPE_CHECKING:
    import pandas as pd


def _atomic_write(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        # A full or read-only disk, or Ctrl-C mid-write: no half-written file stays behind.
        tmp.unlink(missing_ok=True)
        raise


#: A temporary file older than this is a dead writer's even if its pid is alive again (pids
#: are reused, and writing one point takes well under a second).
STALE_TMP_S = 600.0


class SweepDirError(ValueError):
    """A directory that is not a readable sweep (the message names what is wrong)."""


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
        #: Point files found damaged by the last :meth:`done` or :meth:`rows`.
        self.unreadable: list[Path] = []

    def create(self, meta: dict[str, Any]) -> None:
        """Make the directory (or reuse it) and record what the sweep is."""
        if self.root.exists() and not self.root.is_dir():
            raise SweepDirError(f"{self.root}: a file, not a sweep directory")
        self.points_dir.mkdir(parents=True, exist_ok=True)
        self.failed_dir.mkdir(parents=True, exist_ok=True)
        self.remove_stale_temporaries()
        text = json.dumps(meta, indent=1, sort_keys=True, default=str)
        _atomic_write(self.root / "sweep.json", lambda p: p.write_text(text, encoding="utf-8"))

    def remove_stale_temporaries(self) -> list[Path]:
        """Delete the half-written files of writers that died (a sweep killed mid-write) and
        return them; a live writer's recent file is left alone, since two runs may share a
        directory."""
        removed = []
        now = time.time()
        for d in (self.root, self.points_dir, self.failed_dir):
            for tmp in d.glob("*.tmp"):
                pid = tmp.name.rsplit(".", 2)[-2] if tmp.name.count(".") >= 2 else ""
                try:
                    old = now - tmp.stat().st_mtime > STALE_TMP_S
                except FileNotFoundError:
                    continue
                if old or not (pid.isdigit() and _alive(int(pid))):
                    tmp.unlink(missing_ok=True)
                    removed.append(tmp)
        return removed

    def meta(self) -> dict[str, Any]:
        """What :meth:`create` recorded; :class:`SweepDirError` if it is missing or damaged."""
        path = self.root / "sweep.json"
        if not path.exists():
            raise SweepDirError(f"{self.root}: not a sweep directory (no sweep.json)")
        try:
            meta = files.read_json(path, "sweep.json of")
        except files.InputFileError as e:
            raise SweepDirError(f"{e}; rerun the sweep to rewrite it") from None
        if not isinstance(meta, dict):
            raise SweepDirError(f"{path}: sweep.json holds no table; rerun the sweep to rewrite it")
        return meta

    @staticmethod
    def check_point(path: Path) -> bool:
        """Whether a point file is whole and vouched for by its checksum (``True``) or whole
        but written before checksums (``False``, unverified); :class:`DamagedResultFile`
        naming the file if it does not read back, holds other than one row, or does not
        match its checksum."""
        verified = schema.verify(path)
        rows = pq.read_metadata(path).num_rows
        if rows != 1:
            raise schema.DamagedResultFile(f"{path}: a sweep point holds one row, not {rows}")
        return verified

    def verify(self) -> tuple[list[Path], list[Path], list[tuple[Path, str]]]:
        """Every point file checked in full: ``(verified, unverified, damaged)``, the last
        with what is wrong with each."""
        good: list[Path] = []
        old: list[Path] = []
        bad: list[tuple[Path, str]] = []
        for p in sorted(self.points_dir.glob("*.parquet")):
            try:
                (good if self.check_point(p) else old).append(p)
            except schema.DamagedResultFile as e:
                bad.append((p, str(e)))
        return good, old, bad

    def done(self) -> set[str]:
        """Keys of the points stored whole (read and checked against their checksums);
        damaged ones are listed in :attr:`unreadable` and are not done (the next run
        computes them again)."""
        self.unreadable = []
        if not self.points_dir.exists():
            return set()
        good, old, bad = self.verify()
        self.unreadable = [p for p, _ in bad]
        return {p.stem for p in (*good, *old)}

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
        self.unreadable = []
        for path in sorted(self.points_dir.glob("*.parquet")):
            try:
                out += schema.read_records(path)
            except Exception:  # a damaged file: skipped and named, the others still read
                self.unreadable.append(path)
        return out

    def failures(self) -> list[dict[str, Any]]:
        """Every recorded failure (a damaged record counts as one failure of unknown
        parameters, its error saying so)."""
        if not self.failed_dir.exists():
            return []
        out = []
        for p in sorted(self.failed_dir.glob("*.json")):
            try:
                f = files.read_json(p, "failure record")
                if not isinstance(f, dict):
                    raise files.InputFileError(f"{p.name} holds no table")
            except files.InputFileError as e:
                f = {"key": p.stem, "error": f"unreadable failure record: {e}"}
            out.append({"params": {}, "error": "", **f})
        return out


def flat_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records for CSV: every column but the nested scenario and report; lists and the
    sweep params as JSON text."""
    out = []
    for r in rows:
        flat = {k: v for k, v in r.items() if k not in ("scenario", "report")}
        out.append({k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in flat.items()})
    return out


def coordinate_columns(rows: Sequence[dict[str, Any]], axes: Sequence[str]) -> list[str]:
    """The record columns of a sweep's coordinates ``axes`` (its spec's keys), the names of
    its CSV and Parquet: ``topology.buffer`` is ``topology.buffer.bytes`` (and ``.packets``
    where a point gave packets), ``tcp.rto_min`` is ``tcp.rto_min_s``; a coordinate that is
    no scenario key keeps its name."""
    from incastlab.scenario.columns import of_key

    out: list[str] = []
    for axis in axes:
        cols = of_key(axis) or [axis]
        held = [c for c in cols if any(r.get(c) is not None for r in rows)]
        out += held or cols[:1]
    return out


#: The prefix of a coordinate's value as the spec wrote it (``32KB``) in :func:`over_seeds`.
LABEL = "label:"


def over_seeds(rows: Sequence[dict[str, Any]], axes: Sequence[str]) -> pd.DataFrame:
    """A sweep's records aggregated over seeds (:func:`incastlab.result.aggregate`): one row
    per combination of the other ``axes``, each as its record columns in base units
    (:func:`coordinate_columns`) and, under ``label:KEY``, as the spec wrote it (as in
    ``params``), with ``n`` and each metric's ``_mean`` and ``_ci95``."""
    import pandas as pd

    from incastlab.result.stats import NUMERIC, aggregate

    keys = [k for k in axes if k != "seed"]
    cols = coordinate_columns(rows, keys)

    def label(v: Any) -> Any:
        # A table-valued coordinate ({bytes = ...}) groups by its JSON text.
        return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else v

    def cell(r: dict[str, Any], c: str) -> Any:
        return r[c] if c in r else label(r["params"].get(c))

    labels = [LABEL + k for k in keys]
    frame = pd.DataFrame(
        [
            {
                **{c: cell(r, c) for c in cols},
                **{LABEL + k: label(r["params"].get(k)) for k in keys},
                **{m: r.get(m) for m in NUMERIC},
            }
            for r in rows
        ],
        columns=[*cols, *labels, *NUMERIC],
    )
    return aggregate(frame, by=[*cols, *labels])


def results_view(
    rows: Sequence[dict[str, Any]], axes: Sequence[str], *, per_seed: bool = False
) -> tuple[list[dict[str, Any]], pd.DataFrame | None]:
    """What ``incast results`` shows: the flat rows of every point, or, when the sweep has
    several seeds and ``per_seed`` is not asked for, one row per configuration aggregated
    over seeds (:func:`over_seeds`; its coordinates under their record columns, NaN as
    ``None``). The aggregate frame is returned too, ``None`` for the per-point view."""
    if per_seed or "seed" not in axes:
        return flat_rows(rows), None
    summary = over_seeds(rows, axes)
    view = [
        {
            k: None if isinstance(v, float) and math.isnan(v) else v
            for k, v in r.items()
            if not k.startswith(LABEL)
        }
        for r in summary.to_dict("records")
    ]
    return view, summary


def write_csv(rows: Sequence[dict[str, Any]], path: str | Path | TextIO) -> None:
    """``rows`` as CSV (to a file, or an open text stream such as stdout), with every key any
    row has as a column (in order of appearance)."""
    import csv

    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    if not isinstance(path, str | Path):
        w = csv.DictWriter(path, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
        return
    with open(path, "w", newline="", encoding="utf-8") as fh:
        write_csv(rows, fh)
