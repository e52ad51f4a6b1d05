"""The record's metric columns come from the engine's report descriptor
(`_core.report_columns()`): no figure listed by hand but the model's, the stored names and
types of schema 4 kept, and the shuffle's figures filled for a shuffle and null elsewhere."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from conftest import run
from incastlab import _core
from incastlab.result import record as rec
from incastlab.result.schema import schema


def _words(text: str) -> list[str]:
    return text.split()


#: Schema 4's metric and list columns, as stored: a stored name or type must not change.
V4: dict[str, str] = {
    **dict.fromkeys(
        _words(
            "senders link_bps app_bytes blocks blocks_with_timeouts queries timeouts "
            "fast_recoveries retx_fast retx_timeout ecn_reductions bottleneck_marks drops "
            "bottleneck_drops bottleneck_max_bytes pfc_pauses retransmitted_segments events "
            "model_onset model_sru kv_gets kv_puts"
        ),
        "int64",
    ),
    **{f"ndp_{k}": "int64" for k in _words("data_packets trimmed bounced dropped pulls nacks")},
    **{f"ndp_{k}": "int64" for k in _words("retx_nack retx_bounce retx_timeout timeouts")},
    **dict.fromkeys(
        _words(
            "goodput_bps goodput_fraction duration_s block_time_median_s block_time_max_s "
            "fct_max_s optimal_s fct_overhead query_fct_mean_s query_fct_p99_s "
            "bottleneck_utilization background_bps model_block_time_s model_timeouts_per_block "
            "kv_gets_per_s_per_host kv_offered_load kv_carried_load kv_utilization "
            "kv_peak_utilization_1ms kv_drops_per_s_per_host kv_fabric_drops_per_s "
            "kv_timeouts_per_s kv_retransmits_per_s_per_host kv_latency_p50_s kv_latency_p99_s "
            "kv_latency_p999_s kv_put_latency_p50_s kv_put_latency_p99_s kv_goodput_bps"
        ),
        "double",
    ),
    "workload": "string",
    "model_regime": "string",
    "model_dominant": "string",
    "truncated": "bool",
    "model_ignored": "list<item: string>",
    **dict.fromkeys(
        _words(
            "block_times_s flow_completion_s query_fct_s kv_host_drops_per_s "
            "kv_host_rx_utilization kv_host_peak_utilization_1ms kv_host_timeouts_per_s"
        ),
        "list<item: double>",
    ),
    **dict.fromkeys(
        _words("block_timeouts flow_timeouts timeout_runs query_bytes"), "list<item: int64>"
    ),
    "response_times_s": "list<item: list<item: double>>",
}
SHUFFLE = [
    "shuffle_reducers",
    "shuffle_reducer_time_median_s",
    "shuffle_reducer_time_max_s",
    "shuffle_data_drops",
    "shuffle_ack_drops",
    "shuffle_request_drops",
    "shuffle_reducer_times_s",
]


def test_the_metric_columns_are_the_engines_and_the_models() -> None:
    engine = [c["name"] for c in json.loads(_core.report_columns())]
    model = [f"model_{k}" for k, _ in rec.MODEL_FIELDS]
    names = [n for n, _ in (*rec.METRICS, *rec.LISTS)]
    assert sorted(names) == sorted(engine + model)
    # Within scalars and within lists, the engine's order.
    scalars = {n for n, kind in rec.METRICS}
    assert [n for n in names if n in engine and n in scalars] == [n for n in engine if n in scalars]


def test_every_operation_the_engine_names_is_one_the_record_makes() -> None:
    for c in rec.ENGINE:
        if c["path"] is None:
            assert c["op"] in rec.COMPUTATIONS, c
        elif c["op"] is not None:
            assert c["op"] in rec.AGGREGATES, c
        assert c["kind"] in (*rec._SCALARS, rec.INTS, rec.FLOATS, rec.FLOATS2), c
        assert c["kind"] != rec.FLOATS2 or c["unit"] == "s", c


def test_schema_4_columns_keep_their_names_types_and_order() -> None:
    s = schema()
    assert {n: str(s.field(n).type) for n in V4} == V4
    v4_order = [n for n in s.names if n in V4]
    assert v4_order == [n for n, _ in (*rec.METRICS, *rec.LISTS) if n in V4]
    assert set(s.names) >= set(SHUFFLE)
    assert s.names.index("shuffle_reducers") > s.names.index("kv_goodput_bps")


def _shuffle() -> Any:
    return run(
        topology__senders=4,
        workload__kind="shuffle",
        workload__reducers=4,
        workload__blocks=2,
        workload__sru="20KB",
    )


def test_a_shuffle_record_carries_the_shuffles_figures() -> None:
    r = _shuffle()
    record = r.record()
    sh = r.report["shuffle"]
    times = sorted(t / 1e12 for t in sh["reducer_times"])
    assert record["shuffle_reducers"] == sh["reducers"] == 4
    assert record["shuffle_reducer_times_s"] == [t / 1e12 for t in sh["reducer_times"]]
    assert record["shuffle_reducer_time_max_s"] == times[-1]
    assert record["shuffle_reducer_time_median_s"] == (times[1] + times[2]) / 2
    for side in ("data", "ack", "request"):
        assert record[f"shuffle_{side}_drops"] == sh[f"{side}_drops"]
    assert record["kv_gets"] is None and record["ndp_trimmed"] is None
    table = pa.Table.from_pylist(
        [{n: record[n] for n in SHUFFLE}], schema=pa.schema([schema().field(n) for n in SHUFFLE])
    )
    assert table.column("shuffle_reducers").to_pylist() == [4]


@pytest.mark.parametrize("kind", ["sync_read", "queries"])
def test_other_workloads_leave_the_shuffle_columns_null(kind: str) -> None:
    record = run(topology__senders=2, workload__kind=kind, workload__blocks=2).record()
    assert all(record[n] is None for n in SHUFFLE)


def test_a_path_reads_lists_pairs_and_missing_fields() -> None:
    report = {"flows": [{"fct": 3}, {"fct": None}, {}], "pairs": [[1, 2], [3, 4]], "kv": None}
    assert rec.read(report, "flows[].fct") == [3, None, None]
    assert rec.read(report, "pairs[].1") == [2, 4]
    assert rec.read(report, "kv.gets") is None
    assert rec.read(report, "missing[].x") is None
