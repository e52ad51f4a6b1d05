"""incast doctor reads ECN from a capture: the senders' ECN-capable data, the switch's marks
and the receiver's echoes name DCTCP (one echo per mark or fewer) or a classic ECN response
(echoes repeated until CWR), the marking threshold is fitted by simulation, and the replica
runs with both; a capture without ECN gets none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.backends.sim import simulate
from incastlab.doctor import diagnose
from incastlab.doctor.ecn import ecn_estimates
from incastlab.doctor.evidence import read_capture

MS = 10**9


def _capture(tmp: Path, cc: str, ecn: bool, threshold: str = "30KB") -> Path:
    path = tmp / f"{cc}-{ecn}.pcap"
    sc: dict[str, Any] = {
        "seed": 1,
        "topology": {"senders": 8, "link": "1Gbps", "buffer": "256KB", "rtt": "100us"},
        "tcp": {"profile": "linux", "congestion_control": cc, "ecn": ecn},
        "workload": {"kind": "sync_read", "sru": "256KB", "blocks": 4},
    }
    if ecn:
        sc["topology"]["ecn_threshold"] = threshold
    simulate(sc, pcap=path)
    return path


def test_a_dctcp_capture_names_dctcp_and_gets_its_marking_threshold_back(tmp_path: Path) -> None:
    d = diagnose(
        str(_capture(tmp_path, "dctcp", True)),
        seeds=(1,),
        remedies=False,
        rto_candidates=(10 * MS, 200 * MS),
    )
    e = d.estimates
    assert e["ecn"].value is True and e["ecn"].confidence == "high"
    assert e["congestion_control"].value == "dctcp", e["congestion_control"]
    assert 27_000 <= e["ecn_threshold"].value <= 33_000, e["ecn_threshold"]
    assert d.scenario["tcp"]["ecn"] is True
    assert d.scenario["tcp"]["congestion_control"] == "dctcp"
    assert d.scenario["topology"]["ecn_threshold"] == f"{e['ecn_threshold'].value}B"
    assert 0.8 <= d.replica.goodput_bps / d.capture.goodput_bps <= 1.25


def test_repeated_echoes_are_a_classic_ecn_response_not_dctcp(tmp_path: Path) -> None:
    t = read_capture(str(_capture(tmp_path, "cubic", True)))
    e = ecn_estimates(t)
    assert e["ecn"].value is True
    assert "congestion_control" not in e, "a classic response is not named DCTCP"
    assert "echoes" in e["ecn"].evidence and "CWR" in e["ecn"].evidence


def test_a_capture_without_ecn_gets_no_ecn(tmp_path: Path) -> None:
    t = read_capture(str(_capture(tmp_path, "cubic", False)))
    assert ecn_estimates(t) == {}
