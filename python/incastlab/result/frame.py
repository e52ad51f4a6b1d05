"""Results as a pandas DataFrame: a results file, a sweep directory, or several of either."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

PathLike = str | Path


def files(paths: PathLike | Iterable[PathLike]) -> list[Path]:
    """The Parquet files behind ``paths``: a file as it is; a sweep directory's points; any
    other directory's ``*.parquet``, in name order."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    out: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            points = p / "points"
            found = sorted((points if points.is_dir() else p).glob("*.parquet"))
            if not found and not points.is_dir():
                raise FileNotFoundError(f"{p}: no results (neither points/ nor *.parquet)")
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such results file or directory")
    return out


def load(paths: PathLike | Iterable[PathLike]) -> pd.DataFrame:
    """Every record in ``paths`` (a results file, a sweep directory, or a list of either) as
    one DataFrame: one row per run, one typed column per field of the record (integers and
    booleans as pandas' nullable dtypes, so a missing value stays ``<NA>`` without turning
    the column to floats); ``scenario``, ``report`` and ``params`` stay JSON text."""
    import pandas as pd
    import pyarrow as pa

    from incastlab.result.schema import read_table, schema

    tables = [read_table(f) for f in files(paths)]
    if not tables:
        table = schema().empty_table()
    else:
        table = pa.concat_tables(tables, promote_options="permissive")
    nullable = {
        pa.int64(): pd.Int64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }
    return table.to_pandas(types_mapper=nullable.get)
