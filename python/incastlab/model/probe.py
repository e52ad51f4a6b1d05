"""RACK-TLP's tail loss probe (:mod:`incastlab.model.burst`): what a sender whose lost
segments nothing after them reveals waits, and when that wait is nearly a whole RTO.

Under RACK-TLP (Linux's profile) a sender that lost the end of its round, with nothing sent
after it whose SACK would show the hole, waits for the probe timer. With several segments
still out the probe fires after 2·SRTT + 2 ms, and its ACK shows the other losses
(:data:`PROBE_TICKS`). With exactly one out, Linux waits 2·SRTT + RTOmin instead, leaving
room for a delayed ACK, capped at the RTO's own expiry (``tcp_schedule_loss_probe``;
the simulator's :attr:`~incastlab.model.burst.Path.probe_lone`): that sender has received the
ACKs of everything but its very last segment, and waits about an RTO for it, with no
timeout counted.

That is where a round that is the response's last overflows the port by less than one
segment per sender: drop-tail keeps the first packets of the interleaved bursts, so those
senders lose their last segment and nothing else. The simulator at 20 x 10 segments (IW 10,
responses restarting from it) into 165 packets, RTOmin 200 ms (linux): no RTO, and blocks of
208 ms on a 2.6 ms transfer, where the 4 ms probe alone would make them 17 ms.

A later, ACK-clocked round that overflows loses what arrives at the full port throughout, not
its bursts' ends (:func:`lone_share`): the senders repair the holes that later segments SACK,
and those whose very last segment the port dropped are left with it alone out. The simulator
at 12 x 357 KB (247 segments, IW 1) into 1,134 packets at 16 Gbps, RTOmin 87 ms (linux Reno):
no RTO; slow start's eighth round overflows the port, every sender repairs it by 2.2 ms, and
in two seeds of three the block takes 96 ms, its senders waiting from 2 ms for their last
segment (the lone probe, 92 ms; the third seed 22 ms, a later block). The model: 89.5 ms
(14 ms with the overflow's drops at the bursts' ends). Not modelled: the same stall where the
last segment goes out a round after the request's overflow (the first example at 11
segments: 208 ms blocks too).

The probes themselves can be lost. The senders that lost their whole window and those that got
part of a round through but nothing after it (no SACK to show the hole) armed their probe
timers together, on the same tick, and their probes arrive at the port together: it keeps what
fits and the others wait for the RTO (:func:`probe_losses`). The simulator at 739 x 298 KB
into 31 KB (21 packets) at 7.5 Gbps, RTOmin 1.6 ms (linux DCTCP): 17.5 RTOs per sender and
block; the model 11.8 where only the whole windows' probes compete for the port, 16.3 with all.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.serial import held

if TYPE_CHECKING:
    from incastlab.model.burst import Path

#: Timer ticks a probed tail loss costs beyond the probe timeout: the probe fires on the tick
#: after it (half a tick on average); the probe's ACK shows the other lost segments, which
#: RACK's reorder timer marks one tick later; their retransmissions are answered within the
#: next (the simulator at 2 x 16 KB into 16 KB, linux: stalls of 14.6-16 ms on a 4 ms probe).
PROBE_TICKS = 2.5


def probe_seconds(p: Path) -> float:
    """The wait a probed tail loss costs: RACK-TLP's probe timeout (the simulator's, 2·SRTT
    + 2 ms in whole ticks) and :data:`PROBE_TICKS` ticks of the timers that follow it."""
    return p.probe + p.timer_tick * PROBE_TICKS


def lone_seconds(p: Path, carried: bool = False) -> float:
    """The wait a lost last segment, alone out, costs: the probe timeout with one segment out
    (2·SRTT + RTOmin, at most the RTO), fired on the tick after it; the probe is that
    segment, whose ACK ends the wait. In a ``carried`` block, on the smoothed RTT the last
    block's queue left (``probe_lone_queued``, where the path has it: :func:`probe_wait`)."""
    timer = p.probe_lone_queued if carried and p.probe_lone_queued > 0 else p.probe_lone
    return timer + p.timer_tick / 2


def lone_share(lost: float, senders: float, dropped: float = 0.0) -> float:
    """Of the senders that lost part of a round, the share that lost only their last
    segment, where ``lost`` segments of the round were lost among ``senders`` senders that
    each got some of theirs through. Interleaved bursts lose their ends about evenly: with
    fewer lost than senders each loses one; with ``x`` per sender between one and two,
    ``2 - x`` of them lose one and the rest two; beyond that none loses only one.

    An ACK-clocked round (not the request's) that overflows drops what arrives at the full
    port throughout, not its bursts' ends: the senders repair the holes that later segments
    SACK, and whose very last segment the port dropped (the round's share ``dropped``) is
    left with it alone out."""
    if lost <= 0 or senders <= 0:
        return 0.0
    return min(1.0, max(0.0, 2.0 - lost / senders, dropped))


