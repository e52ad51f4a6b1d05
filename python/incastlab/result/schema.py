"""The Arrow schema of a record, the one every Parquet file of results is written with.

Built in one place from the record's column list (:func:`incastlab.result.record.columns`):
every column typed and nullable, so a metric that does not apply is a null of its type and
files of different workloads, backends or sweeps concatenate as they are. The file metadata
says ``incastlab.schema_version``, ``incastlab.version`` and ``incastlab.kind`` (``results``
for a file of runs, ``point`` for a sweep point). Nested detail (``scenario``, ``report``,
``params``) is JSON text in the file and nested data again in :func:`read_records`.

Every file written now also says ``incastlab.sha256``: the SHA-256 of
its rows in a canonical form (:func:`digest`), checked on every read, so a file whose data
pages were damaged while its footer stayed whole is refused (:class:`DamagedResultFile`,
naming the file) rather than read as a point. A file without it (written before) reads as
*unverified*, not as damaged.

The file also carries pandas metadata naming pandas' nullable dtypes for the integer and
boolean columns, so plain ``pandas.read_parquet`` reads them as ``Int64`` and ``boolean``
(a missing value is ``<NA>``), not as floats or objects when some or all are null.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import incastlab.result.record as rec

_TYPES: dict[str, pa.DataType] = {
    rec.INT: pa.int64(),
    rec.FLOAT: pa.float64(),
    rec.STR: pa.string(),
    rec.BOOL: pa.bool_(),
    rec.JSON: pa.string(),
    rec.INTS: pa.list_(pa.int64()),
    rec.FLOATS: pa.list_(pa.float64()),
    rec.STRS: pa.list_(pa.string()),
    rec.FLOATS2: pa.list_(pa.list_(pa.float64())),
}
SCHEMA_VERSION_KEY = b"incastlab.schema_version"
#: The file metadata key of the rows' checksum (:func:`digest`).
CHECKSUM_KEY = b"incastlab.sha256"


class DamagedResultFile(ValueError):
    """A results file or sweep point that does not read back, or whose rows do not match
    the checksum written with them; the message names the file."""


#: Per column kind, the (pandas_type, numpy_type) of pandas metadata: the dtype plain pandas
#: gives the column (nullable for integers and booleans).
_PANDAS: dict[str, tuple[str, str]] = {
    rec.INT: ("int64", "Int64"),
    rec.FLOAT: ("float64", "float64"),
    rec.STR: ("unicode", "object"),
    rec.BOOL: ("bool", "boolean"),
    rec.JSON: ("unicode", "object"),
    rec.INTS: ("list[int64]", "object"),
    rec.FLOATS: ("list[float64]", "object"),
    rec.STRS: ("list[unicode]", "object"),
    rec.FLOATS2: ("list[list[float64]]", "object"),
}


@functools.cache
def schema() -> pa.Schema:
    """The schema of a record."""
    return pa.schema([pa.field(name, _TYPES[kind]) for name, kind in rec.columns()])


@functools.cache
def pandas_metadata() -> bytes:
    """The ``pandas`` schema metadata of a record table (as pyarrow writes it from a frame
    with nullable ``Int64``/``boolean`` columns), built without importing pandas."""
    cols = [
        {
            "name": name,
            "field_name": name,
            "pandas_type": _PANDAS[kind][0],
            "numpy_type": _PANDAS[kind][1],
            "metadata": None,
        }
        for name, kind in rec.columns()
    ]
    meta = {
        "index_columns": [],
        "column_indexes": [],
        "columns": cols,
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
    }
    return json.dumps(meta).encode()


def json_columns() -> list[str]:
    """Columns holding nested data, stored as JSON text."""
    return [name for name, kind in rec.columns() if kind == rec.JSON]


def to_table(records: Sequence[dict[str, Any]], kind: str = "results") -> pa.Table:
    """Records as a table of :func:`schema`, with the file metadata."""
    nested = json_columns()
    rows = [
        {
            **r,
            **{c: None if r.get(c) is None else json.dumps(r[c], sort_keys=True) for c in nested},
        }
        for r in records
    ]
    table = pa.Table.from_pylist(rows, schema=schema())
    versions = sorted({str(r.get("version")) for r in records})
    meta = {
        SCHEMA_VERSION_KEY: str(rec.SCHEMA_VERSION).encode(),
        b"incastlab.version": ",".join(versions).encode(),
        b"incastlab.kind": kind.encode(),
        b"pandas": pandas_metadata(),
        CHECKSUM_KEY: digest(table).encode(),
    }
    return table.replace_schema_metadata(meta)


def digest(table: pa.Table) -> str:
    """SHA-256 of a table's rows as canonical JSON (sorted keys, no spaces): what the rows
    hold, whatever Parquet's encoding of them, so the same rows read back give the same
    digest and a flipped bit in any value does not."""
    blob = json.dumps(table.to_pylist(), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _read_checked(path: str | Path) -> tuple[pa.Table, bool]:
    """The file's table and whether a checksum vouched for it (``False``: written before
    checksums, unverified); :class:`DamagedResultFile` if it does not read back whole."""
    # One file at a time: ParquetFile skips the dataset machinery of pq.read_table, which
    # costs more than the read itself for a one-row sweep point.
    try:
        with pq.ParquetFile(path) as f:
            table = f.read()
    except (OSError, ValueError, pa.ArrowException) as e:
        if isinstance(e, FileNotFoundError | PermissionError | IsADirectoryError):
            raise
        # pyarrow's message may run to many lines: its first is the cause.
        cause = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise DamagedResultFile(f"{path}: does not read back as Parquet ({cause})") from None
    stored = (table.schema.metadata or {}).get(CHECKSUM_KEY)
    if stored is None:
        return table, False
    if digest(table) != stored.decode(errors="replace"):
        raise DamagedResultFile(
            f"{path}: damaged: its rows do not match the checksum written with them"
        )
    return table, True


def verify(path: str | Path) -> bool:
    """Whether ``path`` reads back and matches its checksum (``True``), or reads back with
    no checksum to check (``False``: unverified); :class:`DamagedResultFile` otherwise."""
    return _read_checked(path)[1]


def write(records: Sequence[dict[str, Any]], path: str | Path, kind: str = "results") -> Path:
    """Write ``records`` to the Parquet file ``path``."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(to_table(records, kind), p)
    return p


def read_table(path: str | Path) -> pa.Table:
    """A results file or sweep point as a table of :func:`schema`; a file written before the
    schema existed (JSON-string scenario and report, inferred columns) is rebuilt from its
    stored scenario and report. :class:`DamagedResultFile` if it does not read back or
    does not match its checksum."""
    table = _read_checked(path)[0]
    meta = table.schema.metadata or {}
    if SCHEMA_VERSION_KEY in meta:
        return table
    from incastlab.result.legacy import upgrade

    kind = meta.get(b"incastlab.kind", b"results").decode()
    return to_table(upgrade(table.to_pylist()), kind)


def decode(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of a table with their JSON columns as nested data again."""
    nested = json_columns()
    out = []
    for row in rows:
        for c in nested:
            if isinstance(row.get(c), str):
                row[c] = json.loads(row[c])
        out.append(row)
    return out


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a results file or sweep point."""
    return decode(read_table(path).to_pylist())
