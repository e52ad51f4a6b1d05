"""The window carried out of a lossy block (:mod:`incastlab.model.carry`): only the senders
that lost segments cut theirs, and under RACK-TLP from the window the ACKs before the probe
grew."""

from __future__ import annotations

import math

import pytest

from incastlab.model import burst, carry, probe


def _carried(**keys: object) -> burst.Path:
    """213 x 11 KB (8 segments) into 1,510 packets at 5 Gbps, 1.4 ms, linux CUBIC with IW 2
    and windows carried across blocks: every block after the first overflows the port."""
    from incastlab.backends.model import burst_path
    from incastlab.scenario import apply_overrides, from_dict

    base: dict[str, object] = {
        "topology.senders": 213,
        "workload.sru": "11251B",
        "topology.buffer": "2292093B",
        "topology.link": "5054Mbps",
        "topology.rtt": "1436393ns",
        "tcp.profile": "linux",
        "tcp.congestion_control": "cubic",
        "tcp.rto_min": "235175ns",
        "tcp.initial_window": 2,
        "tcp.cwnd_restart": "never",
        "workload.blocks": 4,
    }
    base.update(keys)
    return burst_path(from_dict(apply_overrides({}, base)).normalized())


def test_senders_that_lost_nothing_keep_the_window_they_grew() -> None:
    p = _carried()
    # A block from windows of 10 where 50 of 213 lose part of their round, none time out.
    account = burst.Rounds(0, 0.0, 0.0, 10.0, 50.0, 0.0, 10.0, spared=163.0, resend=2.0)
    w, s = carry.carried_after_loss(p, 213, 8, 10.0, math.inf, account)
    cut = p.beta * 10.0
    kept = 163 / 213
    assert w == pytest.approx((1 - kept) * cut + kept * 18.0)  # 10 + 8 ACKs in slow start
    assert s == pytest.approx(cut / (1 - kept))  # most senders still in slow start
    # All of them hit: every window cut.
    w_all, s_all = carry.carried_after_loss(p, 213, 8, 10.0, math.inf, account._replace(spared=0.0))
    assert (w_all, s_all) == pytest.approx((cut, cut))


def test_rack_cuts_the_window_the_acks_before_the_probe_grew() -> None:
    p = _carried()
    account = burst.Rounds(0, 0.0, 0.0, 28.0, 134.0, 0.0, at_timeout=39.0, spared=0.0, resend=11.0)
    _, s = carry.carried_after_loss(p, 134, 24, 28.0, math.inf, account)
    assert s == pytest.approx(p.beta * 39.0)
    classic = _carried(**{"tcp.profile": "classic", "tcp.congestion_control": "cubic"})
    _, s_classic = carry.carried_after_loss(classic, 134, 24, 28.0, math.inf, account)
    assert s_classic == pytest.approx(classic.beta * 28.0)


def test_every_later_block_overflows_the_port_as_in_the_simulator() -> None:
    p = _carried()
    c = burst.fitted()
    pred = burst.predict(p, c)
    assert pred.first.loss_round is None
    # The simulator: 34, 33 and 22 senders in fast recovery in blocks 1-3, 31-32 ms blocks.
    assert pred.steady.loss_round is not None
    assert pred.steady.stall_s > probe.probe_seconds(p)


def test_linux_cubic_holds_its_cut_window_whatever_hystart() -> None:
    """CUBIC as ``tcp_cubic.c`` computes it (``tcp.cubic_update = "linux"``, the linux
    profile's) holds the window a loss cut for HZ/32 jiffies (model/window.py), HyStart or
    not; CUBIC updated on every ACK (the classic profile's) grows it at once, unless the
    scenario asks for Linux's update."""
    from incastlab.model import window

    held = _carried()
    assert window.cubic_hold(held) == pytest.approx(0.030)
    # 40 segments ACKed from a cut window of 10, on a pipe of 600: a round trip or four.
    assert window.held_grow(held, 213, 10.0, 40.0) == pytest.approx(10.0)
    no_hystart = _carried(**{"tcp.hystart": False})
    assert window.cubic_hold(no_hystart) == pytest.approx(0.030)
    per_ack = _carried(**{"tcp.profile": "classic"})
    assert window.cubic_hold(per_ack) == 0.0
    grown = window.grow(10.0, 10.0, 40.0, per_ack.growth)
    assert window.held_grow(per_ack, 213, 10.0, 40.0) == pytest.approx(grown) and grown > 11
    asked = _carried(**{"tcp.profile": "classic", "tcp.cubic_update": "linux"})
    assert window.cubic_hold(asked) == pytest.approx(1 / 32, rel=0.01)
