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
    Goodput, completion times, timeouts, drops... A backend that cannot know a figure (a real
    network has no drop counter per queue, the model no block list) leaves it null.
per-block and per-flow lists (:data:`LISTS`)
    ``block_times_s``, ``block_timeouts``, ``flow_completion_s``, ``flow_timeouts``...
coordinates
    The scenario's keys as columns (:mod:`incastlab.scenario.columns`): ``seed``,
    ``transport``, ``topology.senders``, ``topology.buffer.bytes``, ``tcp.rto_min_s``...
detail
    ``scenario`` (the normalized scenario) and ``report`` (the backend's full report), as
    nested data here and as JSON text in Parquet.

Units. Every time is float seconds and its name ends in ``_s``, measured or configured
(``tcp.rto_min_s``); sizes are bytes and rates bits per second. The exact normalized scenario,
the numbers a sweep point's key hashes, stays in ``scenario``.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

from incastlab.units import PS_PER_S

if TYPE_CHECKING:
    from incastlab.result import Result

#: Bumped whenever a column is added, removed, renamed or changes type.
SCHEMA_VERSION = 4

# Column kinds; :mod:`incastlab.result.schema` maps each to an Arrow type.
INT, FLOAT, STR, BOOL, JSON = "int", "float", "str", "bool", "json"
INTS, FLOATS, STRS, FLOATS2 = "list<int>", "list<float>", "list<str>", "list<list<float>>"

IDENTITY: tuple[tuple[str, str], ...] = (
    ("schema_version", INT),
    ("backend", STR),
    ("version", STR),
)
POINT: tuple[tuple[str, str], ...] = (("key", STR), ("params", JSON), ("wall_s", FLOAT))
#: Counters of NDP's switches and endpoints (``ndp_<name>``), null for TCP.
NDP_FIELDS = (
    "data_packets",
    "trimmed",
    "bounced",
    "dropped",
    "pulls",
    "nacks",
    "retx_nack",
    "retx_bounce",
    "retx_timeout",
    "timeouts",
)
#: What the analytical model answers (``model_<name>``), null for the other backends.
MODEL_FIELDS: tuple[tuple[str, str], ...] = (
    ("regime", STR),
    ("onset", INT),
    ("sru", INT),
    ("block_time_s", FLOAT),
    ("timeouts_per_block", FLOAT),
    ("dominant", STR),
    ("ignored", STRS),
)
#: The key-value store's cluster-wide figures (``kv_<name>``; times in seconds), null for
#: other workloads. Loads and utilizations are shares of a host's link, averaged over hosts.
KV_FIELDS: tuple[tuple[str, str], ...] = (
    ("gets", INT),
    ("gets_per_s_per_host", FLOAT),
    ("offered_load", FLOAT),
    ("carried_load", FLOAT),
    ("utilization", FLOAT),
    ("peak_utilization_1ms", FLOAT),
    ("drops_per_s_per_host", FLOAT),
    ("fabric_drops_per_s", FLOAT),
    ("timeouts_per_s", FLOAT),
    ("retransmits_per_s_per_host", FLOAT),
    ("latency_p50_s", FLOAT),
    ("latency_p99_s", FLOAT),
    ("latency_p999_s", FLOAT),
    ("puts", INT),
    ("put_latency_p50_s", FLOAT),
    ("put_latency_p99_s", FLOAT),
    ("goodput_bps", FLOAT),
)
#: Per-host lists of the key-value store (``kv_host_<name>``), in host order.
KV_HOST_FIELDS = ("drops_per_s", "rx_utilization", "peak_utilization_1ms", "timeouts_per_s")
METRICS: tuple[tuple[str, str], ...] = (
    ("senders", INT),
    ("workload", STR),
    ("goodput_bps", FLOAT),
    ("goodput_fraction", FLOAT),
    ("link_bps", INT),
    ("duration_s", FLOAT),
    ("app_bytes", INT),
    ("blocks", INT),
    ("block_time_median_s", FLOAT),
    ("block_time_max_s", FLOAT),
    ("blocks_with_timeouts", INT),
    ("fct_max_s", FLOAT),
    ("optimal_s", FLOAT),
    ("fct_overhead", FLOAT),
    ("queries", INT),
    ("query_fct_mean_s", FLOAT),
    ("query_fct_p99_s", FLOAT),
    ("timeouts", INT),
    ("fast_recoveries", INT),
    ("retx_fast", INT),
    ("retx_timeout", INT),
    ("ecn_reductions", INT),
    ("bottleneck_marks", INT),
    ("drops", INT),
    ("bottleneck_drops", INT),
    ("bottleneck_max_bytes", INT),
    ("bottleneck_utilization", FLOAT),
    ("background_bps", FLOAT),
    ("pfc_pauses", INT),
    ("retransmitted_segments", INT),
    ("truncated", BOOL),
    ("events", INT),
    *((f"ndp_{k}", INT) for k in NDP_FIELDS),
    *((f"model_{k}", kind) for k, kind in MODEL_FIELDS),
    *((f"kv_{k}", kind) for k, kind in KV_FIELDS),
)
LISTS: tuple[tuple[str, str], ...] = (
    ("block_times_s", FLOATS),
    ("block_timeouts", INTS),
    ("flow_completion_s", FLOATS),
    ("flow_timeouts", INTS),
    ("timeout_runs", INTS),
    ("query_bytes", INTS),
    ("query_fct_s", FLOATS),
    ("response_times_s", FLOATS2),
    *((f"kv_host_{k}", FLOATS) for k in KV_HOST_FIELDS),
)
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
    if kind == INT:
        return int(v)
    if kind == FLOAT:
        return float(v)
    if kind == BOOL:
        return bool(v)
    return v


def _seconds(ps: Any) -> float:
    return float(ps) / PS_PER_S


def _metrics(r: Result) -> dict[str, Any]:
    rep = r.report
    blocks = [_seconds(t) for t in rep["block_times"]] if "block_times" in rep else None
    flows = rep.get("flows")
    fcts = [None if f.get("fct") is None else _seconds(f["fct"]) for f in flows or []]
    done = [x for x in fcts if x is not None]
    queries = sorted(_seconds(t) for _, t in rep["query_fcts"]) if "query_fcts" in rep else None
    bn = rep.get("bottleneck") or {}
    link = rep.get("link_bps")
    goodput = rep.get("goodput_bps")
    block_timeouts = rep.get("block_timeouts")
    optimal = r.optimal_s if "base_latency" in rep and link else None
    ndp = rep.get("ndp") or {}
    model = rep.get("model") or {}
    kv = rep.get("kv") or {}
    values: dict[str, Any] = {
        "senders": rep.get("senders"),
        "workload": rep.get("workload"),
        "goodput_bps": goodput,
        "goodput_fraction": goodput / link if goodput is not None and link else None,
        "link_bps": link,
        "duration_s": _seconds(rep["duration"]) if "duration" in rep else None,
        "app_bytes": rep.get("app_bytes"),
        "blocks": None if blocks is None else len(blocks),
        "block_time_median_s": statistics.median(blocks) if blocks else None,
        "block_time_max_s": max(blocks) if blocks else None,
        "blocks_with_timeouts": (
            None if block_timeouts is None else sum(1 for t in block_timeouts if t > 0)
        ),
        "fct_max_s": max(done) if done else None,
        "optimal_s": optimal,
        "fct_overhead": r.fct_overhead if optimal else None,
        "queries": None if queries is None else len(queries),
        "query_fct_mean_s": statistics.fmean(queries) if queries else None,
        "query_fct_p99_s": (
            queries[min(len(queries) - 1, int(0.99 * len(queries)))] if queries else None
        ),
        "bottleneck_marks": bn.get("marks"),
        "bottleneck_drops": bn.get("drops"),
        "bottleneck_max_bytes": bn.get("max_bytes"),
        **{f"ndp_{k}": ndp.get(k) for k in NDP_FIELDS},
        **{f"model_{k}": model.get(k) for k, _ in MODEL_FIELDS},
        **{f"kv_{k}": _kv_value(kv, k) for k, _ in KV_FIELDS},
    }
    out = {n: _cast(kind, values[n] if n in values else rep.get(n)) for n, kind in METRICS}
    out.update(
        {
            "block_times_s": blocks,
            "block_timeouts": block_timeouts,
            "flow_completion_s": None if flows is None else fcts,
            "flow_timeouts": None if flows is None else [f.get("timeouts") for f in flows],
            "timeout_runs": rep.get("timeout_runs"),
            "query_bytes": None if queries is None else [int(b) for b, _ in rep["query_fcts"]],
            "query_fct_s": (
                None if queries is None else [_seconds(t) for _, t in rep["query_fcts"]]
            ),
            "response_times_s": (
                None
                if rep.get("response_times") is None
                else [[_seconds(t) for t in b] for b in rep["response_times"]]
            ),
            **{
                f"kv_host_{k}": [float(h[k]) for h in kv["per_host"]] if kv else None
                for k in KV_HOST_FIELDS
            },
        }
    )
    return out


def _kv_value(kv: dict[str, Any], name: str) -> Any:
    """A cluster-wide figure of the key-value report (latencies in seconds)."""
    if not kv:
        return None
    if "latency_" in name:
        # A report from before puts has no put latencies.
        t = kv.get(name.removesuffix("_s"))
        return None if t is None else _seconds(t)
    return kv.get(name)


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
