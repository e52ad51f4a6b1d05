"""Empirical size distributions for query traffic, read from CDF files.

A CDF file has one point per line, ``size cumulative-probability``, separated by spaces, tabs or
a comma; ``#`` starts a comment. Sizes carry a unit (``10KB``, ``1.5MiB``) or are bare integers
counted in bytes, as in the CDF files that circulate with DCTCP, pFabric and HPCC workloads.
Probabilities are fractions in [0, 1], or percentages when the last one is 100. Sizes between
points are interpolated linearly; the first point's probability is a mass at its size::

    # web search (illustrative)
    6KB     0.15
    13KB    0.20
    1MB     0.80
    30MB    1
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.files import read_text
from incastlab.units import UnitError, parse_size, shown

FIELD = "workload.query_size_cdf"


def _size(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        if len(value.strip()) > 18:
            raise ValueError(f"{where}: a size of at most 18 digits, got {shown(value)}")
        return int(value)
    try:
        return parse_size(value)
    except UnitError as e:
        raise ValueError(f"{where}: {e}") from None


def _prob(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{where}: expected a probability, got {shown(value)}")
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: expected a probability, got {shown(value)}") from None
    if p != p or p in (float("inf"), float("-inf")):
        raise ValueError(f"{where}: expected a probability, got {shown(value)}")
    return p


def parse_cdf_points(points: list[Any], source: str = FIELD) -> list[tuple[int, float]]:
    """Points ``[[size, p], ...]`` with sizes in bytes; percentages become fractions.

    Ordering and range are checked by the simulator core, which names the field.
    """
    out: list[tuple[int, float]] = []
    for i, point in enumerate(points):
        where = f"{source}: point {i}"
        if not isinstance(point, list | tuple) or len(point) != 2:
            raise ValueError(f"{where}: expected [size, probability], got {shown(point)}")
        out.append((_size(point[0], where), _prob(point[1], where)))
    if out and out[-1][1] == 100.0:
        out = [(s, p / 100.0) for s, p in out]
    return out


def read_size_cdf(path: str | Path) -> list[tuple[int, float]]:
    """The points of a CDF file."""
    p = Path(path)
    text = read_text(p, "CDF file")  # an InputFileError is a ValueError naming the file
    rows: list[list[str]] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        cols = line.split()
        if len(cols) != 2:
            raise ValueError(
                f"{p.name}, line {len(rows) + 1} of data: expected 'size probability', "
                f"got {shown(line)}"
            )
        rows.append(cols)
    if not rows:
        raise ValueError(f"{p.name}: no points")
    return parse_cdf_points(rows, source=p.name)


def flow_sizes(value: Any, names: list[str]) -> Any:
    """A flow-size distribution (``flows.size_cdf``) as the core reads it: one of the built-in
    ``names`` as is; a file's name as its text, which the core parses (so an error names the
    line); points with their sizes in bytes."""
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
        return parse_cdf_points(value, source="flows.size_cdf")
    return value
