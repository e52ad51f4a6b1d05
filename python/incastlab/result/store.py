"""Results on disk: Parquet, one record per run (:mod:`incastlab.result.record`), written with
the one schema of :mod:`incastlab.result.schema`; each row carries its normalized scenario, seed
and incastlab version (the version is also in the file's metadata)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from incastlab.result import Result, schema


def to_table(results: Sequence[Result]) -> pa.Table:
    """``results`` as one table of records."""
    return schema.to_table([r.record() for r in results], "results")


def write_parquet(results: Sequence[Result], path: str | Path) -> Path:
    """Write ``results`` to ``path`` (a .parquet file)."""
    return schema.write([r.record() for r in results], path, "results")


def read_parquet(path: str | Path) -> list[dict[str, Any]]:
    """The records of a results file, ``scenario`` and ``report`` decoded."""
    return schema.read_records(path)


def read_results(path: str | Path) -> list[Result]:
    """The results stored in ``path``, as :class:`Result` again (scenario, report, version and
    backend)."""
    return [
        Result(r["scenario"], r["report"], r["version"], backend=r["backend"])
        for r in read_parquet(path)
    ]
