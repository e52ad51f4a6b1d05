"""The result of one run, the same shape for every backend.

A :class:`Result` holds the normalized scenario, the seed, the incastlab version, the backend's
name and the backend's full report; :meth:`Result.record` is its one flat shape for JSON output
and Parquet files (defined in :mod:`incastlab.result.record`), :meth:`Result.row` the headline
part of it for tables.
"""

from __future__ import annotations

# Light modules (pandas and pyarrow load inside their functions) whose functions are public
# here: ``incastlab.result.load``, ``incastlab.result.aggregate``.
from incastlab.result.frame import load
from incastlab.result.record import SCHEMA_VERSION
from incastlab.result.run import Result
from incastlab.result.stats import aggregate, mean_ci

__all__ = ["SCHEMA_VERSION", "Result", "aggregate", "load", "mean_ci"]