def probe_wait(
    p: Path, probes: float, lone: float, carried: bool = False, resend: float = 0.0
) -> float:
    """The time a block waits for probes: ``probes`` expected senders wait for the probe (or
    RACK's reorder) timer, together, and ``lone`` of them, with only their last segment out,
    for the longer timer of :func:`lone_seconds` (where it is longer).

    In a ``carried`` block (not the run's first) the senders' estimators carry the round
    trips of the last block, through the full queue: the lone probe's timer runs from that
    smoothed RTT (``probe_lone_queued``), not the base RTT. The simulator at 83 x 10.6 KB
    (IW 10, the whole response in the request's round) into 492 packets at 786 Mbps, RTOmin
    5.7 ms (linux CUBIC): about half the senders lose their last segment every block, their
    last ACKs come back as the 7.7 ms queue drains, and their probes fire from 16 to 40 ms
    after the request, on successive ticks as their smoothed RTTs differ; blocks of 40 ms
    after the first (28 ms) against the model's 25 ms on the base RTT's timers, 29 ms now. The
    probe with several out keeps the base RTT's timer: on it as well, the designs' points whose
    blocks the model already held too long for probes the simulator does not wait got worse."""
    base = (1 - math.exp(-probes)) * (probe_seconds(p) + p.rtt * repair_rounds(resend))
    return base + (1 - math.exp(-lone)) * max(0.0, lone_seconds(p, carried) - base)


def still_full(p: Path, served: float, rest: float, out: float) -> bool:
    """Whether the port is still full when the probe timers of a round's losers fire on a
    coarse timer tick (Linux's profile, not BBR): ``served`` senders got part or all of their
    round of ``out`` segments through and send ``rest`` segments each after it, for longer
    than the probe timer (the lone probe's with one segment out), and even their windows cut
    by the loss (the congestion control's cut of ``out``, one segment at least) overfill the
    port's buffer and pipe. The simulator at 60 x 130 KB into 131 packets at 3.85 Gbps, 40 us
    (linux Reno, IW 3, RTOmin 15 ms, the window restarting every block): in two of the three
    later blocks 8 and 3 senders lose their whole first window and 3 and 2 more get a segment
    or two through and nothing after it; their probes fire 4 ms into the block while the
    others' rest keeps the link busy until 10.8 and 13.9 ms, and none arrives: they
    retransmit after the RTO, 21-29 ms into the block (7-15 RTOs a block; the model had none
    of them time out, the port holding all 7.7 probes). Of the thresholds for a full port
    the read designs scored (pooled within 1.5x unflagged, model otherwise as here): none,
    88.00% (one design down 1.2 points); the served senders' two segments an ACK
    (:func:`~incastlab.model.busy.busy_wave`), 87.90%; one segment each, 87.93%; the cut
    window, 87.98%."""
    if p.loss_blind or p.timer_tick <= 0:
        return False
    timer = p.probe_lone if out <= 1 else p.probe
    cut = max(1.0, p.beta * out)
    return served * rest * p.packet_time > timer and served * cut > p.held_packets


def probe_losses(p: Path, whole: float, alone: float, full: bool = False) -> float:
    """Expected senders that time out after all because the port drops their probe:
    ``whole`` of them lost their whole window and ``alone`` got part of their round through
    but nothing after it whose SACK shows the hole. Their probe timers were armed together
    and fire on the same tick, so their probes arrive together: drop-tail keeps what fits in
    the buffer (:func:`~incastlab.model.serial.held`). A sender whose pacing sends its probe (BBR)
    does not keep in step (:mod:`incastlab.model.drift`): of those that lost their whole
    window, the port keeps as many as random arrivals leave room for. Where the port is still
    ``full`` when they fire (:func:`still_full`), it keeps none of them but what it sends
    during the hosts' jitter."""
    q = held(p)
    if p.loss_blind:
        return whole - q * (1 - math.exp(-whole / q)) if whole > 0 else 0.0
    probing = whole + alone
    if full:  # the port keeps only what it sends during the hosts' jitter (model/busy.py)
        q = math.floor(p.host_jitter / p.packet_time)
    return probing - min(probing, q)


def repair_rounds(resend: float) -> float:
    """Round trips a sender whose probe found ``resend`` lost segments takes to resend them
    after the probe fires: the probe's own, then PRR's slow start from one segment with
    nothing else in flight (Linux's ``tcp_cwnd_reduction``: as many as the ACK delivered, one
    more when it moves snd_una), 1, 2, 4 ... a round. The simulator at 134 x 33.7 KB (24
    segments) into 1,459 packets at 29 Gbps, 1.16 ms (linux CUBIC, IW 4, windows carried): a
    sender that lost the 11 last of its 24 fires its probe (the last) 17.6 ms after the
    round's ACKs, resends 1, 2, 4 and 3 of the others a round trip apart, and ends its
    recovery 5.9 ms after the probe (the block 26 ms; the model 20 ms before)."""
    if resend <= 0:
        return 0.0
    return 1.0 + math.log2(max(1.0, resend))
