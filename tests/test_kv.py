"""The key-value store's workload (kv_gets) and sender rate caps, through the Python face."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import incastlab
from conftest import run, scenario
from incastlab.cli import main
from incastlab.result.store import write_parquet
from incastlab.scenario import ScenarioError, from_dict
from incastlab.studies.mitigate import BY_NAME

EXAMPLE = Path(__file__).parent.parent / "examples" / "riak-one-switch.toml"

#: A small cluster: 6 hosts, R = 3, a fifth of a second of gets.
SMALL = dict(
    workload__kind="kv_gets",
    topology__senders=6,
    workload__kv_duration="200ms",
    topology__buffer="unlimited",
    topology__shared_buffer="1MB",
)


def test_a_quiet_cluster_carries_its_load_and_answers_in_milliseconds() -> None:
    r = run(**SMALL, workload__kv_utilization=0.1)
    rec = r.record()
    assert rec["workload"] == "kv_gets"
    assert rec["kv_gets"] > 20
    assert rec["kv_offered_load"] == pytest.approx(0.1, abs=0.04)
    assert rec["kv_carried_load"] == pytest.approx(rec["kv_offered_load"], rel=0.15)
    assert rec["kv_drops_per_s_per_host"] == 0
    # Three 100 KB replies over an idle 1 Gbps link: about 2.5 ms.
    assert 1e-3 < rec["kv_latency_p50_s"] < 10e-3
    assert rec["kv_latency_p50_s"] <= rec["kv_latency_p99_s"] <= rec["kv_latency_p999_s"]
    assert len(rec["kv_host_drops_per_s"]) == 6
    assert rec["goodput_bps"] == pytest.approx(rec["kv_goodput_bps"])


def test_drops_and_tail_latency_grow_with_utilization_on_a_small_buffer() -> None:
    quiet = run(**SMALL, workload__kv_utilization=0.2).record()
    busy = run(**SMALL, workload__kv_utilization=0.7).record()
    assert busy["kv_utilization"] > 2.5 * quiet["kv_utilization"]
    assert busy["kv_drops_per_s_per_host"] > 10 * max(quiet["kv_drops_per_s_per_host"], 1)
    assert busy["kv_latency_p99_s"] > 3 * quiet["kv_latency_p99_s"]


def test_the_same_cluster_and_seed_give_the_same_bytes() -> None:
    a = run(**SMALL, workload__kv_utilization=0.5, workload__jitter="50us")
    b = run(**SMALL, workload__kv_utilization=0.5, workload__jitter="50us")
    assert json.dumps(a.report, sort_keys=True) == json.dumps(b.report, sort_keys=True)
    c = run(**SMALL, workload__kv_utilization=0.5, workload__jitter="50us", seed=2)
    assert c.report["kv"] != a.report["kv"]


def test_puts_fan_the_value_out_and_are_timed_apart_from_gets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = run(**SMALL, workload__kv_utilization=0.1, workload__kv_put_fraction=0.5)
    rec = r.record()
    assert rec["kv_puts"] > 10 and rec["kv_gets"] > 10
    assert abs(rec["kv_puts"] - rec["kv_gets"]) < 0.5 * (rec["kv_puts"] + rec["kv_gets"])
    # The same load per host as gets alone: a put's value lands on the replicas.
    assert rec["kv_offered_load"] == pytest.approx(0.1, abs=0.04)
    assert rec["kv_carried_load"] == pytest.approx(rec["kv_offered_load"], rel=0.15)
    # Three 100 KB values out of one 1 Gbps NIC, then the acknowledgments.
    assert 1e-3 < rec["kv_put_latency_p50_s"] <= rec["kv_put_latency_p99_s"] < 20e-3
    gets_only = run(**SMALL, workload__kv_utilization=0.1).record()
    assert gets_only["kv_puts"] == 0 and gets_only["kv_put_latency_p50_s"] == 0
    assert (
        main(
            [
                "sim",
                "--workload",
                "kv_gets",
                "--senders",
                "6",
                "--set",
                "workload.kv_duration=100ms",
                "--set",
                "workload.kv_put_fraction=0.5",
            ]
        )
        == 0
    )
    # The put latency's columns: "put" over "p50"/"p99" over the unit.
    head = capsys.readouterr().out.split("─")[0]
    assert re.search(r"\bput\b", head) and "p99" in head


def test_a_quorum_of_one_answers_faster_than_waiting_for_all_three() -> None:
    every = run(**SMALL, workload__kv_utilization=0.4).record()
    first = run(**SMALL, workload__kv_utilization=0.4, workload__kv_quorum=1).record()
    assert first["kv_latency_p50_s"] < every["kv_latency_p50_s"]


def test_head_of_line_blocking_delays_gets_behind_a_full_send_buffer() -> None:
    kw = dict(SMALL, workload__kv_utilization=0.6, topology__shared_buffer="300KB")
    free = run(**kw).record()
    blocked = run(**kw, workload__kv_hol_blocking=True, workload__kv_send_buffer="64KB").record()
    assert blocked["kv_latency_p50_s"] > free["kv_latency_p50_s"]


@pytest.mark.parametrize(
    ("cap", "most_bps"),
    [("50%", 0.5e9), ("300Mbps", 0.3e9)],
)
def test_a_rate_cap_holds_a_sender_to_its_share_of_the_link(cap: str, most_bps: float) -> None:
    free = run(topology__senders=1, workload__blocks=4, workload__sru="1MB")
    capped = run(
        topology__senders=1, workload__blocks=4, workload__sru="1MB", topology__host_rate_cap=cap
    )
    assert free.goodput_bps > 0.9e9
    assert 0.85 * most_bps < capped.goodput_bps <= most_bps


def test_rate_caps_are_written_as_a_share_or_a_rate() -> None:
    t = scenario(topology__host_rate_cap="80%").normalized()["topology"]
    assert t["host_rate_cap"] == {"share": 0.8, "bps": None}
    t = scenario(topology__host_rate_cap="800Mbps").normalized()["topology"]
    assert t["host_rate_cap"] == {"share": None, "bps": 800_000_000}
    assert scenario(topology__host_rate_cap="off").normalized()["topology"]["host_rate_cap"] is None
    for bad in ("0%", "120%", "fast", "80"):
        with pytest.raises(ScenarioError, match=r"topology\.host_rate_cap"):
            scenario(topology__host_rate_cap=bad)


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        (dict(workload__kv_utilization=1.0), "workload.kv_utilization: 1 offers 100%"),
        (dict(workload__kv_utilization=1.5), "can never be carried"),
        (dict(workload__kv_rate=1000.0), "workload.kv_rate: 1000 gets/s per host offers"),
        (dict(workload__kv_replicas=7), "workload.kv_replicas: 7 replicas need"),
        (dict(workload__kv_quorum=4), "workload.kv_quorum"),
        (dict(background__flows=1), 'set source = "senders" and destination = "peers"'),
    ],
)
def test_impossible_loads_are_one_line_naming_the_field(
    overrides: dict[str, object], needle: str
) -> None:
    with pytest.raises(ScenarioError) as e:
        scenario(**SMALL, **overrides)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)


def test_incast_sim_prints_the_clusters_table_and_stores_its_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kv.parquet"
    argv = [
        "sim",
        str(EXAMPLE),
        "--senders",
        "6",
        "--set",
        "workload.kv_duration=150ms",
        "--set",
        "workload.kv_warmup=50ms",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "key-value gets, 6 hosts, R = 3" in text
    assert "drops/s" in text and "p99.9" in text  # the header stacks "get" over "p99.9"
    rows = incastlab.result.load(out)
    assert rows["kv_gets"].iloc[0] > 0
    assert len(rows["kv_host_rx_utilization"].iloc[0]) == 6
    assert main([*argv[:-2], "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    first = rec[0] if isinstance(rec, list) else rec
    assert "kv_latency_p99_s" in json.dumps(first)


def test_fabric_knobs_belong_to_multi_switch_topologies() -> None:
    with pytest.raises(ScenarioError, match=r"topology\.uplink: applies to switch-to-switch"):
        scenario(topology__uplink="10Gbps")
    t = scenario(
        topology__kind="leaf_spine", topology__uplink="10Gbps", topology__fabric_buffer="1MB"
    ).normalized()["topology"]
    assert (t["uplink"], t["fabric_buffer"]["bytes"]) == (10_000_000_000, 1_000_000)
    fabric = {
        **SMALL,
        "topology__shared_buffer": None,
        "topology__buffer": "256KB",
        "topology__kind": "leaf_spine",
        "topology__hosts_per_leaf": 3,
        "topology__spines": 1,
    }
    r = run(**fabric, workload__kv_utilization=0.1)
    assert r.report["kv"]["completed"] == r.report["kv"]["gets"] > 0


def test_mitigate_offers_the_rate_cap() -> None:
    m = BY_NAME["rate-cap-80"]
    assert m.overrides({}) == {"topology.host_rate_cap": "80%"}


def test_the_examples_load(tmp_path: Path) -> None:
    sc = from_dict(
        json.loads(json.dumps({"workload": {"kind": "kv_gets"}, "topology": {"senders": 20}}))
    )
    assert sc.normalized()["workload"]["kv_replicas"] == 3
    assert write_parquet([run(**SMALL)], tmp_path / "one.parquet").exists()
