"""Empirical size distributions (``workload.query_size_cdf``, ``flows.size_cdf``), read from CDF
files or given as points, by the one parser of the simulator core (``incastlab._core.size_cdf``,
``incast_workload::cdf`` in Rust), so both keys take the same format and refuse alike.

A CDF file has one point per line, ``size cumulative-probability``, separated by spaces, tabs or
a comma; ``#`` starts a comment. Sizes carry a unit (``10KB``, ``1.5MiB``) or are bare integers
counted in bytes, as in the CDF files that circulate with DCTCP, pFabric and HPCC workloads.
Probabilities are fractions in [0, 1], or percentages when the last one is 100. Sizes increase,
probabilities never decrease and end at 1. Sizes between points are interpolated linearly; the
first point's probability is a mass at its size::

    # web search (illustrative)
    6KB     0.15
    13KB    0.20
    1MB     0.80
    30MB    1
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab import _core
from incastlab.files import read_text
from incastlab.units import shown


def parse_cdf_points(points: list[Any]) -> list[tuple[int, float]]:
    """Points ``[[size, p], ...]`` (sizes with units or in bytes, probabilities as fractions or
    percentages) in bytes and fractions, checked; errors name the point. No points: none."""
    if not points:
        return []
    fields: list[tuple[str, str]] = []
    for i, point in enumerate(points):
        if not isinstance(point, list | tuple) or len(point) != 2:
            raise ValueError(f"point {i}: expected [size, probability], got {shown(point)}")
        size, p = point
        if isinstance(size, bool) or isinstance(p, bool):  # str() would make them words
            raise ValueError(f"point {i}: expected [size, probability], got {shown(point)}")
        fields.append((str(size), str(p)))
    return _core.size_cdf(fields)


def read_size_cdf(path: str | Path) -> list[tuple[int, float]]:
    """The points of a CDF file; errors name the file and the line."""
    p = Path(path)
    text = read_text(p, "CDF file")  # an InputFileError is a ValueError naming the file
    try:
        return _core.size_cdf(text)
    except ValueError as e:
        raise ValueError(f"{p.name}, {e}") from None


def flow_sizes(value: Any, names: list[str]) -> Any:
    """A flow-size distribution (``flows.size_cdf``) as the core reads it: one of the built-in
    ``names`` as is; a file's name as its text, which the core parses with the same parser (so
    an error names the line); points in bytes."""
    if isinstance(value, str | Path):
        if str(value) in names:
            return str(value)
        p = Path(value)
        if not p.exists():
            raise ValueError(
                f"{shown(str(value))} is neither a built-in distribution ({', '.join(names)}) "
                "nor a CDF file"
            )
        return {"file": p.name, "text": read_text(p, "CDF file")}
    if isinstance(value, list):
        return parse_cdf_points(value)
    return value
