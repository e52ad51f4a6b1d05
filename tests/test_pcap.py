"""Packet captures: `incast sim --pcap` writes what tcpdump and tshark read, and `incast
pcap` finds in it the timeouts the simulator counted and the incast signature."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import incastlab
from incastlab.cli import main
from incastlab.result import Result
from incastlab.trace import TraceOptions, analyze

COLLAPSE = {"topology": {"senders": 16}, "workload": {"sru": "256KB", "blocks": 20}}


def _capture(
    tmp_path: Path, scenario: dict[str, Any], name: str, at: str | None = None
) -> tuple[Result, Path]:
    path = tmp_path / name
    r = incastlab.simulate(scenario, pcap=path, pcap_at=at)
    return r, path


def test_tcpdump_reads_the_simulators_capture_without_a_warning(tmp_path: Path) -> None:
    if shutil.which("tcpdump") is None:
        pytest.skip(
            "no tcpdump: the check that it reads the simulator's pcaps "
            "(Debian: apt-get install tcpdump; ./scripts/test --install-system-deps)"
        )
    r, path = _capture(tmp_path, {**COLLAPSE, "workload": {"sru": "256KB", "blocks": 2}}, "a")
    run = subprocess.run(
        ["tcpdump", "-nn", "-r", str(path)], capture_output=True, text=True, check=True
    )
    # Its only word on stderr is the file's link type: no "truncated", no "bad".
    assert run.stderr.strip().splitlines() == [
        f"reading from file {path}, link-type EN10MB (Ethernet), snapshot length 128"
    ]
    lines = run.stdout.splitlines()
    served = sum(int(x.rsplit("length ", 1)[1]) for x in lines if ".9000 > " in x)
    assert served >= r.report["app_bytes"], "every response byte reaches the receiver"
    assert any("sack" in x for x in lines), "SACK blocks on the receiver's ACKs"
    assert all(" IP 10.0.0." in x and "Flags [" in x for x in lines)


def test_tshark_finds_no_malformed_frame(tmp_path: Path) -> None:
    if shutil.which("tshark") is None:
        pytest.skip(
            "no tshark: the pcap cross-check against Wireshark's dissectors "
            "(Debian: apt-get install tshark; ./scripts/test --install-system-deps)"
        )
    scenario = {
        "topology": {"senders": 8, "ecn_threshold": "20KB"},
        "tcp": {"congestion_control": "dctcp", "ecn": True},
        "workload": {"blocks": 2},
    }
    _, path = _capture(tmp_path, scenario, "ecn.pcap")
    run = subprocess.run(
        ["tshark", "-r", str(path), "-T", "fields", "-e", "ip.dsfield.ecn", "-e", "tcp.flags.ece"],
        capture_output=True,
        text=True,
        check=True,
    )
    fields = [x.split("\t") for x in run.stdout.splitlines()]
    assert any(f[0] == "3" for f in fields), "CE marks in the IP header"
    assert any(f[1] in ("1", "True") for f in fields), "ECN echoes in the TCP header"
    expert = subprocess.run(
        ["tshark", "-r", str(path), "-q", "-z", "expert,error"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Malformed" not in expert.stdout


def test_the_same_run_captures_the_same_bytes(tmp_path: Path) -> None:
    small = {"topology": {"senders": 4}, "workload": {"blocks": 2}}
    _, a = _capture(tmp_path, small, "a.pcap")
    _, b = _capture(tmp_path, small, "b.pcap")
    assert a.read_bytes() == b.read_bytes()
    assert a.stat().st_size > 10_000


def test_pcap_counts_the_simulators_timeouts_and_sees_incast(tmp_path: Path) -> None:
    r, path = _capture(tmp_path, COLLAPSE, "collapse.pcap")
    truth = r.report["timeouts"]
    assert truth > 40, "the run collapses"
    t = analyze(path, TraceOptions())
    assert abs(t.report["rtos"] - truth) <= 0.05 * truth, (t.report["rtos"], truth)
    assert t.report["goodput_bytes"] == r.report["app_bytes"]
    assert t.incast
    assert t.verdict.startswith("incast: ")

    _, path1 = _capture(tmp_path, {"topology": {"senders": 1}, "workload": {"blocks": 20}}, "1")
    t1 = analyze(path1, TraceOptions())
    assert not t1.incast
    assert t1.verdict.startswith("no incast signature")
    assert t1.report["goodput_bps"] > 0.8e9


def test_pcap_command_table_json_parquet_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = tmp_path / "run.pcap"
    argv = ["sim", "--senders", "16", "--sru", "256KB", "--blocks", "10", "--pcap", str(cap), "-q"]
    assert main(argv) == 0
    capsys.readouterr()
    out_dir, png = tmp_path / "tables", tmp_path / "run.png"
    assert main(["pcap", str(cap), "--out", str(out_dir), "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "verdict: incast:" in text
    assert "peak/avg" in text
    flows = pq.read_table(out_dir / "flows.parquet")
    assert flows.num_rows == 16
    meta = flows.schema.metadata
    assert meta[b"incastlab.version"] == incastlab.__version__.encode()
    intervals = pq.read_table(out_dir / "intervals.parquet").to_pydict()
    assert max(intervals["ingress_bps"]) <= 1.01e9, "never above the receiver's 1 Gbps"
    assert pq.read_table(out_dir / "blocks.parquet").num_rows == 10
    assert png.stat().st_size > 20_000

    assert main(["pcap", str(cap), "--json", "--receiver", "10.0.0.17"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["receiver"] == "10.0.0.17" and not doc["receiver_inferred"]
    rates = {r["window_ns"]: r["peak_to_avg"] for r in doc["rates"]}
    # Bursts at line rate that the 1 s average hides.
    assert rates[1_000_000] > 3 * rates[1_000_000_000]


def test_bad_captures_get_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "notes.pcap"
    text.write_text("not a capture\n")
    assert main(["pcap", str(text)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a pcap or pcapng capture" in err[0]

    _, good = _capture(tmp_path, {"topology": {"senders": 2}, "workload": {"blocks": 2}}, "g")
    raw = good.read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(raw[: len(raw) - 7])
    assert main(["pcap", str(cut)]) == 0
    warning = capsys.readouterr().err
    assert "truncated" in warning and "Traceback" not in warning

    wifi = tmp_path / "wifi.pcap"
    wifi.write_bytes(raw[:20] + (105).to_bytes(4, "little") + raw[24:])
    assert main(["pcap", str(wifi)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "link type 105 is not supported" in err[0]

    assert main(["pcap", str(tmp_path / "missing.pcap")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_sim_pcap_flags_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cap = str(tmp_path / "x.pcap")
    assert main(["sim", "--senders", "1,2", "--pcap", cap]) == 2
    assert "captures one run" in capsys.readouterr().err
    assert main(["sim", "--senders", "2", "--pcap", cap, "--pcap-at", "switch9"]) == 2
    err = capsys.readouterr().err
    assert 'no point "switch9"' in err and "bottleneck" in err
    assert main(["sim", "--senders", "2", "--pcap-at", "receiver"]) == 2
    assert "--pcap FILE" in capsys.readouterr().err
    assert main(["sim", "--senders", "2", "--pcap", cap, "--pcap-at", "bottleneck,senders"]) == 0


def test_ndp_is_captured_as_udp(tmp_path: Path) -> None:
    scenario = {
        "transport": "ndp",
        "topology": {"senders": 8},
        "workload": {"kind": "incast", "flow_size": "64KB"},
    }
    _, path = _capture(tmp_path, scenario, "ndp.pcap")
    raw = path.read_bytes()
    # The first record's frame: IPv4 protocol 17, both ports 7020, an NDP kind of 1..6.
    frame = raw[24 + 16 :]
    assert frame[23] == 17
    assert int.from_bytes(frame[34:36], "big") == 7020 == int.from_bytes(frame[36:38], "big")
    assert 1 <= frame[42] <= 6


def _to_pcapng(pcap: bytes) -> bytes:
    """The same frames as pcapng: a section header, one Ethernet interface with nanosecond
    timestamps (if_tsresol = 9), one enhanced packet block per record."""
    import struct

    def block(kind: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        n = 12 + len(body)
        return struct.pack("<II", kind, n) + body + struct.pack("<I", n)

    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    tsresol = struct.pack("<HHB", 9, 1, 9) + b"\0\0\0" + struct.pack("<HH", 0, 0)
    out += block(1, struct.pack("<HHI", 1, 0, 128) + tsresol)
    pos = 24
    while pos + 16 <= len(pcap):
        sec, nsec, incl, orig = struct.unpack_from("<IIII", pcap, pos)
        data = pcap[pos + 16 : pos + 16 + incl]
        ts = sec * 1_000_000_000 + nsec
        head = struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, incl, orig)
        out += block(6, head + data)
        pos += 16 + incl
    return out


def test_pcapng_gives_the_same_analysis(tmp_path: Path) -> None:
    _, path = _capture(tmp_path, {"topology": {"senders": 8}, "workload": {"blocks": 5}}, "ng")
    ng = tmp_path / "same.pcapng"
    ng.write_bytes(_to_pcapng(path.read_bytes()))
    a = analyze(path, TraceOptions()).report
    b = analyze(ng, TraceOptions()).report
    assert b["frames"] == a["frames"] > 1000
    for key in ("rtos", "retx_fast", "goodput_bytes", "span_ns", "blocks", "flows", "verdict"):
        assert b[key] == a[key], key


def _to_linux_cooked(pcap: bytes, version: int) -> bytes:
    """The same frames as `tcpdump -i any` writes them: Linux cooked headers (v1, 16 bytes,
    link type 113; v2, 20 bytes, link type 276) in place of Ethernet's, packet type "to us"."""
    import struct

    head = bytearray(pcap[:24])
    head[20:24] = (113 if version == 1 else 276).to_bytes(4, "little")
    out = [bytes(head)]
    pos = 24
    while pos + 16 <= len(pcap):
        sec, frac, incl, orig = struct.unpack_from("<IIII", pcap, pos)
        frame = pcap[pos + 16 : pos + 16 + incl]
        mac = frame[6:12] + b"\0\0"
        if version == 1:
            cooked = struct.pack("!HHH", 0, 1, 6) + mac + b"\x08\x00"
        else:
            cooked = struct.pack("!HHIHBB", 0x0800, 0, 2, 1, 0, 6) + mac
        data = cooked + frame[14:]
        out.append(struct.pack("<IIII", sec, frac, len(data), orig - 14 + len(cooked)) + data)
        pos += 16 + incl
    return b"".join(out)


@pytest.mark.parametrize("version", [1, 2])
def test_linux_cooked_captures_give_the_same_analysis(tmp_path: Path, version: int) -> None:
    _, path = _capture(tmp_path, {"topology": {"senders": 8}, "workload": {"blocks": 5}}, "eth")
    cooked = tmp_path / f"sll{version}.pcap"
    cooked.write_bytes(_to_linux_cooked(path.read_bytes(), version))
    a = analyze(path, TraceOptions()).report
    b = analyze(cooked, TraceOptions()).report
    assert b["receiver"] == a["receiver"] == "10.0.0.9" and b["receiver_inferred"]
    assert b["frames"] == a["frames"] > 1000
    # The same but the ingress rates: a cooked header is not Ethernet's 14 bytes.
    for key in ("rtos", "retx_fast", "goodput_bytes", "span_ns", "blocks", "flows", "incast"):
        assert b[key] == a[key], key
