"""HyStart in the burst model (:mod:`incastlab.model.hystart`): Linux CUBIC ends slow start
where a round's ACK train outlasts half the minimum RTT, not where the port overflows."""

from __future__ import annotations

import dataclasses
import math

import pytest

from conftest import model_path
from incastlab.model import burst, hystart


def _path(**kw: object) -> burst.Path:
    """10 Gbps, a pipe of 300 packets, a buffer that never overflows; HyStart on."""
    base: dict[str, object] = dict(
        senders=1,
        sru=3_000_000,
        buffer=64_000_000,
        link_bps=10e9,
        rtt=300 * 1538 * 8 / 10e9,
        rto=0.2,
        initial_window=2,
        restart="idle",
        blocks=1,
        hystart=True,
    )
    path: burst.Path = model_path(**{**base, **kw})
    return path


def test_slow_start_ends_where_the_ack_train_outlasts_half_the_rtt() -> None:
    """The simulator (linux CUBIC, 10 Gbps, one 3 MB response each, nothing lost): one sender
    with a pipe of 300 packets ends slow start at 413 segments (2 ... 256 and then 150 ACKs);
    four with IW 10 at 122; two with a pipe of 100 at 60-63; 8-32 with a pipe of 100 at 24;
    and below 16 segments it never looks."""
    p = _path()
    segs = p.segments
    assert hystart.exit_window(p, 1, 2, segs) == pytest.approx(406, rel=0.02)
    assert 122 / 1.1 < hystart.exit_window(p, 4, 10, segs) < 122 * 1.1
    p100 = _path(rtt=100 * 1538 * 8 / 10e9)
    assert 60 / 1.1 < hystart.exit_window(p100, 2, 2, segs) < 63 * 1.1
    for n in (8, 16, 32):
        assert 24 / 1.25 < hystart.exit_window(p100, n, 2, segs) < 24 * 1.25
    assert hystart.exit_window(_path(rtt=10 * 1538 * 8 / 10e9), 1, 2, segs) >= hystart.LOW_WINDOW
    # A response too short to reach the exit, or a sender without HyStart: no exit.
    assert math.isinf(hystart.exit_window(p, 1, 2, 200))
    assert math.isinf(hystart.exit_window(dataclasses.replace(p, hystart=False), 1, 2, segs))


def test_after_the_exit_cubic_grows_a_twentieth_a_round() -> None:
    """CUBIC with no loss yet (no last maximum) grows at most 5% a round trip: the simulator's
    single sender after its exit at 413: 413, 433, 455, ... segments a round."""
    assert hystart.grown(413.0, 413.0, 413.0) == pytest.approx(413 * hystart.FOUND_GROWTH)
    assert hystart.grown(2.0, 16.0, 2 + 4 + 8) == 16.0  # still in slow start: doubled, capped


def test_two_senders_that_end_slow_start_early_never_overflow_the_port() -> None:
    """2 x 130 KB into 49 packets of buffer at 1.35 Gbps, 278 us (a pipe of 30), linux CUBIC,
    windows carried: the simulator's senders end slow start at 26 segments, the port's queue
    peaks at 46 packets and nothing is lost; 996.7 Mbps in every seed. Without HyStart the
    carried windows of 47 overflowed the port every block."""
    from incastlab.backends.model import burst_path
    from incastlab.scenario import apply_overrides, from_dict

    keys = {"topology.senders": 2, "workload.sru": "129867B", "topology.buffer": "74649B",
            "topology.link": "1351Mbps", "topology.receiver_link": "1351Mbps",
            "topology.rtt": "277532ns", "tcp.rto_min": "12568851ns", "tcp.initial_window": 2,
            "tcp.profile": "linux", "tcp.congestion_control": "cubic",
            "tcp.cwnd_restart": "idle", "workload.blocks": 4}  # fmt: skip
    p = burst_path(from_dict(apply_overrides({}, keys)).normalized())
    assert p.hystart
    c = burst.fitted()
    with_hystart = burst.predict(p, c)
    without = burst.predict(dataclasses.replace(p, hystart=False), c)
    assert with_hystart.timeouts_per_block == 0
    assert 996.7e6 / 1.05 < with_hystart.goodput_bps < 996.7e6 * 1.05
    assert without.goodput_bps < 0.5 * with_hystart.goodput_bps
