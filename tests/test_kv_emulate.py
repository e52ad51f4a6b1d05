"""The key-value store on real TCP without namespaces: the generator on loopback addresses
runs the simulator's plan, the emulator's report has the simulator's shape, and the
emulator's rate caps follow the simulator's rule. (The namespaced runs are in
tests/test_emulate.py, marked needs_root.)"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOMY
from incastlab import _core, simulate
from incastlab.real import capacity, emulate, kv
from incastlab.real.testbed import build
from incastlab.scenario import from_dict


def _store(**workload: Any) -> dict[str, Any]:
    return {
        "topology": {"senders": 4, "link": "100Mbps", "buffer": "64KB"},
        "workload": {
            "kind": "kv_gets",
            "kv_utilization": 0.2,
            "value_size": "20KB",
            "kv_duration": "600ms",
            "kv_warmup": "100ms",
            **workload,
        },
    }


def _loopback(n: int) -> list[tuple[str | None, str]]:
    return [(None, f"127.0.7.{i + 1}:0") for i in range(n)]


def test_the_generator_runs_every_planned_get_on_loopback() -> None:
    s = from_dict(_store()).normalized()
    cluster = _core.KvCluster(json.dumps(s), _loopback(4))
    planned = cluster.planned()
    # 4 hosts × 0.2 × 100 Mbps / (8 × 3 × 3/4 × 20 KB) ≈ 55.6 gets/s each, over 0.6 s.
    assert cluster.gets_per_s() == pytest.approx(0.2 * 100e6 / (8 * 3 * 0.75 * 20_000))
    assert 80 < planned < 200
    assert cluster.quorum() == 3
    out = json.loads(cluster.run(time.monotonic_ns(), 10.0))
    assert out["issued"] == planned and not out["truncated"] and out["outstanding"] == 0
    measured = sum(h["gets"] for h in out["per_host"])
    assert 0 < measured < planned, "the warm-up's gets run but are not counted"
    assert len(out["latencies_us"]) == measured, "every measured get reached its quorum"
    assert all(h["received_bytes"] == h["offered_bytes"] for h in out["per_host"])
    assert out["end_us"] >= 100_000
    with pytest.raises(RuntimeError, match="run already"):
        cluster.run(time.monotonic_ns(), 1.0)


def test_the_generator_refuses_a_host_list_of_the_wrong_length() -> None:
    s = from_dict(_store()).normalized()
    with pytest.raises(ValueError, match=r"hosts: 3 given for a cluster of 4"):
        _core.KvCluster(json.dumps(s), _loopback(3))
    with pytest.raises(ValueError, match=r"hosts: expected host:port"):
        _core.KvCluster(json.dumps(s), [(None, "nowhere")] * 4)


def _counters(n: int, port: tuple[int, int], tcp: dict[str, int]) -> dict[str, Any]:
    return {"ports": [port] * n, "nics": [port] * n, "tcp": [tcp] * n, "at": 0.0}


def test_the_emulators_report_has_the_simulators_shape_and_numbers() -> None:
    sc = from_dict(_store(kv_duration="300ms", kv_warmup="0s"))
    s = sc.normalized()
    sim_kv = simulate(sc).report["kv"]
    cluster = _core.KvCluster(json.dumps(s), _loopback(4))
    measured = {
        "per_host": [
            {
                "gets": 10,
                "offered_bytes": 400_000,
                "received_bytes": 400_000,
                "peak_bytes_1ms": 6250,
            }
        ]
        * 4,
        "latencies_us": [2000, 1000, 3000, 4000],
        "end_us": 400_000,
    }
    before = _counters(4, (0, 0), {"TcpExt.TCPTimeouts": 1, "Tcp.RetransSegs": 5})
    after = _counters(4, (2_000_000, 8), {"TcpExt.TCPTimeouts": 3, "Tcp.RetransSegs": 9})
    got = kv.report(s, cluster, measured, before, after)
    assert set(got) == set(sim_kv)
    assert set(got["per_host"][0]) == set(sim_kv["per_host"][0])
    h = got["per_host"][0]
    # 2 MB through the port in 0.4 s of a 100 Mbps link: 40%; 8 drops and 2 timeouts in 0.4 s.
    assert h["rx_utilization"] == pytest.approx(0.4)
    assert h["drops_per_s"] == pytest.approx(20.0)
    assert h["timeouts_per_s"] == pytest.approx(5.0)
    assert h["retransmits_per_s"] == pytest.approx(10.0)
    assert h["peak_utilization_1ms"] == pytest.approx(0.5)
    # Offered over the 0.3 s of arrivals, carried over the 0.4 s to the last reply.
    assert h["offered_load"] == pytest.approx(400_000 * 8 / 100e6 / 0.3)
    assert h["carried_load"] == pytest.approx(400_000 * 8 / 100e6 / 0.4)
    # Nearest rank, in picoseconds, as the simulator reports them.
    assert got["latency_p50"] == 2000 * 1_000_000
    assert got["latency_p99"] == got["latency_max"] == 4000 * 1_000_000
    assert got["timeouts_per_s"] == pytest.approx(20.0)
    assert got["gets"] == 40 and got["completed"] == 4


@pytest.mark.parametrize(
    ("cap", "burst", "want"),
    [
        (None, None, (100_000_000, build.TBF_BURST)),
        ("80%", None, (80_000_000, build.TBF_BURST)),
        ("30Mbps", "10KB", (30_000_000, 10_000)),
        ("1Gbps", None, (100_000_000, build.TBF_BURST)),
    ],
)
def test_a_hosts_nic_is_shaped_at_its_cap(
    cap: str | None, burst: str | None, want: tuple[int, int]
) -> None:
    topology: dict[str, Any] = {"link": "100Mbps"}
    if cap:
        topology["host_rate_cap"] = cap
    if burst:
        topology["host_rate_burst"] = burst
    s = from_dict({"topology": topology}).normalized()
    assert build.nic_shaper(s, 100_000_000) == want
    assert build.cap_note(s).startswith("none") == (cap is None)


def test_the_emulator_honours_rate_caps_and_the_stores_keys() -> None:
    sc = from_dict(
        {
            **_store(kv_replicas=2, kv_quorum=1, kv_placement="uniform"),
            "topology": {"senders": 4, "host_rate_cap": "80%", "host_rate_burst": "6KB"},
        }
    )
    assert emulate.EmulateBackend().unsupported(sc) == ["topology.rtt"]
    jittered = from_dict(_store(kv_hol_blocking=True))
    assert "workload.kv_hol_blocking" in emulate.EmulateBackend().unsupported(jittered)


def test_a_store_with_captures_or_puts_is_refused_in_one_line() -> None:
    with pytest.raises(emulate.EmulationError, match="a key-value store or a shuffle has none"):
        emulate.run(from_dict(_store()), pcap_dir="caps")
    with pytest.raises(emulate.EmulationError, match=r"^workload.kv_put_fraction: puts are not"):
        emulate.run(from_dict(_store(kv_put_fraction=0.3)))
    s = from_dict(_store(kv_put_fraction=0.3)).normalized()
    with pytest.raises(ValueError, match=r"^workload.kv_put_fraction: puts are not emulated"):
        _core.KvCluster(json.dumps(s), _loopback(4))


def test_a_store_needs_the_square_of_its_hosts_and_is_refused_in_one_line() -> None:
    store = from_dict({**_store(), "topology": {"senders": 20}})
    need = emulate.check_capacity(store, ROOMY)
    # 380 connections: both ends in this process, a listener per host; every host learns
    # every other's address.
    assert need.fds == 2 * 380 + 20 + capacity.BASE_FDS
    assert need.neigh_entries == 380 and need.netns == 21 and need.bridge_ports == 20
    small = dataclasses.replace(ROOMY, neigh_gc_thresh3=1024)
    big = from_dict({**_store(), "topology": {"senders": 40}})
    with pytest.raises(capacity.CapacityError) as e:
        emulate.check_capacity(big, small)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("topology.senders = 40: the testbed needs 1560")
    assert msg.endswith("emulate a store of at most 32 hosts")
    most = from_dict({**_store(), "topology": {"senders": 32}})
    emulate.check_capacity(most, small)  # the count it names fits
    # 11 hosts: 2 × 110 + 11 + 256 = 487 descriptors; 12 need 532.
    few = dataclasses.replace(ROOMY, nofile_hard=500)
    with pytest.raises(capacity.CapacityError, match=r"at most 11 hosts"):
        emulate.check_capacity(most, few)


def test_the_side_by_side_study_tells_the_simulator_what_the_testbed_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from incastlab.cli import main
    from incastlab.validation import kv_points as study
    from incastlab.validation.kv_report import rising

    capped, plain = study.Point(0.5, "80%"), study.Point(0.2, "off")
    assert (capped.key, plain.key) == ("u50-cap80", "u20-nocap")
    o = study.sim_overrides(capped, 19e-6)
    # One bucket per NIC: the cap's, two frames deep, as the emulator's tbf.
    assert o["topology.host_rate_burst"] == f"{build.TBF_BURST}B"
    assert "topology.nic_burst" not in o and o["topology.rtt"] == "19us"
    assert study.sim_overrides(plain, 19e-6)["topology.nic_burst"] == f"{build.TBF_BURST}B"
    base = Path(__file__).parent.parent / "examples" / "riak-emulated.toml"
    s = study.scenario(base, capped, "25Mbps", o).normalized()
    assert s["topology"]["link"] == 25_000_000 and s["topology"]["host_rate_cap"]["share"] == 0.8
    assert s["tcp"]["profile"] == "linux" and s["workload"]["response_header"] == 24
    assert rising([1, 2, 2, 3]) == pytest.approx(2.5 / 3)
    assert rising([3, 2, 1]) == 0
    argv = ["validate", "kv", "--out", str(tmp_path), "--skip-real", "--scenario", str(base)]
    assert main(argv) == 2
    assert "no kernel runs stored" in capsys.readouterr().err
