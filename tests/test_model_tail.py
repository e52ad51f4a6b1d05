"""The backoff tail (:mod:`incastlab.model.tail`): a block that outlasts its busy link by a
chain of lost, backed-off retransmissions."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import model_path
from incastlab.model import burst, tail


def _path(**kw: object) -> burst.Path:
    base: dict[str, object] = dict(
        senders=544,
        sru=767_631,
        buffer=78_503,
        link_bps=779e6,
        rtt=8.875e-6,
        rto=0.017677,
        initial_window=10,
        restart="idle",
        blocks=2,
        rto_max=120.0,
    )
    path: burst.Path = model_path(**{**base, **kw})
    return path


def test_no_chain_no_loss_or_no_busy_time_no_tail() -> None:
    p = _path()
    assert tail.backoff_tail(p, 100.0, 0.0, 0.0, 0.5) == 0
    assert tail.backoff_tail(p, 100.0, 50.0, 5.0, 0.0) == 0
    assert tail.backoff_tail(p, 0.0, 50.0, 5.0, 0.5) == 0


@pytest.mark.parametrize(("start", "loss"), [(1.0, 0.5), (40.0, 0.3)])
def test_chains_from_the_start_wait_for_the_retransmission_after_the_busy_time(
    start: float, loss: float
) -> None:
    """Retransmissions 1, 3, 7 and 15 RTOs after the timeout: with 10 RTOs of busy link the
    first three are lost (each with chance ``loss``) and the fourth goes out 5 RTOs after."""
    ext = tail.backoff_tail(_path(), 10.0, start, 0.0, loss)
    assert ext == pytest.approx(5 * (1 - (1 - loss**3) ** start))


def test_chains_through_the_busy_time_reach_further_the_more_the_port_drops() -> None:
    """Chains starting all through 258 busy RTOs (124 a RTO): the longer the runs of lost
    retransmissions, the later the last one ends, never more than a backoff past the end;
    the cap on a backed-off RTO shortens it."""
    p = _path()
    ext = [tail.backoff_tail(p, 258.0, 0.0, 124.0, loss) for loss in (0.1, 0.3, 0.5)]
    assert 0 < ext[0] < ext[1] < ext[2] < 256
    capped = tail.backoff_tail(_path(rto_max=16 * 0.017677), 258.0, 0.0, 124.0, 0.5)
    assert capped < ext[2]


def test_senders_taking_turns_outlast_the_link() -> None:
    """544 x 768 KB into 78 KB at 779 Mbps, RTOmin 17.7 ms (classic Reno): the link is busy
    the first 258 RTOs of a block, which the simulator ends after 522-535; without the tail
    the model ends it near the link's time."""
    c = burst.fitted()
    p = _path()
    with_tail = burst.predict(p, c)
    without = burst.predict(p, dataclasses.replace(c, busy_loss=0.0))
    link = p.senders * 531 * p.wire * 8 / p.link_bps / p.rto
    assert without.steady.time_s / p.rto < 1.3 * link
    assert with_tail.steady.time_s / p.rto > 1.4 * link


def test_the_starts_survivors_collide_again_while_they_overfill_the_port() -> None:
    """1,000 senders from the start, 0.8 of their retransmissions lost over 10 busy RTOs:
    512 still wait at the retransmission after it (15 RTOs); into 10 packets of room they
    collide again (0.8 x (w - 10) left each time) and back off 16 RTOs more, 32 more, and so
    on until a few are left; with room for them all, none collide."""
    p = _path()
    alone = tail.backoff_tail(p, 10.0, 1000.0, 0.0, 0.8)
    assert alone == pytest.approx(5.0)
    again = tail.backoff_tail(p, 10.0, 1000.0, 0.0, 0.8, room=10.0)
    assert again > alone + 16
    assert tail.backoff_tail(p, 10.0, 1000.0, 0.0, 0.8, room=1000.0) == pytest.approx(alone)


def test_returning_bbr_survivors_need_room_for_two_segments_each() -> None:
    """Survivors that come back after the busy time: a classic sender's retransmission alone
    decides whether it is lost again; BBR's ACK releases two segments at once, so survivors
    that fit the room with one segment each collide again with two. The simulator at 6 x 812
    KB into 4.1 packets (1.1 of pipe), classic BBR: two senders come back at 3 RTOs and a
    third, whose retransmission met theirs, at 7; blocks of 7.2 RTOs on average."""
    p = _path()
    bbr = dataclasses.replace(p, loss_blind=True)
    assert tail.returning_segments(p) == 1 and tail.returning_segments(bbr) == 2
    # 1,000 from the start, 0.8 lost over 10 RTOs: 512 still wait after it, into room for 600.
    reno = tail.backoff_tail(p, 10.0, 1000.0, 0.0, 0.8, room=600.0)
    assert reno == pytest.approx(tail.backoff_tail(p, 10.0, 1000.0, 0.0, 0.8))
    # BBR's 1,024 segments overfill it: the survivors back off once more (16 RTOs).
    assert tail.backoff_tail(bbr, 10.0, 1000.0, 0.0, 0.8, room=600.0) > reno + 15
