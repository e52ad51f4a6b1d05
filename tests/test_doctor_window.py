"""incast doctor reads the senders' initial window where a capture shows their first flights
whole (a flight shorter than a round trip, with a pause after it), gives only a lower bound
where it does not (a slow NIC or a shared port stretches the flights past a round trip), and
runs the replica with the window it read; a capture with handshakes gives the RTT from them."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from incastlab.backends.sim import simulate
from incastlab.doctor.evidence import read_capture
from incastlab.doctor.infer import infer
from incastlab.doctor.replica import scenario_dict

LINUX_CAPTURE = (
    Path(__file__).parent / "captures" / "linux-16x64KB-100Mbps-32KB-200ms-receiver.pcap.gz"
)


def _read(tmp: Path, senders: int, link: str, iw: int, rtt: str = "100us") -> Any:
    path = tmp / f"{senders}-{link}-{iw}.pcap"
    simulate(
        {
            "seed": 3,
            "topology": {"senders": senders, "link": link, "buffer": "1MB", "rtt": rtt},
            "tcp": {"profile": "linux", "initial_window": iw},
            "workload": {"kind": "sync_read", "sru": "256KB", "blocks": 2},
        },
        pcap=path,
    )
    return read_capture(str(path))


@pytest.mark.parametrize("iw", [2, 4, 10])
def test_first_flights_shorter_than_a_round_trip_give_the_initial_window(
    tmp_path: Path, iw: int
) -> None:
    t = _read(tmp_path, 4, "10Gbps", iw)
    assert {(f["first_flight"], f["first_flight_whole"]) for f in t.report["flows"]} == {(iw, True)}
    e = infer(t)["initial_window"]
    assert (e.value, e.confidence) == (iw, "high"), e
    sc = scenario_dict(infer(t), 1_000_000, 200 * 10**9, "linux")
    assert sc["tcp"]["initial_window"] == iw


def test_flights_stretched_past_a_round_trip_are_only_a_lower_bound(tmp_path: Path) -> None:
    # 10 packets take 1.2 ms at 100 Mbps, twelve round trips of 100 us.
    t = _read(tmp_path, 4, "100Mbps", 4)
    e = infer(t)["initial_window"]
    assert e.value is None and e.confidence == "bound", e
    assert e.lo is not None and 1 <= e.lo <= 4 and e.hi is None
    # The replica runs its profile's window.
    sc = scenario_dict(infer(t), 1_000_000, 200 * 10**9, "linux")
    assert "initial_window" not in sc["tcp"]


def test_a_real_linux_capture_gives_the_rtt_from_its_handshakes(tmp_path: Path) -> None:
    pcap = tmp_path / "receiver.pcap"
    with gzip.open(LINUX_CAPTURE) as src, pcap.open("wb") as dst:
        dst.write(src.read())
    t = read_capture(str(pcap))
    handshake = t.report["handshake_ns"]
    # Veths in namespaces: tens of microseconds, far under the first answer's wait for a
    # server process on a shared CPU.
    assert 1_000 <= handshake <= 200_000, handshake
    e = infer(t)
    assert e["rtt"].value == handshake * 1000
    assert e["rtt"].evidence.startswith("shortest handshake")
    # Every flight there is paced by a 100 Mbps NIC over a shared port: a bound at most.
    assert e["initial_window"].value is None
    assert e["initial_window"].confidence in ("bound", "not shown")
