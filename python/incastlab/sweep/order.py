"""The natural order of coordinate values ("200us" before "1ms", "64KB" before "1MB") and of
stored points: light on purpose, for tables printed without any figure."""

from __future__ import annotations

from typing import Any


def natural_key(v: Any) -> tuple[int, Any]:
    """Numbers, times, sizes and rates by magnitude first, any other text after, by text."""
    from incastlab.units import parse_rate, parse_size, parse_time

    if isinstance(v, int | float) and not isinstance(v, bool):
        return (0, v)
    for parse in (parse_time, parse_size, parse_rate):
        try:
            return (0, parse(v))
        except (ValueError, TypeError):
            pass
    return (1, str(v))


def params_key(row: dict[str, Any]) -> list[tuple[int, Any]]:
    """Sort key of a stored point: its coordinates in natural order."""
    return [natural_key(v) for v in row["params"].values()]
