"""`incast monitor`: interface counters at a fixed interval with measured jitter, TCP
counters once a second, a verdict per second; one clear line when an interface is missing
or disappears."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from incastlab import _core
from incastlab.cli import main
from incastlab.monitor import MonitorRun, summary, verdict, windows


@pytest.fixture
def loopback_traffic() -> Iterator[None]:
    """About 32 Mbps over loopback in 200 KB bursts every 50 ms, for 2.5 s."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def drain() -> None:
        conn, _ = srv.accept()
        with conn:
            while conn.recv(1 << 20):
                pass

    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    c = socket.create_connection(srv.getsockname())

    def send() -> None:
        end = time.monotonic() + 2.5
        while time.monotonic() < end:
            c.sendall(b"x" * 200_000)
            time.sleep(0.05)
        c.close()

    t = threading.Thread(target=send, daemon=True)
    t.start()
    yield
    t.join()
    drainer.join()
    srv.close()


def test_loopback_bursts_are_seen_at_1ms(loopback_traffic: None) -> None:
    m = _core.Monitor("lo", 1_000_000, duration_ns=2_000_000_000)
    time.sleep(2.2)
    run = MonitorRun("lo", None, 1_000_000, line_bps=None)
    run.add(json.loads(m.stop()))
    s = summary(run)
    assert s["samples"] >= 1000, "most 1 ms deadlines met on a loaded 2-core machine"
    assert run.error is None
    # 200 KB every 50 ms: ~32 Mbps on average, each burst far faster than that.
    assert 15e6 < s["avg_bps"] < 60e6, s["avg_bps"]
    assert s["peak_to_avg"] > 5
    assert s["jitter_median_ns"] is not None and s["jitter_median_ns"] < 1e6
    rows = windows(run)
    assert [r["verdict"] for r in rows[:1]] == ["microbursts"]
    # The coarser the average, the less of the bursts it shows.
    ratios = {w["window_ns"]: w["peak_to_avg"] for w in s["peak_to_avg_by_window"]}
    assert ratios[1_000_000] > ratios[10_000_000] > ratios[1_000_000_000] >= 0.9


def test_verdicts() -> None:
    assert verdict(100e6, 1e9, 0.1, 0) == "microbursts"
    assert verdict(100e6, 1e9, 0.1, 5) == "synchronized timeouts: incast suspected"
    assert verdict(900e6, 950e6, 0.9, 5) == "", "timeouts on a busy link are not incast"
    assert verdict(100e6, 200e6, 0.0, 0) == ""


def test_monitor_command_json_parquet_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], loopback_traffic: None
) -> None:
    out, png = tmp_path / "lo.parquet", tmp_path / "lo.png"
    argv = ["monitor", "--iface", "lo", "--duration", "2s", "--json", "--line-rate", "10Gbps"]
    assert main([*argv, "--out", str(out), "--plot", str(png)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert "summary" in lines[-1]
    assert {"avg_bps", "peak_bps", "at_line_rate", "timeouts", "qdisc_drops", "verdict"} <= set(
        lines[0]
    )
    if shutil.which("tc"):
        assert lines[-1]["summary"]["qdisc_drops"] == 0, "loopback's noqueue drops nothing"
    table = pq.read_table(out)
    assert table.num_rows == lines[-1]["summary"]["samples"]
    assert b"incastlab.version" in table.schema.metadata
    assert png.stat().st_size > 10_000


def test_missing_interface_and_namespace_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["monitor", "--iface", "nosuch0", "--duration", "1s"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['incast: error: --iface: no interface "nosuch0" here']
    assert main(["monitor", "--netns", "incastlab-nosuch", "--duration", "1s"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--netns: no namespace" in err[0]
    assert main(["monitor", "--interval", "1us"]) == 2
    assert "--interval" in capsys.readouterr().err


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None,
    reason="creating a veth needs root and ip (iproute2)",
)
def test_an_interface_that_disappears_ends_the_run_with_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"ilmon{os.getpid() % 100000}"
    subprocess.run(
        ["ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}p"], check=True
    )
    try:
        subprocess.run(["ip", "link", "set", name, "up"], check=True)

        def remove() -> None:
            time.sleep(0.5)
            subprocess.run(["ip", "link", "del", name], check=False)

        threading.Thread(target=remove, daemon=True).start()
        assert main(["monitor", "--iface", name, "--duration", "5s"]) == 1
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and f"interface {name} disappeared" in err[0], err
        assert "samples" in captured.out and "verdict" in captured.out
    finally:
        subprocess.run(["ip", "link", "del", name], check=False, capture_output=True)
