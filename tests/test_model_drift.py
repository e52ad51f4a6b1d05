"""The spread of the senders' RTOs behind a buffer drained in under a tick of their clock."""

from __future__ import annotations

import pytest

from conftest import model_path
from incastlab.model import burst, drift


def _path(buffer: int, link_bps: float) -> burst.Path:
    path: burst.Path = model_path(
        senders=347,
        sru=57_305,
        buffer=buffer,
        link_bps=link_bps,
        rtt=677e-6,
        rto=0.0197,
        rto_grain=1e-6,
        initial_window=3,
        restart="never",
        blocks=4,
    )
    return path


def test_rtos_under_a_tick_apart_spread_by_the_share_that_fires_a_tick_late() -> None:
    """347 senders behind 11 KB at 92.5 Gbps (a 0.97 us drain, 0.73 us of spread at
    dispersion 0.75): 0.73 of them a tick late, a quarter of that, 0.13 us, apart; behind a
    drain of a tick or more the whole spread."""
    short = _path(buffer=11_052, link_bps=92.5e9)
    spread = 0.75 * short.drain_s
    assert spread < short.rto_grain
    assert drift.rto_spread(short, 0.75) == pytest.approx(spread * spread / 1e-6 / 4)
    assert 0 < drift.rto_spread(short, 0.75) < spread / 4
    long = _path(buffer=22_104, link_bps=92.5e9)
    assert drift.rto_spread(long, 0.75) == pytest.approx(0.75 * long.drain_s)
    # The nearer the spread to a tick, the more senders fire late: it grows faster than linearly.
    half = _path(buffer=5_526, link_bps=92.5e9)
    assert drift.rto_spread(half, 0.75) < drift.rto_spread(short, 0.75) / 3


def test_bbrs_retransmissions_on_a_tick_keep_in_step_as_renos() -> None:
    """An RTO's retransmission leaves from the timer, not BBR's pacer: 190 senders behind
    17 KB (11.2 frames) at 75 Gbps with 1 us of jitter (6.1 packet times) on a 4 ms tick,
    11 whole frames and 6 packets sent meanwhile a wave, as the simulator's 16-17, BBR or
    not; where the jitter is under a packet time (448 Mbps), the whole frames alone."""
    fast = {"senders": 190, "sru": 145_887, "buffer": 17_063, "link_bps": 75.336e9}
    slow = {"senders": 36, "sru": 134_110, "buffer": 8_597, "link_bps": 448e6}
    for point, wave in ((fast, 17.0), (slow, 5.0)):
        for loss_blind in (False, True):
            p = model_path(
                **point,
                rtt=683e-6,
                rto=0.016,
                timer_tick=0.004,
                host_jitter=1e-6,
                initial_window=3,
                restart="idle",
                blocks=4,
                loss_blind=loss_blind,
            )
            assert drift.retransmit_capacity(p, 0.75, 3, first=True) == pytest.approx(wave)
