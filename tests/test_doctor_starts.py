"""incast doctor reads when the servers start answering: a client that asks them one after
another (the replica's ``workload.request_stagger``) and servers that wait before answering
(``workload.jitter``), from captures of the simulator run with known values, and reads a
synchronized start as none of either (so the simulator's own captures keep their replicas)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from incastlab.backends.sim import simulate
from incastlab.doctor.infer import infer
from incastlab.doctor.replica import scenario_dict
from incastlab.doctor.starts import direct_starts, fit_jitter, replica_trace
from incastlab.trace import TraceOptions, analyze

US = 10**6


def _estimates(tmp: Path, workload: dict[str, Any], buffer: str = "256KB") -> dict[str, Any]:
    scenario = {
        "seed": 3,
        "topology": {"senders": 16, "link": "100Mbps", "buffer": buffer, "rtt": "100us"},
        "tcp": {"profile": "linux"},
        "workload": workload,
    }
    path = tmp / "c.pcap"
    simulate(scenario, pcap=path)
    trace = analyze(str(path), TraceOptions())
    e = infer(trace)
    e.update(direct_starts(trace, e["link"].value, e["workload"].value))
    direct = e.get("jitter")
    e["jitter"] = fit_jitter(e, trace, lambda x: replica_trace(x, "linux", 1))
    e["direct jitter"] = direct
    return e


def test_servers_that_answer_together_show_no_stagger_and_no_jitter(tmp_path: Path) -> None:
    e = _estimates(tmp_path, {"kind": "sync_read", "sru": "64KB", "blocks": 4})
    assert e["request_stagger"].value == 0 and e["jitter"].value == 0, (
        e["request_stagger"],
        e["jitter"],
    )
    e = _estimates(tmp_path, {"kind": "incast", "flow_size": "64KB"})
    assert "request_stagger" not in e and e["jitter"].value == 0, e["jitter"]


@pytest.mark.parametrize(("buffer", "jitter_us"), [("32KB", 2_000), ("256KB", 10_000)])
def test_a_staggered_client_and_waiting_servers_are_read_back(
    tmp_path: Path, buffer: str, jitter_us: int
) -> None:
    e = _estimates(
        tmp_path,
        {
            "kind": "sync_read",
            "sru": "64KB",
            "blocks": 6,
            "request_stagger": "300us",
            "jitter": f"{jitter_us}us",
        },
        buffer,
    )
    # The requests' spread: within 10% of 300 us.
    assert 270 * US <= e["request_stagger"].value <= 330 * US, e["request_stagger"]
    # Uniform waits: the direct reading counts every first segment's queue as a wait (seen:
    # 2.5x at 2 ms behind 32 KB, 2.7x at 10 ms behind 256 KB); fitted, within 2x.
    assert e["direct jitter"].value > e["jitter"].value
    assert jitter_us * US / 2 <= e["jitter"].value <= 2 * jitter_us * US, e["jitter"]
    est = {**e, "buffer": None}
    replica = scenario_dict(est, 32_000, 200 * 10**9, "linux")
    assert replica["workload"]["request_stagger"].endswith("us")
    assert replica["workload"]["jitter"].endswith("us")
