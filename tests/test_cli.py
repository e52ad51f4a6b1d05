"""The `incast` command: tables, JSON, Parquet, plots, and exit code 2 on bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import incastlab
from incastlab.cli import main, parse_senders
from incastlab.result.store import read_parquet


def test_parse_senders() -> None:
    assert parse_senders("1,2,4") == [1, 2, 4]
    assert parse_senders("1..4,8") == [1, 2, 3, 4, 8]
    assert parse_senders("4..16:4") == [4, 8, 12, 16]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("1,-3", "--senders: '-3' in '1,-3' is negative"),
        ("1..-3", "--senders: '1..-3' is negative"),
        ("4..16:-4", "--senders: '4..16:-4' is negative"),
        # A range written with a dash is not a negative number: it cannot be read.
        ("1-4", "--senders: cannot read '1-4'"),
    ],
)
def test_a_negative_sender_count_is_called_negative(spec: str, message: str) -> None:
    with pytest.raises(incastlab.ScenarioError) as e:
        parse_senders(spec)
    assert str(e.value).startswith(message)


def test_table_has_one_row_per_sender_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--senders", "1,2,4", "--sru", "64KB", "--blocks", "3"]) == 0
    out = capsys.readouterr().out
    assert "goodput" in out
    rows = [line for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [r.split()[0] for r in rows] == ["1", "2", "4"]


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sim", "--senders", "1,8", "--block", "1MB", "--blocks", "3", "--json", "--seed", "5"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["senders"] for r in rows] == [1, 8]
    for r in rows:
        assert {"senders", "goodput_bps", "timeouts", "events", "seed", "version"} <= set(r)
        assert r["scenario"]["workload"]["block"] == 1_000_000
        assert r["seed"] == 5


def test_json_is_byte_identical_across_runs() -> None:
    argv = ["incast", "sim", "--senders", "4,16", "--sru", "32KB", "--blocks", "4", "--json"]
    a = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    b = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert a == b and a.strip().startswith("[")


def test_parquet_and_plot(tmp_path: Path) -> None:
    out, png = tmp_path / "r.parquet", tmp_path / "g.png"
    argv = ["sim", "--senders", "1,2", "--sru", "16KB", "--blocks", "2", "-q"]
    assert main([*argv, "--out", str(out), "--plot", str(png)]) == 0
    rows = read_parquet(out)
    assert [r["senders"] for r in rows] == [1, 2]
    assert rows[0]["scenario"]["workload"]["sru"] == 16_000
    assert rows[0]["seed"] == 1 and rows[0]["version"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_scenario_file_with_a_sender_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.toml"
    f.write_text('[topology]\nsenders = "2..3"\n[workload]\nsru = "8KB"\nblocks = 2\n')
    assert main(["sim", str(f), "--json"]) == 0
    assert [r["senders"] for r in json.loads(capsys.readouterr().out)] == [2, 3]


def test_flags_override_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.toml"
    f.write_text('[topology]\nsenders = 2\nbuffer = "4KB"\n[workload]\nsru = "8KB"\nblocks = 1\n')
    assert main(["sim", str(f), "--buffer", "100pkt", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["scenario"]["topology"]["buffer"] == {"bytes": None, "packets": 100}


def test_incast_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--flow-size", "90000B", "--senders", "10", "--link", "10Gbps"]) == 0
    out = capsys.readouterr().out
    assert "last FCT" in out and "vs optimal" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["sim", "--set", "topology.bufer=4KB"], "did you mean 'topology.buffer'"),
        (["sim", "--buffer", "64"], "--buffer: '64' is malformed"),
        (["sim", "--link", "0Gbps"], "topology.link: rate must be positive"),
        (["sim", "--senders", "0"], "topology.senders: must be between 1"),
        (["sim", "--senders", "a..b"], "--senders: cannot read"),
        (["sim", "--sru", "0KB"], "workload.sru: must be positive"),
        (["sim", "missing.toml"], "cannot read scenario file"),
        (["sim", "--senders", "1,-3"], "--senders: '-3' in '1,-3' is negative"),
        # An unlimited port never drops: the model's timeouts and the remedies' sizes are
        # undefined there, so both say what they need instead of failing on a missing size.
        (
            ["model", "--senders", "1..4", "--sru", "64KB", "--buffer", "unlimited"],
            "topology.buffer: the model needs a finite buffer",
        ),
        (
            ["model", "--senders", "4", "--set", "topology.receiver_buffer=unlimited"],
            "topology.receiver_buffer: the model needs a finite buffer",
        ),
        (
            ["mitigate", "--senders", "4", "--sru", "64KB", "--buffer", "unlimited"],
            "topology.buffer: incast mitigate sizes its remedies from the buffer",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert "Traceback" not in err


def test_event_budget_stops_with_a_clear_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--senders", "8", "--max-events", "1000"]) == 1
    err = capsys.readouterr().err
    assert "run.max_events = 1000" in err


def test_simulated_time_budget(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--senders", "16", "--max-time", "50ms"]) == 1
    assert "run.max_time" in capsys.readouterr().err


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time process ``pid`` has used (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_ctrl_c_stops_a_long_run_promptly() -> None:
    argv = [sys.executable, "-X", "faulthandler", "-m", "incastlab.cli", "sim"]
    argv += ["--senders", "64", "--blocks", "100000"]
    # A suite started in the background (`cmd &` in a script) inherits SIGINT ignored, and a
    # Python started with it ignored never installs its KeyboardInterrupt handler: the
    # child gets the default disposition back, as a terminal's foreground job has it.
    p = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # Ctrl-C during a long run, not during start-up: wait until the run has used a CPU
    # second beyond its imports (on a loaded machine start-up alone can take seconds).
    deadline = time.monotonic() + 60
    while _cpu_seconds(p.pid) < 2.5 and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.1)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        # Make it dump where every thread is (faulthandler on SIGABRT), then fail with that.
        p.send_signal(signal.SIGABRT)
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        pytest.fail(f"no exit 30 s after Ctrl-C; stderr: {err[-4000:]!r}")
    assert time.monotonic() - t0 < 5
    assert p.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err


def test_help_has_examples() -> None:
    out = subprocess.run(
        ["incast", "sim", "--help"], capture_output=True, text=True, check=True, env=os.environ
    ).stdout
    assert "examples:" in out and "--rto-min 1ms" in out


def test_vary_runs_one_series_per_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "v.png"
    argv = ["sim", "--senders", "1,8", "--blocks", "2", "--vary", "tcp.rto_min=200ms,1ms"]
    assert main([*argv, "--json", "--plot", str(png)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["series"], r["senders"]) for r in rows] == [
        ("rto_min 200ms", 1),
        ("rto_min 200ms", 8),
        ("rto_min 1ms", 1),
        ("rto_min 1ms", 8),
    ]
    assert rows[2]["scenario"]["tcp"]["rto_min"] == 10**9
    assert png.exists()


def test_vary_needs_two_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--vary", "tcp.rto_min=1ms"]) == 2
    assert "--vary: give at least two values" in capsys.readouterr().err


def test_model_overlay_and_sru_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "o.png"
    argv = ["sim", "--senders", "1,4", "--sru", "16KB,32KB", "--blocks", "2", "--model"]
    assert main([*argv, "--plot", str(png), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["series"] for r in rows} == {"sru 16KB", "sru 32KB"}
    assert png.exists()
