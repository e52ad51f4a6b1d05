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
    if unit in ("cdf", "size_cdf", "topology_file", "times", "hosts", "sizes"):
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

    # Sections nest sections (roce.dcqcn): every key at any depth is a column.
    def add(keys: dict[str, dict[str, Any]], path: tuple[str, ...]) -> None:
        for name, key in keys.items():
            at = (*path, name)
            if key["unit"] == "section":
                add(key["keys"], at)
                continue
            for col, kind, get in _columns_of(".".join(at), key):
                out.append((col, kind, at, get))

    add(KEYS, ())
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


def of_key(dotted: str) -> list[str]:
    """The columns of the scenario key ``dotted`` (``topology.buffer`` →
    ``topology.buffer.bytes``, ``topology.buffer.packets``); empty for no key."""
    return [col for col, _, path, _ in _table() if ".".join(path) == dotted]


def key_of(column: str) -> str | None:
    """The scenario key a column comes from (``tcp.rto_min_s`` → ``tcp.rto_min``)."""
    return next((".".join(path) for col, _, path, _ in _table() if col == column), None)


def value(column: str, text: str) -> Any:
    """``text`` as a value of ``column``: a number in the column's base unit (bytes, bits per
    second, seconds) as it is, or a value in the key's own units (``32KB``, ``1ms``,
    ``1Gbps``, ``80%``) converted to the column's; ``ValueError`` naming what the column
    holds when it is neither."""
    from incastlab.scenario.parse import value_of
    from incastlab.series import parse_assignment

    entry = next(((k, p, g) for c, k, p, g in _table() if c == column), None)
    if entry is None:
        raise ValueError(f"{column!r} is not a scenario column")
    kind, path, get = entry
    raw = parse_assignment(f"{column}={text}", "--where")[1]
    if kind in (INT, FLOAT) and isinstance(raw, int | float) and not isinstance(raw, bool):
        return raw
    if kind == STR and not isinstance(raw, str):
        raw = text
    try:
        out = get(value_of(".".join(path), raw))
    except Exception as e:  # ScenarioError, UnitError: the key's own message
        if kind == STR:
            return text
        raise ValueError(f"{text!r} is not a value of {column} ({_holds(column, kind)})") from e
    if out is None:
        raise ValueError(f"{text!r} is not a value of {column} ({_holds(column, kind)})")
    return out


def _holds(column: str, kind: str) -> str:
    if column.endswith("_s"):
        return "seconds, or a time such as 1ms"
    if column.endswith(".packets"):
        return "a number of packets"
    if column.endswith(".bytes"):
        return "bytes, or a size such as 64KB"
    if column.endswith(".bps"):
        return "bits per second, or a rate such as 1Gbps"
    return {INT: "an integer", FLOAT: "a number", BOOL: "true or false"}.get(kind, "text")
