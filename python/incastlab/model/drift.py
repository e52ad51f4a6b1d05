"""How far apart the retransmissions of senders that timed out together drift, wave after
wave, and what the port takes of one wave of them (:func:`retransmit_capacity`).

Each sender's RTO holds its smoothed RTT, and so the queueing delays it saw: the senders' RTOs
differ by about :attr:`~incastlab.model.fitted.Constants.dispersion` of the time the port takes
to drain its buffer, and a timer backed off ``k`` times multiplies the difference, so the
retransmissions of a later wave arrive farther apart and more of them find room in the port.

But an RTO is a whole number of ticks of the sender's clock (its RTT samples too: Linux's RTT
clock runs in microseconds, the simulator's ``tcp.clock_granularity``, 1 µs), and a timer fires
on a tick. Where the senders' smoothed RTTs lie within one tick of one another their RTOs are
the same number of ticks, however far they back off, and their retransmissions arrive in step:
every wave finds the room of the first. The simulator at 118 x 52 KB into 5.9 KB (3.9 packets,
drained in 2.1 µs) at 22.4 Gbps, RTOmin 67 ms (classic Reno, windows carried across blocks):
eight backoffs in every block (255 RTOs, 17.1 s), each wave serving 11-21 senders whatever its
depth; with a 1 ns clock the waves spread and the blocks take 64 RTOs (4.3 s). At 397 x 33 KB
into 7.6 KB (a drain of 0.72 µs) at 86 Gbps: 2.0 s blocks against 0.49 s with a 1 ns clock.

A sender that keeps its window through a loss (BBR) sends when its pacing lets it, not on the
timer's tick: its retransmissions do not keep in step, and the simulator's BBR blocks are the
same with either clock (154 x 459 KB into 6.3 KB at 97 Gbps: 11.5 ms blocks both ways).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.serial import held, request_spread, waited

if TYPE_CHECKING:
    from incastlab.model.burst import Path


def rto_spread(p: Path, dispersion: float) -> float:
    """Seconds between the senders' RTOs: ``dispersion`` of the buffer's drain time, or, where
    that is under a tick of the clock RTOs are counted in (``p.rto_grain``), the little the
    senders that fire a tick late add (:func:`sub_tick_spread`): most keep in step."""
    drain = p.drain_s
    spread = dispersion * drain
    if not p.loss_blind and spread < p.rto_grain:
        return sub_tick_spread(spread, p.rto_grain)
    return spread


def sub_tick_spread(spread: float, grain: float) -> float:
    """What is left of a spread of the senders' RTOs under one tick (``grain``) of their clock:
    an RTO is its smoothed RTT plus RTOmin rounded up to a tick, so where the smoothed RTTs lie
    within ``spread`` of one another a share ``spread / grain`` of the senders fire a tick
    late, and backed off they come apart by whole ticks while the others stay in step. The
    simulator's later blocks (Linux formula, 1 µs clock) each lose a level or two of backoff
    to it: 347 x 57 KB into 11 KB (a 0.97 µs drain) at 92.5 Gbps, RTOmin 19 ms (classic
    CUBIC): 255, 127, 64, 64 RTOs; 326 x 201 KB into 4.5 KB (0.99 µs) at 37 Gbps: 512, 128,
    127, 128; 286 x 18 KB (1.26 µs): 257, 128, 129, 65; yet 397 x 33 KB into 7.6 KB (0.72 µs)
    at 86 Gbps keeps 256 of its 511 and 254 x 11 KB (0.41 µs) 511 in two of three. A quarter
    of the share's spread, of the whole, a half and a quarter tried: 397 x 33 KB stays within
    1.5x (the model 1.29x; 1.40x, 1.96x with the others) and 347 x 57 KB comes in (0.51x ->
    0.78x)."""
    return spread * (spread / grain) / 4


def drift_per_rto(p: Path, dispersion: float, first: bool = False) -> float:
    """Packet times the retransmissions of senders that timed out together come apart per RTO
    they wait, from the differences between their RTOs (:func:`rto_spread`): none in a run's
    ``first`` block, whose RTOs are the handshake's, nor on a coarse timer tick, whose
    timers stay in step however long they back off (:func:`tick_wave`)."""
    if first or p.timer_tick > 0:
        return 0.0
    return rto_spread(p, dispersion) * p.link_bps / (p.wire * 8)


def retransmit_drift(p: Path, dispersion: float, level: int, first: bool = False) -> float:
    """Packet times the retransmissions of senders that timed out together spread over after
    ``level`` backoffs (:func:`drift_per_rto` times the RTOs waited before them)."""
    return drift_per_rto(p, dispersion, first) * waited(p, level)


def retransmit_capacity(p: Path, dispersion: float, level: int, first: bool = False) -> float:
    """Packets the port takes of one retransmission from each of many senders that timed out
    together, after ``level`` backoffs: its buffer plus what it drains while they arrive.

    They arrive spread over the requests' order (:func:`~incastlab.model.serial.
    request_spread`), the hosts' send jitter, and the differences between the senders' RTOs
    times the RTOs waited so far (:func:`retransmit_drift`; none in the run's ``first``
    block, whose RTOs are the handshake's). In packet times a spread is wide on a fast link
    and narrow on a slow one, where the retransmissions stay in step and back off deep.
    Timers on a coarse tick (jiffies) stay in step however long they back off, apart by the
    hosts' jitter alone, over which the port sends whole packets (:func:`tick_wave`)."""
    if p.timer_tick > 0:
        return tick_wave(p)
    q = held(p)
    return (
        q
        + p.host_jitter / p.packet_time
        + request_spread(p)
        + retransmit_drift(p, dispersion, level, first)
    )


def tick_wave(p: Path) -> float:
    """Packets the port takes of retransmissions whose timers fire on the same tick of a
    coarse clock (jiffies): its limit in whole frames (the one it sends counted) and the whole
    packets it sends while the hosts' jitter spreads their arrivals. The simulator at 158 x 49
    KB into 13 frames, jitter 4.6 packets (linux Reno): 17 senders a wave.

    BBR's retransmissions after an RTO keep in step as well: the timer sends them at once
    (Linux's ``tcp_retransmit_timer``), not its pacer, and the wave is the same as Reno's,
    not :func:`~incastlab.model.serial.held`'s paced one (a packet more, none of the jitter's).
    The simulator's first blocks (Linux's profile, BBR, 1 us jitter, 4 ms tick), the senders
    each wave serves (those whose longest run of timeouts ends at each depth): 190 x 146 KB
    into 11.2 frames at 75 Gbps (6.1 packets of jitter), 16-17 a wave over ten backoffs (17 s;
    the model with 12.2 a wave, twelve backoffs and 65 s); 125 x 119 KB into 6.9 frames at 40
    Gbps (3.2), 9 a wave; 88 x 35 KB into 4.8 frames at 56 Gbps (4.5), 8; 68 x 30 KB into 3.1
    frames at 62 Gbps (5.1), 7; and on slow links, where the jitter is under a packet time,
    the whole frames alone: 95 x 42 KB into 8.4 frames at 8 Gbps, 8 a wave, 36 x 134 KB into
    5.7 frames at 448 Mbps, 5."""
    return max(1.0, math.floor(p.buffer_packets)) + math.floor(p.host_jitter / p.packet_time)
