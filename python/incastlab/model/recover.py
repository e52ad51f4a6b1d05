"""Synchronized recoveries under RACK-TLP (:func:`incastlab.model.overflow.overflow`): the
flights of the senders that repair a round's losses together, and those of them whose whole
flight the port drops.

The senders that lost part of a round find their losses in two groups: those that got some of
it through from the SACKs of the same round trip, those that got nothing after their loss
through from their probes, whose timers fired on the same tick. Each group resends the lost
segments in PRR's slow start from one segment (Linux's ``tcp_cwnd_reduction`` with nothing
else in flight: as many as the ACK delivered and one more), 1, 2, 4 ... a round trip apart, up
to the cut window, and a round's flights arrive at the port together. Where they overflow it,
drop-tail takes one packet a packet time of whichever arrive
(:func:`~incastlab.model.stagger.emptied`), and a sender whose whole flight it drops has sent
nothing after it whose SACK would show the loss; Linux arms the tail loss probe only out of
recovery (``tcp_schedule_loss_probe``: Open or CWR state; the simulator's
``schedule_loss_probe`` alike), so that sender waits for the RTO.

The simulator at 17 x 52 KB (36 segments, IW 10, restarting every block) into 9 packets at
1.23 Gbps, 651 us, RTOmin 128 ms (linux CUBIC), seed 1, second block: 9 senders got their
first segment through and resend 1 segment 1.4 ms into the block, 2 at 2.1 ms, 4 at 2.8 ms;
7 got nothing through, probe at 7.2 ms and resend 1, 2, 4 from 7.9 ms. Three of the first
group lose a whole flight (one of 2, two of 4) and one of the second (of 4); each sends
nothing more until its RTO, 135-143 ms into the block. 1-4 RTOs a block, blocks of 148 ms;
the model had none (24 ms blocks, the probes' waits), now 2.1 a block and 137 ms. At 44 x 58
KB (IW 3) into 42 packets (linux Reno, RTOmin 148 ms) a sender's lone retransmission in
recovery is lost (cut window 2: flights of one) and it times out: two blocks of four take
156 and 165 ms, the others 14 ms; the model keeps that one at 22 ms (its flights of one fit).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.port import arriving_capacity
from incastlab.model.stagger import emptied

if TYPE_CHECKING:
    from incastlab.model.path import Path


def flight_capacity(p: Path) -> float:
    """Packets a round of recovery flights gets through the port: they arrive at twice the
    link's rate (the receiver ACKs at once while a hole is open, and each ACK releases two;
    :func:`~incastlab.model.port.arriving_capacity`)."""
    return arriving_capacity(p, 2.0)


def lost_flights(p: Path, recovering: float, resend: float, window: float) -> float:
    """Expected senders of ``recovering`` (repairing together, ``resend`` lost segments each,
    from a round of ``window``) that lose a whole recovery flight and time out: over PRR's
    flights of 1, 2, 4 ... up to the cut window (the congestion control's ``beta``), those
    with none of a flight through where the flights overflow the port
    (:func:`flight_capacity`). Not BBR (no PRR: model/bbr_rack.py), nor without RACK-TLP
    (the classic profile's own rule: model/resent.py). DCTCP's flights are counted too: its
    marks cannot hold the first round's synchronized bursts (the read designs scored 0.04
    point lower with DCTCP's held queue left out)."""
    if not p.rack_tlp or p.loss_blind or recovering <= 0 or resend <= 0:
        return 0.0
    cut = max(1.0, p.beta * window)
    out, left, flight, n, cap = 0.0, resend, 1.0, recovering, flight_capacity(p)
    while left > 1e-9 and n > 1e-9:
        f = min(flight, left, cut)
        if n * f > cap:
            lost = emptied(n, f, cap)
            out, n = out + lost, n - lost
        left -= f
        flight = min(2 * flight, cut)
    return out


def recovery_timeouts(
    p: Path,
    window: float,
    probed: float,
    probed_each: float,
    sacked: float,
    sacked_each: float,
    lost_probes: float,
    room: float,
) -> float:
    """Expected senders that time out in recovery after a round of ``window`` overflowed:
    of the ``probed`` whose probes got through (``probed_each`` segments lost each) and the
    ``sacked`` that found their losses by SACK (``sacked_each``), each group repairing
    together (:func:`lost_flights`). Only as many as the port has ``room`` for
    (burst._repairing): the others take turns, and their lost probes and retransmissions are
    counted there (rotate.probed_turns).

    Where ``lost_probes`` senders time out already, the chain of RTO waves
    (model/chain.py) starts with them, and the flights' losers time out a few milliseconds
    from them, in its first wave: the chain, fitted with them in it, holds them. They are
    counted only as far as no probe is lost (a chosen form: on the read designs' pooled
    within-1.5x, 88.30% counted in every case, 88.33% so; the chains of hundreds of RTOs a
    block went 1.3-1.9x too slow where they were counted as well)."""
    kept = min(1.0, room / max(probed + sacked, 1e-12))
    flights = lost_flights(p, kept * probed, probed_each, window)
    flights += lost_flights(p, kept * sacked, sacked_each, window)
    return flights * math.exp(-lost_probes)
