"""RACK-TLP's tail loss probe (:mod:`incastlab.model.probe`): a sender whose only lost
segment is its last waits nearly an RTO for the probe, not the 4 ms of several out."""

from __future__ import annotations

import dataclasses
import math

import pytest

from incastlab.model import burst, probe


def _linux(**keys: object) -> burst.Path:
    """A point under Linux's profile (RTOmin 200 ms, 4 ms ticks), the simulator's timers."""
    from incastlab.backends.model import burst_path
    from incastlab.scenario import apply_overrides, from_dict

    base: dict[str, object] = {
        "topology.senders": 20,
        "workload.sru": "14480B",  # 10 segments: one round of the initial window
        "topology.buffer": "250KB",
        "tcp.cwnd_restart": "block",
        "workload.blocks": 3,
    }
    base.update(keys)
    return burst_path(from_dict(apply_overrides({}, base)).normalized())


def test_the_simulator_owns_the_lone_probe_timer() -> None:
    """With one segment out Linux waits 2·SRTT + RTOmin, capped at the RTO (the simulator's
    ``rto_timer``): the RTO itself once it has settled; with several out, 2·SRTT + 2 ms."""
    p = _linux()
    assert p.probe_lone == pytest.approx(p.rto) == pytest.approx(0.204)
    assert p.probe == pytest.approx(0.004)
    assert probe.lone_seconds(p) == pytest.approx(0.204 + 0.002)  # fired on the next tick


def test_senders_lose_only_their_last_segment_while_the_overflow_is_under_one_each() -> None:
    assert probe.lone_share(0.0, 20.0) == 0
    assert probe.lone_share(5.0, 20.0) == 1  # five senders lose one each
    assert probe.lone_share(30.0, 20.0) == pytest.approx(0.5)  # half lose one, half two
    assert probe.lone_share(40.0, 20.0) == 0
    assert probe.lone_share(5.0, 0.0) == 0


def test_a_lone_segment_out_waits_the_longer_timer_never_a_shorter_one() -> None:
    p = _linux()
    base = (1 - math.exp(-3.0)) * probe.probe_seconds(p)
    assert probe.probe_wait(p, 3.0, 0.0) == pytest.approx(base)
    assert probe.probe_wait(p, 3.0, 1.0) == pytest.approx(
        base + (1 - math.exp(-1.0)) * (probe.lone_seconds(p) - base)
    )
    assert probe.probe_wait(p, 20.0, 20.0) == pytest.approx(probe.lone_seconds(p))
    # Where the lone timer is the shorter (RTOmin under a tick: RTO 8 ms, 4 ms probe and
    # 10 ms of the timers after it), it adds nothing.
    short = dataclasses.replace(p, probe_lone=0.008)
    assert probe.probe_wait(short, 3.0, 3.0) == pytest.approx(base)


def test_a_last_round_that_overflows_by_under_a_segment_each_stalls_an_rto() -> None:
    """20 x 10 segments, each the initial window of a response restarting from it, into 165
    packets: the simulator (linux, three seeds) times nothing out, and its first three
    blocks take 208 ms (207.9-208.2) on a 2.6 ms transfer: the senders that lost their last
    segment wait for the lone probe. Into 132 packets they lose two or more each, and their
    probes (2·SRTT + 2 ms) and RACK repair the block in 16-28 ms."""
    c = burst.fitted()
    p = _linux()
    b = burst.predict(p, c)
    assert b.timeouts_per_block == 0
    assert b.block_time_s == pytest.approx(0.208, rel=0.02)
    # Without the lone probe, the 4 ms probe and its ticks: 17 ms, a twelfth of it.
    without = burst.predict(dataclasses.replace(p, probe_lone=0.0, probe_lone_queued=0.0), c)
    assert without.block_time_s == pytest.approx(0.0026 + probe.probe_seconds(p), rel=0.05)
    deeper = burst.predict(_linux(**{"topology.buffer": "200KB"}), c)
    assert 0.012 < deeper.block_time_s < 0.03


