"""The scenario as flat, typed columns: what a stored result carries as its coordinates.

Derived from the keys the simulator core declares (:data:`incastlab.scenario.KEYS`), so a key
added to the core becomes a column with no edit here. One column per key, under its dotted
path, in the key's base unit: bytes, bits per second, or, for times, float *seconds* with the
name suffixed ``_s`` (``tcp.rto_min_s`` = 0.2), like every measured time in a record. A queue
limit is two columns (``topology.buffer.bytes``, ``topology.buffer.packets``), also when it is
unset, and so is a rate cap (``topology.host_rate_cap.share``, ``.bps``); an empirical CDF and
a described topology (``topology.file``) are their JSON text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from incastlab.scenario.keys import KEYS
from incastlab.units import PS_PER_S

#: Column kinds (:mod:`incastlab.result.schema` maps each to an Arrow type).
INT, FLOAT, STR, BOOL = "int", "float", "str", "bool"


def _plain_kind(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return STR
    kinds = {s.get("type") for s in schema.get("anyOf", [schema])} - {"null", None}
    by_type = {"integer": INT, "number": FLOAT, "boolean": BOOL, "string": STR}
    return by_type.get(kinds.pop(), STR) if len(kinds) == 1 else STR


def _limit_part(part: str) -> Callable[[Any], Any]:
    return lambda v: None if v is None else v.get(part)


def _columns_of(path: str, key: dict[str, Any]) -> list[tuple[str, str, Callable[[Any], Any]]]:
    """(column, kind, value of the column from the key's normalized value) for one key."""
    unit = key["unit"]
    if unit in ("time", "time_or_off"):
        return [(f"{path}_s", FLOAT, lambda v: None if v is None else v / PS_PER_S)]
    if unit == "limit":
        return [(f"{path}.{part}", INT, _limit_part(part)) for part in ("bytes", "packets")]
    if unit in ("cdf", "topology_file", "times"):
        return [(path, STR, lambda v: None if v is None else json.dumps(v))]
    if unit == "rate_cap":
        return [
            (f"{path}.share", FLOAT, _limit_part("share")),
            (f"{path}.bps", INT, _limit_part("bps")),
        ]
    if unit in ("size", "rate"):
        return [(path, INT, lambda v: v)]
    return [(path, _plain_kind(key["schema"]), lambda v: v)]


@functools.cache
def _table() -> tuple[tuple[str, str, tuple[str, ...], Callable[[Any], Any]], ...]:
    out: list[tuple[str, str, tuple[str, ...], Callable[[Any], Any]]] = []
    for name, key in KEYS.items():
        if key["unit"] == "section":
            for sub, k in key["keys"].items():
                for col, kind, get in _columns_of(f"{name}.{sub}", k):
                    out.append((col, kind, (name, sub), get))
        else:
            for col, kind, get in _columns_of(name, key):
                out.append((col, kind, (name,), get))
    return tuple(out)


def columns() -> tuple[tuple[str, str], ...]:
    """Every coordinate column, in the core's declaration order, with its kind."""
    return tuple((col, kind) for col, kind, _, _ in _table())


def values(normalized: dict[str, Any]) -> dict[str, Any]:
    """A normalized scenario's coordinates, by column (a key it lacks is ``None``)."""
    out: dict[str, Any] = {}
    for col, _, path, get in _table():
        node: Any = normalized
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        out[col] = get(node)
    return out
