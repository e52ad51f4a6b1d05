"""incast doctor: a capture of a known scenario in, the scenario back out within the stated
tolerances (sender count exact; response size, link rate and RTOmin within 10%; RTT and buffer
within 2x; the replica's goodput within 25% of the capture's); a healthy fan-in is no incast;
captures nothing can be inferred from are refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from incastlab.backends.sim import simulate
from incastlab.cli import main
from incastlab.doctor import EvidenceError, diagnose
from incastlab.units import parse_rate, parse_size, parse_time


def _capture(tmp: Path, name: str, scenario: dict[str, Any]) -> tuple[Path, Any]:
    path = tmp / f"{name}.pcap"
    r = simulate(scenario, pcap=path)
    return path, r


def _known(senders: int, sru: str, link: str, buffer: str, rto_min: str, rtt: str = "100us",
           blocks: int = 10, profile: str = "linux") -> dict[str, Any]:
    return {
        "seed": 7,
        "topology": {"senders": senders, "link": link, "buffer": buffer, "rtt": rtt},
        "tcp": {"profile": profile, "rto_min": rto_min},
        "workload": {"kind": "sync_read", "sru": sru, "blocks": blocks},
    }


def _within(got: float, want: float, ratio: float) -> bool:
    return want / ratio <= got <= want * ratio


KNOWN = [
    ("16x64KB-100M-10ms", _known(16, "64KB", "100Mbps", "32KB", "10ms")),
    ("8x256KB-1G-200ms", _known(8, "256KB", "1Gbps", "64KB", "200ms", blocks=6)),
    ("12x128KB-1G-1ms", _known(12, "128KB", "1Gbps", "48KB", "1ms")),
]


@pytest.mark.parametrize(("name", "scenario"), KNOWN, ids=[k for k, _ in KNOWN])
def test_a_known_scenario_comes_back_within_its_tolerances(
    tmp_path: Path, name: str, scenario: dict[str, Any]
) -> None:
    path, truth = _capture(tmp_path, name, scenario)
    d = diagnose(str(path), profile="linux", seeds=(1, 2), remedies=False)
    e = {k: v.value for k, v in d.estimates.items()}
    topo, tcp, wl = scenario["topology"], scenario["tcp"], scenario["workload"]
    assert e["senders"] == topo["senders"]
    assert e["workload"] == "sync_read"
    assert _within(e["response"], parse_size(wl["sru"]), 1.1), e
    assert _within(e["link"], parse_rate(topo["link"]), 1.1), e
    assert _within(e["rto_min"], parse_time(tcp["rto_min"]), 1.1), d.estimates["rto_min"]
    assert _within(e["rtt"], parse_time(topo["rtt"]), 2.0), d.estimates["rtt"]
    assert _within(e["buffer"], parse_size(topo["buffer"]), 2.0), d.estimates["buffer"]
    assert _within(d.replica.goodput_bps, d.capture.goodput_bps, 1.25), (d.capture, d.replica)
    assert d.incast, d.why


def test_a_healthy_fan_in_is_no_incast_and_gets_no_remedies(tmp_path: Path) -> None:
    path, _ = _capture(tmp_path, "healthy", _known(16, "64KB", "1Gbps", "4MB", "200ms"))
    d = diagnose(str(path), seeds=(1,))
    assert not d.incast
    assert d.why.startswith("no incast"), d.why
    assert d.remedies is None


def test_the_cli_writes_a_replica_that_runs_and_json_with_the_normalized_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _capture(tmp_path, "run", _known(8, "128KB", "1Gbps", "32KB", "10ms", blocks=4))
    out = tmp_path / "diag"
    assert main(["doctor", str(path), "--seeds", "1", "--no-remedies", "--json",
                 "--out", str(out)]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["estimates"]["senders"]["value"] == 8
    assert j["scenario"]["topology"]["senders"] == 8
    assert j["scenario"]["seed"] == 1 and j["version"]
    assert (out / "diagnosis.json").exists()
    assert main(["sim", str(out / "replica.toml"), "--json", "-q"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["senders"] == 8


def test_captures_without_an_incast_to_infer_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, _ = _capture(tmp_path, "one", _known(1, "64KB", "1Gbps", "64KB", "200ms", blocks=2))
    with pytest.raises(EvidenceError, match="1 flow into"):
        diagnose(str(one))
    assert main(["doctor", str(one)]) == 2
    err = capsys.readouterr().err.strip()
    assert "1 flow into" in err and len(err.splitlines()) == 1
    text = tmp_path / "notes.pcap"
    text.write_text("not a capture\n")
    assert main(["doctor", str(text)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["doctor", str(tmp_path / "missing.pcap")]) == 2
