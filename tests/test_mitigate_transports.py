"""`incast mitigate --transports`: every transport on the scenario's fabric and workload,
ranked by the last flow's completion, with the keys each row set and why a row was refused."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from incastlab.cli import main

#: A 16:1 incast of 64 KB at 10 Gbps on a star with 64 KB ports: TCP's 16 initial windows
#: (16 × 10 × 1518 B) overflow the port, and RTOmin 200 ms makes the classic TCP collapse.
INCAST = [
    "--transports", "--workload", "incast", "--flow-size", "64KB", "--senders", "16",
    "--link", "10Gbps", "--rtt", "10us", "--buffer", "64KB",
]  # fmt: skip


def _json(argv: list[str]) -> list[dict[str, Any]]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["mitigate", *argv, "--json", "--workers", "1"]) == 0
    rows: list[dict[str, Any]] = json.loads(buf.getvalue())
    return rows


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return _json(INCAST)


def test_every_transport_ranks_with_positive_numbers(rows: list[dict[str, Any]]) -> None:
    from incastlab.studies.transports import TRANSPORTS

    assert [r["transport"] for r in rows if "refused" in r] == []
    assert {r["transport"] for r in rows} == {e.name for e in TRANSPORTS}
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    lasts = [r["last_completion_s"] for r in rows]
    assert lasts == sorted(lasts)
    for r in rows:
        assert r["unfinished"] == 0, r["transport"]
        assert r["last_completion_s"] > 0 and r["goodput_bps"] > 0, r["transport"]
        assert r["peak_buffer_bytes"] > 0, r["transport"]
        # 16 × 64 KB over 10 Gbps takes at least 839 µs whatever the transport.
        assert r["last_completion_s"] >= 16 * 65_536 * 8 / 10e9
        assert r["short_flow_p99_s"] is None and "workload.kind" in r["short_flow_note"]


def test_receiver_driven_transports_trim_instead_of_timing_out(
    rows: list[dict[str, Any]],
) -> None:
    by = {r["transport"]: r for r in rows}
    for name in ("ndp", "eqds"):
        assert by[name]["timeouts"] == 0 and by[name]["drops"] == 0, name
        assert by[name]["trims"] > 0, name
        assert f"{name}.data_queue" in by[name]["changed"]
    # The same 64 KB per port in each one's full frames: NDP's 9064 B, EQDS's 4150 B.
    assert by["ndp"]["changed"]["ndp.data_queue"] == 64_000 // 9064
    assert by["eqds"]["changed"]["eqds.data_queue"] == 64_000 // 4150
    for name in ("roce", "roce-dcqcn", "roce-hpcc"):
        assert by[name]["drops"] == 0, name
    assert by["roce"]["pfc_pauses"] > 0
    assert by["roce-hpcc"]["changed"]["topology.int"] is True
    assert "topology.ecn_kmin" in by["roce-dcqcn"]["changed"]


def test_classic_tcp_collapses_last(rows: list[dict[str, Any]]) -> None:
    """The rows that keep the scenario's RTOmin of 200 ms wait one out; RTOmin 200 µs and the
    transports that never time out finish within a few milliseconds."""
    names = [r["transport"] for r in rows]
    assert set(names[-2:]) == {"tcp", "dctcp"}
    by = {r["transport"]: r for r in rows}
    assert by["tcp"]["timeouts"] > 0 and by["tcp"]["last_completion_s"] > 0.2
    assert "RTOmin 200 ms" in by["tcp"]["keys"]
    assert by["tcp-rto200us"]["last_completion_s"] < 0.005
    assert by["tcp-rto200us"]["changed"]["tcp.rto_min"] == "200us"
    assert by["swift"]["keys"].startswith("swift: MTU 4000 B")
    # Homa's RTTbytes derived from the 10 Gbps star's round trip, stated in its row.
    assert by["homa"]["keys"].startswith("homa: MTU 1448 B, RTTbytes 15744 B")


def test_a_transport_that_cannot_run_the_workload_is_refused_in_its_row() -> None:
    argv = ["--transports", "--only", "ndp,swift", "--senders", "4", "--sru", "16KB"]
    argv += ["--blocks", "2", "--link", "10Gbps", "--rtt", "10us", "--buffer", "64KB"]
    rows = _json(argv)
    by = {r["transport"]: r for r in rows}
    assert set(by) == {"tcp", "ndp", "swift"}
    assert "workload.kind" in by["ndp"]["refused"] and "\n" not in by["ndp"]["refused"]
    assert by["swift"]["block_time_p99_s"] > 0 and by["tcp"]["block_time_p99_s"] > 0
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["mitigate", *argv, "--workers", "1", "--wide"]) == 0
    table = out.getvalue()
    assert any(line.split()[:3] == ["-", "ndp", "refused"] for line in table.splitlines())
    assert "ndp · NDP: receiver pulls, trimmed headers resent · refused: workload.kind" in table


def test_only_names_a_transport_row() -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["mitigate", *INCAST, "--only", "quic"]) != 0
    assert "not a transport row" in err.getvalue()


def test_table_and_plot(tmp_path: Path) -> None:
    out = io.StringIO()
    png = tmp_path / "t.png"
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        argv = [*INCAST, "--only", "ndp", "--workers", "1", "--plot", str(png), "--wide"]
        assert main(["mitigate", *argv]) == 0
    text = out.getvalue()
    assert "incast mitigate --transports" in text and "ndp.data_queue = 7" in text
    assert "short p99 n/a" in text
    assert png.stat().st_size > 10_000


def test_dcqcn_row_says_when_no_cnp_could_pace_a_packet() -> None:
    """64 KB at 100 Gbps leaves each sender in 5.45 µs, before the first CNP (≥ 11 µs): the
    DCQCN row equals plain RoCE and says why; at 10 Gbps (52 µs per flow) the cuts pace."""
    fast = [
        "--transports", "--only", "roce-dcqcn", "--workload", "incast", "--flow-size", "64KB",
        "--senders", "16", "--link", "100Gbps", "--rtt", "10us", "--buffer", "1MB",
    ]  # fmt: skip
    (row,) = [r for r in _json(fast) if r["transport"] == "roce-dcqcn"]
    assert row["cc_note"] and row["cc_note"].startswith("DCQCN idle: all 17 CNPs")
    slow = [a if a != "100Gbps" else "10Gbps" for a in fast]
    (row,) = [r for r in _json(slow) if r["transport"] == "roce-dcqcn"]
    assert row["cc_note"] is None


def test_short_flows_beside_the_incast_give_every_transport_a_tail() -> None:
    short = ["--set", "workload.short_load=0.2", "--set", "workload.query_size_max=20KB"]
    names = ("tcp", "swift", "homa", "eqds", "ndp", "roce")
    got = _json([*INCAST, "--only", ",".join(names), *short])
    by = {r["transport"]: r for r in got if "refused" not in r}
    assert set(by) == set(names)
    for name in names:
        assert by[name]["short_flow_p99_s"] > 0, name
        assert by[name]["short_flow_note"] is None
        # Every transport carries them: no row runs without its short flows.
        assert "workload.short_load" not in by[name]["changed"], name
    # Some rows end their incast with short flows on their way: counted, the tail a bound.
    assert any(by[n]["short_flow_unfinished"] > 0 for n in names)


def test_a_tail_with_unfinished_short_flows_is_printed_as_a_lower_bound() -> None:
    short = ["--set", "workload.short_load=0.2", "--set", "workload.query_size_max=20KB"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        argv = [*INCAST, "--only", "ndp", "--workers", "1", "--wide", *short]
        assert main(["mitigate", *argv]) == 0
    text = out.getvalue()
    (row,) = [line for line in text.splitlines() if line.split()[1:2] == ["ndp"]]
    assert "≥" in row, text
    assert "unfin." in text
    assert "a flow still running when the incast ends at its age then" in " ".join(text.split())
