"""Limited transmit: a sender with one segment of its next round through can still reach
fast retransmit, each SACK releasing a new segment."""

from __future__ import annotations

import pytest

from conftest import model_path
from incastlab.model import burst, limited


def _path() -> burst.Path:
    """44 x 13.6 KB into 28 packets (53 of pipe) at 10.3 Gbps, RTOmin 47 ms, classic Reno."""
    path: burst.Path = model_path(
        senders=44,
        sru=13_648,
        buffer=42_089,
        link_bps=10.26e9,
        rtt=63.1e-6,
        rto=0.0475,
        rto_grain=1e-6,
        initial_window=4,
        restart="never",
        blocks=4,
    )
    return path


def test_one_segment_through_is_enough_where_the_port_takes_the_rest() -> None:
    """A port that takes the whole next round stalls nobody; one that takes none, everyone;
    in between, fewer than asking for dupthresh of the round at once (Poisson)."""
    assert limited.stalled(3, 3, 3) == pytest.approx(0.0)
    assert limited.stalled(3, 0, 3) == pytest.approx(1.0)
    at_once = 1 - 0.5**3  # under three of three through, each with chance 1/2
    assert 0 < limited.stalled(4, 2, 3) < at_once


def test_limited_transmit_brings_the_block_near_one_rto() -> None:
    """The simulator: 0.52-0.64 RTOs per sender and block, every block one RTO (100 Mbps);
    the model asked for dupthresh of the next round at once: 1.35 and 2.4 RTOs (41 Mbps)."""
    p = _path()
    b = burst.predict(p, burst.fitted())
    assert b.timeouts_per_block / p.senders < 1.2
    assert b.block_time_s / b.rto_s < 1.5