def test_a_lost_tail_before_the_last_round_is_probed_as_several_out() -> None:
    """12 segments, 2 after the initial window's round: the round's lost ends are followed by
    more, and no sender is left with its last segment alone out at the overflow."""
    c = burst.fitted()
    b = burst.predict(_linux(**{"workload.sru": "17376B"}), c)
    assert b.block_time_s < 0.03


def test_a_later_rounds_overflow_leaves_some_senders_their_last_segment_alone() -> None:
    """12 x 357 KB from IW 1 into 1,134 packets at 16 Gbps, RTOmin 87 ms: slow start's eighth
    round (the response's last) overflows the port, ACK-clocked, with its drops spread over
    it. The simulator (linux Reno, three seeds): no RTO, and a block of 96 ms in two of them,
    a sender waiting for its last segment's lone probe (92 ms)."""
    c = burst.fitted()
    keys = {
        "topology.senders": 12,
        "workload.sru": "357340B",
        "topology.buffer": "1721908B",
        "topology.link": "16377Mbps",
        "topology.receiver_link": "16377Mbps",
        "topology.rtt": "5055ns",
        "tcp.rto_min": "87212653ns",
        "tcp.initial_window": 1,
        "tcp.congestion_control": "reno",
        "tcp.cwnd_restart": "idle",
        "workload.blocks": 4,
    }
    b = burst.predict(_linux(**keys), c)
    assert b.timeouts_per_block == 0
    assert b.first.loss_round == 7
    assert 0.06 < b.first.time_s < 0.1
    # A request's round loses its bursts' ends: no sender with more than one lost is alone.
    assert probe.lone_share(40.0, 20.0) == 0
    assert probe.lone_share(40.0, 20.0, 0.2) == pytest.approx(0.2)


def test_a_later_block_probes_on_the_smoothed_rtt_the_full_queue_left() -> None:
    """83 x 10.6 KB (IW 10: the whole response in the request's round) into 747 KB (492
    packets, a 7.7 ms queue) at 786 Mbps, RTOmin 5.7 ms (linux CUBIC): in the simulator
    about half the senders lose their last segment every block, and their probes fire 16-40
    ms after the request as the queue's round trips left their smoothed RTTs; blocks of 40
    ms after the first (28 ms). The run's first block starts from the handshake's sample."""
    c = burst.fitted()
    p = _linux(
        **{
            "topology.senders": 83,
            "workload.sru": "10631B",
            "topology.buffer": "747592B",
            "topology.link": "786Mbps",
            "topology.receiver_link": "786Mbps",
            "topology.rtt": "299141ns",
            "tcp.rto_min": "5668131ns",
            "tcp.initial_window": 10,
            "workload.blocks": 4,
        }
    )
    assert p.probe_lone_queued > p.probe_lone
    b = burst.predict(p, c)
    assert b.first.time_s == pytest.approx(0.0247, rel=0.1)
    # The lone probe's share of it: 29 ms (those that lost more probe on the base RTT's timer).
    assert b.steady.time_s == pytest.approx(0.0287, rel=0.05)
    assert probe.probe_wait(p, 3.0, 1.0) < probe.probe_wait(p, 3.0, 1.0, carried=True)


def test_the_lost_segments_go_out_again_in_slow_start_after_the_probe() -> None:
    """PRR with nothing else in flight resends 1, 2, 4 ... a round trip after the probe's."""
    assert probe.repair_rounds(0.0) == 0
    assert probe.repair_rounds(1.0) == 1  # the probe was the only lost segment
    assert probe.repair_rounds(11.0) == pytest.approx(1 + math.log2(11))  # 1 + 1, 2, 4, 3
    p = _linux()
    base = (1 - math.exp(-3.0)) * (probe.probe_seconds(p) + p.rtt * probe.repair_rounds(4.0))
    assert probe.probe_wait(p, 3.0, 0.0, resend=4.0) == pytest.approx(base)
