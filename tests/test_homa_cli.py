"""Homa from the command line: `--transport homa` over a range of senders, deterministic, its
counters in the JSON, its section's keys refused by name, and the emulator refusing it."""

from __future__ import annotations

import json

import pytest

from incastlab.cli import main

HOMA = ["sim", "--transport", "homa", "--workload", "incast", "--flow-size", "64KB"]


def _rows(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    return json.loads(capsys.readouterr().out)


def test_sim_runs_homa_from_1_to_64_senders_and_every_response_completes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*HOMA, "--senders", "1,8,64", "--json"]) == 0
    rows = _rows(capsys)
    assert [r["scenario"]["topology"]["senders"] for r in rows] == [1, 8, 64]
    for r in rows:
        rep = r["report"]
        assert all(f["bytes"] == 64_000 and f["fct"] is not None for f in rep["flows"])
        assert rep["homa"]["data_packets"] >= 45 * r["scenario"]["topology"]["senders"]
        assert rep["homa"]["unsched_levels"] >= 1


def test_runs_are_deterministic_and_the_incast_optimization_marks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*HOMA, "--senders", "32", "--set", "homa.incast_threshold=8", "--json"]
    assert main(argv) == 0
    a = _rows(capsys)
    assert main(argv) == 0
    b = _rows(capsys)
    assert a[0]["report"] == b[0]["report"]
    assert a[0]["report"]["homa"]["marked"] == 24


def test_the_table_names_homa(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*HOMA, "--senders", "4"]) == 0
    assert "homa (8 levels, incast optimization off)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ([*HOMA, "--senders", "2", "--set", "homa.priorities=9"], "homa.priorities"),
        ([*HOMA, "--senders", "2", "--set", "topology.pfc=true"], "topology.pfc"),
        ([*HOMA, "--senders", "2", "--pcap", "x.pcap"], "--pcap: Homa frames have no pcap"),
        (["emulate", "--transport", "homa", "--senders", "2"], "transport: Homa is not"),
    ],
)
def test_wrong_combinations_exit_2_with_one_line_naming_the_key(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
