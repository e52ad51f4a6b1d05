"""incast doctor: a capture of a known scenario in, the scenario back out within what the
evidence allows today (sender count exact; response size and link rate within 10%; RTT within
2x; where RTOmin times out above the RTT-driven timeout, RTOmin within 10%, the buffer within
2x and the replica's goodput within 25% of the capture's; below it RTOmin reported as a bound
that holds the truth); a healthy fan-in is no incast; captures nothing can be inferred from
are refused in one line. Captures are small and the fit tries few RTOmins to keep this fast."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from incastlab.backends.sim import simulate
from incastlab.cli import main
from incastlab.doctor import EvidenceError, diagnose
from incastlab.units import parse_rate, parse_size, parse_time

MS = 10**9
#: The RTOmins the fit tries here (the command's default tries 14, 1 ms..1 s).
CANDIDATES = (1 * MS, 10 * MS, 200 * MS)


def _capture(tmp: Path, name: str, scenario: dict[str, Any]) -> Path:
    path = tmp / f"{name}.pcap"
    simulate(scenario, pcap=path)
    return path


def _known(
    senders: int, sru: str, link: str, buffer: str, rto_min: str, blocks: int = 4
) -> dict[str, Any]:
    return {
        "seed": 7,
        "topology": {"senders": senders, "link": link, "buffer": buffer, "rtt": "100us"},
        "tcp": {"profile": "linux", "rto_min": rto_min},
        "workload": {"kind": "sync_read", "sru": sru, "blocks": blocks},
    }


def _within(got: float, want: float, ratio: float) -> bool:
    return want / ratio <= got <= want * ratio


def _shown(scenario: dict[str, Any], e: dict[str, Any]) -> None:
    topo, wl = scenario["topology"], scenario["workload"]
    assert e["senders"] == topo["senders"]
    assert e["workload"] == "sync_read"
    assert _within(e["response"], parse_size(wl["sru"]), 1.1), e
    assert _within(e["link"], parse_rate(topo["link"]), 1.1), e
    assert _within(e["rtt"], parse_time(topo["rtt"]), 2.0), e


def test_a_200ms_incast_comes_back_within_its_tolerances(tmp_path: Path) -> None:
    scenario = _known(16, "64KB", "100Mbps", "32KB", "200ms")
    d = diagnose(
        str(_capture(tmp_path, "slow", scenario)),
        seeds=(1,),
        remedies=False,
        rto_candidates=CANDIDATES,
    )
    e = {k: v.value for k, v in d.estimates.items()}
    _shown(scenario, e)
    assert e["rto_min"] == 200 * MS and d.estimates["rto_min"].confidence != "bound"
    assert _within(e["buffer"], parse_size("32KB"), 2.0), d.estimates["buffer"]
    assert _within(d.replica.goodput_bps, d.capture.goodput_bps, 1.25), (d.capture, d.replica)
    assert d.incast, d.why


def test_an_rto_min_under_the_rtt_driven_timeout_is_reported_as_a_bound(
    tmp_path: Path,
) -> None:
    scenario = _known(16, "64KB", "100Mbps", "32KB", "10ms")
    d = diagnose(
        str(_capture(tmp_path, "fast", scenario)),
        seeds=(1,),
        remedies=False,
        rto_candidates=CANDIDATES,
    )
    _shown(scenario, {k: v.value for k, v in d.estimates.items()})
    rto = d.estimates["rto_min"]
    assert rto.confidence == "bound" and rto.evidence.startswith("bounded"), rto
    assert rto.lo is not None and rto.hi is not None
    assert rto.lo <= 10 * MS <= rto.hi < 200 * MS, rto


def test_a_1ms_rto_min_is_bounded_not_given_as_a_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _known(12, "128KB", "1Gbps", "48KB", "1ms")
    path = _capture(tmp_path, "onems", scenario)
    d = diagnose(str(path), seeds=(1,), remedies=False, rto_candidates=CANDIDATES)
    _shown(scenario, {k: v.value for k, v in d.estimates.items()})
    rto = d.estimates["rto_min"]
    assert rto.confidence == "bound" and rto.lo == 0 and MS <= (rto.hi or 0) <= 20 * MS, rto
    assert (
        main(
            [
                "doctor",
                str(path),
                "--seeds",
                "1",
                "--no-remedies",
                "--rto-min-candidates",
                "1ms,10ms",
            ]
        )
        == 0
    )
    assert "≤ " in capsys.readouterr().out


def test_a_healthy_fan_in_is_no_incast_and_gets_no_remedies(tmp_path: Path) -> None:
    path = _capture(tmp_path, "healthy", _known(16, "64KB", "1Gbps", "4MB", "200ms"))
    d = diagnose(str(path), seeds=(1,), rto_candidates=(MS,))
    assert not d.incast
    assert d.why.startswith("no incast"), d.why
    assert d.remedies is None


def test_the_cli_writes_a_replica_that_runs_and_json_with_the_normalized_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _capture(tmp_path, "run", _known(8, "128KB", "1Gbps", "32KB", "10ms", blocks=3))
    out = tmp_path / "diag"
    assert (
        main(
            [
                "doctor",
                str(path),
                "--seeds",
                "1",
                "--no-remedies",
                "--json",
                "--rto-min-candidates",
                "10ms",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    j = json.loads(capsys.readouterr().out)
    assert j["estimates"]["senders"]["value"] == 8
    assert j["scenario"]["topology"]["senders"] == 8
    assert j["scenario"]["seed"] == 1 and j["version"]
    assert (out / "diagnosis.json").exists()
    assert main(["sim", str(out / "replica.toml"), "--json", "-q"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["senders"] == 8


def test_the_help_shows_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--help"]) == 0
    text = capsys.readouterr().out
    assert "incast doctor run.pcap" in text and "--rto-min-candidates" in text


def test_captures_without_an_incast_to_infer_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = _capture(tmp_path, "one", _known(1, "64KB", "1Gbps", "64KB", "200ms", blocks=2))
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
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
