"""incast doctor on a stored capture of real Linux TCP (tests/captures/README.md says how it
was made): the values a capture shows come back as on the simulator's captures; the buffer,
fitted by simulation, reads above the emulator's tc queue limit (docs/doctor.md: real Linux's
drops behind a tbf limit are not the simulator's port's), within 2.5x of it."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from incastlab.doctor import diagnose

MS = 10**9
CAPTURE = Path(__file__).parent / "captures" / "linux-16x64KB-100Mbps-32KB-200ms-receiver.pcap.gz"


def _within(got: float, want: float, ratio: float) -> bool:
    return want / ratio <= got <= want * ratio


def test_a_real_linux_capture_comes_back_within_its_tolerances(tmp_path: Path) -> None:
    pcap = tmp_path / "receiver.pcap"
    with gzip.open(CAPTURE) as src, pcap.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    d = diagnose(str(pcap), seeds=(1,), remedies=False, rto_candidates=(10 * MS, 200 * MS))
    e = d.estimates
    assert e["senders"].value == 16
    assert e["workload"].value == "sync_read" and e["rounds"].value == 4
    # Emulation frames each answer with a 24-byte header: 64,024 bytes per response.
    assert _within(e["response"].value, 64_000, 1.1), e["response"]
    assert e["link"].value == 100_000_000
    assert e["rto_min"].value == 200 * MS and e["rto_min"].confidence != "bound", e["rto_min"]
    assert 32_000 <= e["buffer"].value <= 2.5 * 32_000, e["buffer"]
    assert _within(d.replica.goodput_bps, d.capture.goodput_bps, 1.25), (d.capture, d.replica)
    assert d.incast, d.why
