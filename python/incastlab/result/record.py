"""The record: the one flat shape of one run's result, for every backend and every output.

``--json`` prints records, ``incast sim --out`` and every other Parquet file stores them (see
:mod:`incastlab.result.schema` for their Arrow types), and a sweep point is a record with its
sweep fields filled in. A record's columns, in order:

identity
    ``schema_version``, ``backend`` (sim, emulate, bench, model), ``version`` (incastlab's).
sweep point
    ``key`` (the point's content hash), ``params`` (its coordinates as the spec wrote them,
    ``{"tcp.rto_min": "1ms"}``) and ``wall_s``; null outside sweeps.
headline metrics (:data:`METRICS`)
    Goodput, completion times, timeouts, drops..., then NDP's counters (``ndp_*``), the
    model's answers (``model_*``) and each workload's figures (``kv_*``, ``shuffle_*``). A
    backend that cannot know a figure (a real network has no drop counter per queue, the
    model no block list) leaves it null, and so does a run the figure does not concern.
per-block, per-flow, per-host and per-reducer lists (:data:`LISTS`)
    ``block_times_s``, ``block_timeouts``, ``flow_completion_s``, ``kv_host_drops_per_s``,
    ``shuffle_reducer_times_s``...
coordinates
    The scenario's keys as columns (:mod:`incastlab.scenario.columns`): ``seed``,
    ``transport``, ``topology.senders``, ``topology.buffer.bytes``, ``tcp.rto_min_s``...
detail
    ``scenario`` (the normalized scenario) and ``report`` (the backend's full report), as
    nested data here and as JSON text in Parquet.

The metric and list columns are the engine's (``_core.report_columns()``, from
``incast_sim::report_columns``), as the coordinates are the scenario's keys: each says its
kind, unit and where it sits in a report (a path such as ``kv.latency_p50`` or
``flows[].fct``, maybe aggregated: ``max`` of ``flows[].fct`` is ``fct_max_s``), or names a
computation of :data:`COMPUTATIONS`. A figure the engine adds becomes a column here with no
edit; only the model's (a backend of this package) are declared here, in the same shape.

Units. Every time is float seconds and its name ends in ``_s``, measured or configured
(``tcp.rto_min_s``); sizes are bytes and rates bits per second. The exact normalized scenario,
the numbers a sweep point's key hashes, stays in ``scenario``.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.units import PS_PER_S

if TYPE_CHECKING:
    from incastlab.result import Result

#: Bumped whenever a column is added, removed, renamed or changes type (5: the shuffle's; 6: the
#: fabric's, PFC pauses and victims; 7: stalls without a timeout, ``probe_stalls``).
SCHEMA_VERSION = 7

# Column kinds; :mod:`incastlab.result.schema` maps each to an Arrow type.
INT, FLOAT, STR, BOOL, JSON = "int", "float", "str", "bool", "json"
INTS, FLOATS, STRS, FLOATS2 = "list<int>", "list<float>", "list<str>", "list<list<float>>"
_SCALARS = (INT, FLOAT, STR, BOOL)

IDENTITY: tuple[tuple[str, str], ...] = (
    ("schema_version", INT),
    ("backend", STR),
    ("version", STR),
)
POINT: tuple[tuple[str, str], ...] = (("key", STR), ("params", JSON), ("wall_s", FLOAT))

#: The engine's report columns (``incast_sim::report_columns``): ``{name, kind, unit, doc,
#: scope, path, op, simulated, optional}`` each, in record order within scalars and lists.
ENGINE: tuple[dict[str, Any], ...] = tuple(json.loads(_core.report_columns()))

#: What the analytical model answers (``model_<name>``), null for the other backends: a
#: backend of this package, not the engine's, so declared here in the engine's shape. Its
#: report holds seconds already (no unit to convert).
MODEL_FIELDS: tuple[tuple[str, str], ...] = (
    ("regime", STR),
    ("onset", INT),
    ("sru", INT),
    ("block_time_s", FLOAT),
    ("timeouts_per_block", FLOAT),
    ("dominant", STR),
    ("ignored", STRS),
)
MODEL: tuple[dict[str, Any], ...] = tuple(
    {"name": f"model_{k}", "kind": kind, "unit": None, "scope": "backend", "path": f"model.{k}"}
    for k, kind in MODEL_FIELDS
)


_ENGINE_SCALARS = [c for c in ENGINE if c["kind"] in _SCALARS]
#: The headline metrics' columns, in record order: the engine's figures of every run and of
#: the transports, the model's, then the workloads'.
METRIC_COLUMNS: tuple[dict[str, Any], ...] = (
    *(c for c in _ENGINE_SCALARS if c["scope"] != "workload"),
    *MODEL,
    *(c for c in _ENGINE_SCALARS if c["scope"] == "workload"),
)
#: The per-block, per-flow, per-host and per-reducer lists' columns.
LIST_COLUMNS: tuple[dict[str, Any], ...] = tuple(c for c in ENGINE if c["kind"] not in _SCALARS)
METRICS: tuple[tuple[str, str], ...] = tuple((c["name"], c["kind"]) for c in METRIC_COLUMNS)
LISTS: tuple[tuple[str, str], ...] = tuple((c["name"], c["kind"]) for c in LIST_COLUMNS)
DETAIL: tuple[tuple[str, str], ...] = (("scenario", JSON), ("report", JSON))


def coordinates() -> tuple[tuple[str, str], ...]:
    """The coordinate columns and their kinds, as the scenario declares them
    (:mod:`incastlab.scenario.columns`)."""
    from incastlab.scenario import columns as scenario_columns

    return scenario_columns.columns()


def columns() -> tuple[tuple[str, str], ...]:
    """Every column of a record, in order, with its kind."""
    coords = coordinates()
    # ``seed`` and ``transport`` are coordinates; keep them beside the identity.
    first = [c for c in coords if "." not in c[0]]
    rest = [c for c in coords if "." in c[0]]
    return (*IDENTITY, *first, *POINT, *METRICS, *LISTS, *rest, *DETAIL)


def _cast(kind: str, v: Any) -> Any:
    if v is None:
        return None
    if kind.startswith("list<"):
        return [_cast(kind[5:-1], x) for x in v]
    if kind == INT:
        return int(v)
    if kind == FLOAT:
        return float(v)
    if kind == BOOL:
        return bool(v)
    return v


def _seconds(ps: Any) -> Any:
    """Picoseconds (or lists of them) in seconds."""
    if ps is None:
        return None
    if isinstance(ps, list):
        return [_seconds(t) for t in ps]
    return float(ps) / PS_PER_S


def _step(node: Any, name: str) -> Any:
    if isinstance(node, dict):
        return node.get(name)
    if isinstance(node, list) and name.isdigit() and int(name) < len(node):
        return node[int(name)]
    return None


def read(report: dict[str, Any], path: str) -> Any:
    """The value at ``path`` of ``report`` (``a.b``; ``items[].c`` maps ``c`` over the list
    ``items``; a number indexes an array), ``None`` where it is missing."""

    def go(node: Any, parts: list[str]) -> Any:
        for i, part in enumerate(parts):
            if part.endswith("[]"):
                items = _step(node, part[:-2])
                return None if items is None else [go(x, parts[i + 1 :]) for x in items]
            node = _step(node, part)
            if node is None:
                return None
        return node

    return go(report, path.split("."))


def _aggregate(op: str, values: list[Any] | None) -> Any:
    """``op`` (``incast_sim::report_columns::AGGREGATES``) over a list, its nulls skipped."""
    if values is None:
        return None
    present = sorted(v for v in values if v is not None)
    if op == "len":
        return len(values)
    if op == "positive":
        return sum(1 for v in present if v > 0)
    if not present:
        return None
    if op == "median":
        return statistics.median(present)
    if op == "max":
        return present[-1]
    if op == "mean":
        return statistics.fmean(present)
    if op == "p99":
        return present[min(len(present) - 1, int(0.99 * len(present)))]
    raise ValueError(f"report column: unknown aggregate {op!r}")


def _goodput_fraction(r: Result) -> float | None:
    goodput, link = r.report.get("goodput_bps"), r.report.get("link_bps")
    return goodput / link if goodput is not None and link else None


def _optimal(r: Result) -> float | None:
    return r.optimal_s if "base_latency" in r.report and r.report.get("link_bps") else None


def _fct_overhead(r: Result) -> float | None:
    return r.fct_overhead if _optimal(r) else None


#: The computations the engine's columns name (``incast_sim::report_columns::COMPUTATIONS``).
COMPUTATIONS: dict[str, Callable[[Result], Any]] = {
    "goodput_fraction": _goodput_fraction,
    "optimal": _optimal,
    "fct_overhead": _fct_overhead,
}
AGGREGATES = frozenset({"len", "positive", "median", "max", "mean", "p99"})


def value(r: Result, column: dict[str, Any]) -> Any:
    """One report column's value for ``r``: its path read (picoseconds in seconds for a
    column in seconds), aggregated by its op, or its computation; cast to its kind."""
    path, op = column.get("path"), column.get("op")
    if path is None:
        v = COMPUTATIONS[str(op)](r)
    else:
        v = read(r.report, path)
        if column["unit"] == "s":
            v = _seconds(v)
        if op is not None:
            v = _aggregate(op, v)
    return _cast(column["kind"], v)


def _metrics(r: Result) -> dict[str, Any]:
    return {c["name"]: value(r, c) for c in (*METRIC_COLUMNS, *LIST_COLUMNS)}


def record(
    r: Result,
    *,
    key: str | None = None,
    params: dict[str, Any] | None = None,
    wall_s: float | None = None,
) -> dict[str, Any]:
    """``r`` as one flat record (see the module's docstring); ``key``, ``params`` and
    ``wall_s`` for a sweep point. JSON-ready: ``json.dumps`` takes it as it is."""
    values: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "backend": r.backend,
        "version": r.version,
        "key": key,
        "params": params,
        "wall_s": wall_s,
        **_metrics(r),
        "scenario": r.scenario,
        "report": r.report,
    }
    from incastlab.scenario import columns as scenario_columns

    leaves = scenario_columns.values(r.scenario)
    out: dict[str, Any] = {}
    for name, kind in columns():
        if name in values:
            out[name] = values[name]
        else:
            out[name] = _cast(kind, leaves.get(name))
    return out
