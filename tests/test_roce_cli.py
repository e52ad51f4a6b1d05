"""RoCE from the command line: `--transport roce` with its `--cc`, the flag refused with the
wrong transport, the table's header naming the transport and congestion control, and
`incast emulate` refusing RDMA in one line, `--pcap` writing RoCEv2 frames."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from incastlab.cli import main

ROCE = ["sim", "--transport", "roce", "--workload", "incast", "--flow-size", "100KB"]


def test_sim_runs_roce_and_the_header_names_transport_and_cc(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*ROCE, "--senders", "1,4", "--cc", "none"]) == 0
    out = capsys.readouterr().out
    assert "roce (cc none, go-back-n, lossless)" in out
    rows = [ln for ln in out.splitlines() if ln.strip()[:1].isdigit() and len(ln.split()) > 5]
    assert [r.split()[0] for r in rows] == ["1", "4"]


def test_cc_maps_to_roce_cc_and_the_fabric_follows(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*ROCE, "--senders", "2", "--cc", "dcqcn", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    s = row["scenario"]
    assert (s["transport"], s["roce"]["cc"], s["topology"]["pfc"]) == ("roce", "dcqcn", True)
    assert s["tcp"]["congestion_control"] == "cubic"  # untouched: the default linux profile's
    assert row["report"]["roce"]["data_packets"] >= 200


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ([*ROCE, "--senders", "2", "--cc", "cubic"], "--cc cubic: RoCE runs none, dcqcn, hpcc"),
        (
            ["sim", "--senders", "2", "--cc", "dcqcn"],
            "--cc dcqcn: tcp runs reno, cubic, dctcp, bbr; dcqcn is RoCE's",
        ),
        (
            [*ROCE, "--senders", "2", "--set", "roce.lossless=false", "--set", "topology.pfc=true"],
            "roce.lossless",
        ),
    ],
)
def test_wrong_combinations_exit_2_with_one_line_naming_the_flag_or_key(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_cc_follows_the_transport_of_the_scenario_file(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "roce.toml"  # type: ignore[operator]
    f.write_text('transport = "roce"\n[workload]\nkind = "incast"\nflow_size = "50KB"\n')
    assert main(["sim", str(f), "--senders", "2", "--cc", "dcqcn", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["scenario"]["roce"]["cc"] == "dcqcn"


def test_emulate_refuses_roce_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulate", "--transport", "roce", "--senders", "2"]) == 2
    err = capsys.readouterr().err
    assert "transport: RoCE needs an RDMA NIC" in err
    assert len(err.strip().splitlines()) == 1


def test_pcap_writes_rocev2_frames_that_wireshark_dissects(tmp_path: Path) -> None:
    path = tmp_path / "roce.pcap"
    assert main([*ROCE, "--senders", "2", "--quiet", "--pcap", str(path)]) == 0
    data = path.read_bytes()
    # The first record (after the 24-byte file header and its own 16): UDP to port 4791,
    # then the BTH: a SEND First (opcode 0) of queue pair 0x100 with PSN 0.
    frame = data[24 + 16 :]
    assert frame[36:38] == (4791).to_bytes(2, "big")
    assert (frame[42], frame[47:50], frame[51:54]) == (0, b"\x00\x01\x00", b"\x00\x00\x00")
    if shutil.which("tshark") is None:
        pytest.skip("no tshark: the frames were checked by hand only")
    run = subprocess.run(
        ["tshark", "-r", str(path), "-T", "fields", "-e", "infiniband.bth.opcode"],
        capture_output=True,
        text=True,
        check=True,
    )
    ops = run.stdout.split()
    assert len(ops) == len(run.stdout.splitlines()), "every frame dissects with a BTH"
    assert {"0", "1", "2", "17"} <= set(ops), "SEND First/Middle/Last and ACKs"
    summary = subprocess.run(
        ["tshark", "-r", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "Malformed" not in summary, "frames are stored whole"
