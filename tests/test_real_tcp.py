"""Real TCP on loopback: `incast serve` and `incast bench` end to end, in the result schema."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from incastlab.cli import main


@pytest.fixture
def server() -> Iterator[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "incastlab.cli",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-request",
            "10MB",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("listening on "), line
    yield line.split()[-1]
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 0


def test_bench_reads_blocks_from_real_servers(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "--servers", f"{server},{server},{server},{server}", "--sru", "256KB"]
    assert main([*argv, "--blocks", "10", "--warmup", "2", "--json"]) == 0
    (r,) = json.loads(capsys.readouterr().out)
    assert r["backend"] == "bench" and r["blocks"] == 10 and r["senders"] == 4
    assert r["app_bytes"] == 10 * 4 * 256_000
    assert len(r["response_times_s"]) == 10 and all(len(b) == 4 for b in r["response_times_s"])
    # A block ends when its slowest server's answer does.
    for block, responses in zip(r["block_times_s"], r["response_times_s"], strict=True):
        assert block >= max(responses) * 0.999
    assert r["scenario"]["workload"]["sru"] == 256_000 and r["goodput_bps"] > 0


def test_bench_splits_a_block_by_the_engines_rule(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "--servers", ",".join([server] * 3), "--block", "100001B", "--blocks", "2"]
    assert main([*argv, "--warmup", "0", "--json"]) == 0
    (r,) = json.loads(capsys.readouterr().out)
    # 33334 + 33334 + 33333: the block exactly, as the simulator reads it (not 3 × ceil).
    assert r["app_bytes"] == 2 * 100_001
    assert r["scenario"]["workload"]["block"] == 100_001
    assert r["scenario"]["workload"]["sru"] is None


def test_bench_names_what_is_wrong(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--servers", server, "--sru", "20MB", "--blocks", "1"]) == 1
    assert "refused the request (TooLarge)" in capsys.readouterr().err
    assert main(["bench", "--servers", "nowhere", "--blocks", "1"]) == 2
    assert "expected host:port" in capsys.readouterr().err


def test_serve_refuses_to_bind_a_bad_address(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--listen", "localhost"]) == 2
    assert "--listen: expected host:port" in capsys.readouterr().err
    if os.geteuid() != 0:
        assert main(["serve", "--listen", "127.0.0.1:1"]) == 1
