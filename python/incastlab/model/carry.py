"""The window each sender carries out of a block whose round overflowed the port into the
next (:mod:`incastlab.model.burst`, where windows persist: ``tcp.cwnd_restart`` "never", or
"idle" with pauses shorter than the RTO): the senders that timed out, those that repaired their
losses by fast retransmit or RACK and those that lost nothing carry different windows."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.loop import spurious_share
from incastlab.model.window import grow, held_grow

if TYPE_CHECKING:
    from incastlab.model.burst import Path, Rounds


def carried_after_loss(
    p: Path,
    senders: float,
    segments: float,
    window: float,
    ssthresh: float,
    burst: Rounds,
    idle_rtos: float = 0.0,
) -> tuple[float, float]:
    """The window and ssthresh each sender carries out of a block whose round overflowed the
    port (``burst``: :func:`incastlab.model.burst._burst`'s account of it, from ``window``):
    the mean over those that timed out (slow start from one up to half the window their timer
    fired on), those that repaired their losses by fast retransmit (cut to ``p.beta`` of the
    window they lost from) and those that lost nothing, which grew their windows as in a block
    without loss. Their ssthresh is the weighted harmonic mean, so that where most senders
    kept theirs unset (still in slow start) the carried one stays high. Those that did not time
    out sit ``idle_rtos`` RTOs idle while the others wait for their timers
    (:func:`idle_restart`).

    Only the senders that lost segments cut their windows: the simulator at 213 x 11 KB (8
    segments) into 1,510 packets at 5 Gbps, 1.4 ms (linux CUBIC, IW 2, windows carried), 34,
    33, 22, 20 and 15 senders of 213 go into fast recovery in the blocks after the first, and
    every later block overflows the port and waits for loss probes (blocks of 31-32 ms against
    6.4 ms for the first). With every window cut to 0.7 of itself (7.6, then 6.0) the model
    had the fourth block fit the port: 1.31 Gbps against the simulator's 0.76; now 1.0."""
    timeouts, left, w_loss, w_rto = burst.timeouts, burst.left, burst.window, burst.at_timeout
    spared = burst.spared
    timed_out = min(1.0, timeouts / senders)
    # DCTCP's marks reach every sender through the full queue, cutting those that lost nothing.
    kept = 0.0 if p.marking is not None else min(1.0 - timed_out, max(0.0, spared / senders))
    if p.rack_tlp:
        # RACK-TLP finds a lost tail after the probe, once the ACKs of what got through have
        # grown the window (window.at_timeout): it cuts that window. The simulator at 134 x
        # 33.7 KB (24 segments) into 1,459 packets at 29 Gbps, 1.16 ms (linux CUBIC, IW 4,
        # windows carried): senders entering the second block with 28 lose the tail of the 24
        # sent at once, recover from 39 and carry 27, so the third block sends its 24 at once
        # and waits for the probe again (blocks of 26 and 28 ms against 4 ms without loss).
        w_loss = w_rto
    repaired = 1.0 - timed_out - kept
    cut = max(2.0, p.beta * w_loss)
    # A timeout's ssthresh is the congestion control's cut of the window its timer fired on
    # (Linux's tcp_enter_loss), CUBIC's 0.7 as in recovery, not half: the simulator at 11 x
    # 72 KB (50 segments) into 540 KB at 6 Gbps, 12 us, RTOmin 50 ms (classic CUBIC, IW 1,
    # windows carried) times out every other block (0, 11, 0, 10 RTOs), the senders growing
    # back past the port's share in the block between; cut to half, the model's fourth block
    # started from 45 segments, short of the port, and waited no RTO (1.92x -> 1.00x).
    restart = max(2.0, p.beta * w_rto)
    # Past ssthresh the windows grow at the congestion control's pace (window.grow): CUBIC's
    # 0.53 segments a round trip, not Reno's one (4 more of the read designs' points within 1.5x).
    after_rto = grow(1.0, restart, left, p.growth)
    # Linux's CUBIC holds the cut window HZ/32 jiffies before it grows (window.cubic_hold).
    after_fr, s_fr = idle_restart(p, held_grow(p, senders, cut, left), cut, idle_rtos)
    grown = grow(window, ssthresh, segments, p.growth)
    after_none, s_none = idle_restart(p, grown, ssthresh, idle_rtos)
    w_next = timed_out * after_rto + repaired * after_fr + kept * after_none
    inverse = timed_out / restart + repaired / s_fr + kept / s_none
    return w_next, 1.0 / inverse if inverse > 0 else math.inf


def idle_restart(p: Path, window: float, ssthresh: float, idle_rtos: float) -> tuple[float, float]:
    """The window and ssthresh of a sender that sat ``idle_rtos`` RTOs idle before the next
    block, under ``tcp.cwnd_restart`` "idle" (RFC 5681 4.1, Linux's ``tcp_cwnd_restart``):
    halved for each whole RTO idle, not below the initial window, its ssthresh raised to 3/4
    of the window it had. The senders a lossy block served wait for those that timed out, an
    RTO or more, and restart cut: the simulator at 67 x 43.9 KB into 524 KB at 3.2 Gbps, 457
    us, RTOmin 69 ms (classic CUBIC, IW 2), 10 of the 67 senders time out in the first block
    (79 ms), and the 57 others start the second with 5.3 segments on average (11.1 with
    ``never``). An expected count of waits under one is the chance of a wait: a fractional
    count interpolates between whole halvings."""
    if p.restart != "idle" or idle_rtos <= 0:
        return window, ssthresh
    whole = min(64, math.floor(idle_rtos))  # past 64 halvings every window is at its floor
    halved = window / 2**whole
    halved -= min(1.0, idle_rtos - whole) * halved / 2
    return max(min(float(p.initial_window), window), halved), max(ssthresh, 0.75 * window)


def after_spurious_rtos(
    p: Path, window: float, carried: float, ssthresh: float
) -> tuple[float, float]:
    """The window and ssthresh carried out of a run's first block without loss whose queue
    outgrew the handshake's RTO: the senders that timed out (loop.spurious_share) restart from
    one, under half the round they had out (from ``window``), and resend their response; the
    others carry the window they grew (``carried``). The simulator at 382 x 37 KB
    into 10 MB at 137 Mbps, RTOmin 0.3 ms (classic CUBIC, timestamps): 4,110 timeouts and no
    drop in the first block, 3 timeouts and no drop in the three after it, where windows of 28
    carried would overflow the port."""
    share = spurious_share(p)
    if share <= 0:
        return carried, ssthresh
    restart = max(2.0, min(window, p.segments) / 2)
    w = share * grow(1.0, restart, p.segments, p.growth) + (1 - share) * carried
    inverse = share / restart + (1 - share) / ssthresh
    return w, 1.0 / inverse
