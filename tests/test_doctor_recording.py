"""incast doctor on a recording of `incast monitor --record`, alone and beside a capture of
the same event, and the one-page report (--html). Recordings here are built interval by
interval with a known pattern (line-rate bursts, then idle waits of a known length), written
as the monitor writes them, and read back; one is recorded for real on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from incastlab.cli import main
from incastlab.doctor.recording import diagnose_recording
from incastlab.monitor import MonitorRun, write_parquet

LINK = 100_000_000  # bit/s
INTERVAL = 1_000_000  # ns
FULL = LINK // 8 * INTERVAL // 10**9  # bytes one interval carries at line rate


def _recording(tmp: Path, pattern: list[tuple[int, float]], name: str = "rec") -> Path:
    """A recording of ``pattern``: (milliseconds, share of the link) stretches in turn."""
    run = MonitorRun("eth0", None, INTERVAL, "rx", float(LINK), version="test")
    t = 0
    for ms, share in pattern:
        for _ in range(ms):
            t += INTERVAL
            for c, v in (
                ("t_ns", t),
                ("late_ns", 0),
                ("dt_ns", INTERVAL),
                ("rx_bytes", int(FULL * share)),
                ("tx_bytes", 0),
                ("rx_packets", int(FULL * share) // 1500),
                ("tx_packets", 0),
                ("drops", 0),
            ):
                run.samples[c].append(v)
    run.tcp = [
        {"t_ns": 0, **dict.fromkeys(("timeouts", "loss_probes", "spurious_rtos"), 0),
         "retrans_segs": 0, "delivered_ce": 0, "recoveries": 0},
        {"t_ns": t, "timeouts": 0, "loss_probes": 3, "spurious_rtos": 0, "retrans_segs": 9,
         "delivered_ce": 0, "recoveries": 0},
    ]  # fmt: skip
    return write_parquet(run, tmp / f"{name}.parquet")


def _collapse(wait_ms: int, blocks: int = 6) -> list[tuple[int, float]]:
    """Synchronized reads that lose a tail each block: ~40 ms at line rate, the rest of the
    block's flows finishing, then the link idle while a timed-out flow waits."""
    return [(5, 0.0)] + [(40, 1.0), (wait_ms, 0.0), (3, 0.3)] * blocks + [(5, 1.0)]


def test_a_collapse_recording_bounds_rto_min_and_says_incast(tmp_path: Path) -> None:
    d = diagnose_recording(str(_recording(tmp_path, _collapse(200))))
    assert d.incast and "idle" in d.why
    rto = d.estimates["rto_min"]
    # A timeout of 200..243 ms: at most the wait plus the traffic since the one before.
    assert rto.value == 200 * 10**9 and 200 * 10**9 <= rto.hi <= 250 * 10**9
    assert d.figures["recurring_waits"] == 6
    assert (d.figures["retrans_segs"], d.figures["loss_probes"]) == (9, 3)
    # A 10 ms timer: waits of ~8 ms (the tick late) bound it at 10 ms, not at 200.
    short = diagnose_recording(str(_recording(tmp_path, _collapse(9), "short")))
    assert short.estimates["rto_min"].value == 10 * 10**9
    assert short.estimates["rto_min"].hi < 100 * 10**9


def test_a_busy_link_with_short_pauses_is_no_incast(tmp_path: Path) -> None:
    healthy = [(5, 0.0)] + [(50, 0.95), (2, 0.0)] * 10 + [(5, 0.9)]
    d = diagnose_recording(str(_recording(tmp_path, healthy)))
    assert not d.incast and d.why.startswith("no incast")
    quiet = [(5, 0.0)] + [(50, 0.95), (0, 0.0)] * 10 + [(5, 0.9)]
    q = diagnose_recording(str(_recording(tmp_path, quiet, "quiet")))
    assert not q.incast and "no incast signature" in q.why and "rto_min" not in q.estimates


def test_the_command_reads_a_recording_and_refuses_what_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = _recording(tmp_path, _collapse(200))
    assert main(["doctor", str(rec), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["incast"] and out["estimates"]["rto_min"]["value"] == 200 * 10**9
    assert main(["doctor", str(rec)]) == 0
    text = capsys.readouterr().out
    assert "what the recording shows" in text and "≤ " in text
    # A recording has no flows: no replica, so nothing for --html or --out to hold.
    assert main(["doctor", str(rec), "--html", str(tmp_path / "r.html")]) == 2
    assert "needs a capture" in capsys.readouterr().err
    # Nor for the replica's settings: each is refused, not silently ignored.
    for flags in (["--cc", "bbr"], ["--seeds", "2"], ["--profile", "linux"], ["--no-remedies"]):
        assert main(["doctor", str(rec), *flags]) == 2
        assert capsys.readouterr().err.count(flags[0]) == 2
    import pyarrow as pa
    import pyarrow.parquet as pq

    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), other)
    assert main(["doctor", str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a recording of incast monitor" in err and len(err.splitlines()) == 1


def test_a_loopback_recording_made_by_monitor_record_reads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "lo.parquet"
    argv = ["monitor", "--iface", "lo", "--duration", "300ms", "--record", str(rec), "--json"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["doctor", str(rec), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["incast"] is False and out["iface"] == "lo"


def test_the_page_to_forward_holds_the_verdict_the_figure_and_the_replica(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from incastlab.backends.sim import simulate

    cap = tmp_path / "run.pcap"
    scenario = {
        "seed": 7,
        "topology": {"senders": 8, "link": "100Mbps", "buffer": "32KB", "rtt": "100us"},
        "tcp": {"rto_min": "200ms"},
        "workload": {"kind": "sync_read", "sru": "64KB", "blocks": 3},
    }
    simulate(scenario, pcap=cap)
    page = tmp_path / "report.html"
    argv = ["doctor", str(cap), "--seeds", "1", "--rto-min-candidates", "10ms,200ms"]
    assert main([*argv, "--no-remedies", "--html", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    for section in ("What the evidence shows", "The capture beside its replica", "[topology]"):
        assert section in text
    assert text.count("data:image/png;base64,") == 1
    assert "senders = 8" in text


def test_a_congestion_control_the_user_knows_goes_into_the_replica(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A capture at the receiver does not show the senders' congestion control: the user
    names it (--cc) and the replica runs it; the side table counts stalls per block."""
    from incastlab.backends.sim import simulate

    cap = tmp_path / "bbr.pcap"
    scenario = {
        "seed": 3,
        "topology": {"senders": 4, "link": "1Gbps", "buffer": "32KB", "rtt": "100us"},
        "tcp": {"congestion_control": "bbr", "rto_min": "200ms"},
        "workload": {"kind": "sync_read", "sru": "64KB", "blocks": 3},
    }
    simulate(scenario, pcap=cap)
    argv = ["doctor", str(cap), "--seeds", "1", "--rto-min-candidates", "200ms"]
    assert main([*argv, "--no-remedies", "--cc", "bbr", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["tcp"]["congestion_control"] == "bbr"
    assert out["estimates"]["congestion_control"]["confidence"] == "given"
    assert "probe_stalls_per_block" in out["figures"]["replica"]
    assert main([*argv, "--no-remedies"]) == 0
    assert "stalls/block" in capsys.readouterr().out
    assert main([*argv, "--cc", "vegas"]) == 2
    assert "invalid choice: 'vegas'" in capsys.readouterr().err
