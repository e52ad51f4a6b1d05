"""A sender's window across a block's rounds, apart from :mod:`incastlab.model.burst` (which
follows the port): how it grows without loss, the time its rounds take, and how often a sender
whose loss does not cut its window loses again.

After a loss the rest of a response goes in congestion avoidance: windows cut to ``beta`` of
themselves, growing a segment a round trip (CUBIC: its Reno-friendly 3(1 - beta)/(1 + beta) =
0.53, the cubic curve's time scale being seconds), cut again when together they exceed the
buffer and the pipe. Where the buffer is far short of the pipe the cut windows leave the link
idle for most of the sawtooth: the simulator at 8 x 908 KB into 27 KB at 80 Gbps, 174 us (18
packets of buffer, 1,120 of pipe), linux CUBIC: 3.0-3.9 Gbps and no RTO (the model with a full
link: 8.9).

BBR (``tcp.congestion_control = "bbr"``) paces at the bandwidth it measured and keeps its
window through a loss (recovery conserves packets for a round trip, then restores the window
it had): the senders that overflowed the port together overflow it again every round until
their responses are through, each round with the same chance of a timeout (a retransmission
sent into the queue they still fill, which only the RTO finds without RACK). The simulator at
13 x 630 KB into 287 KB at 2.8 Gbps, RTOmin 104 ms: 7,800-9,300 drops and 10-12 RTOs a run
under BBR, one RTO in every block; the same point under Reno, 460-570 drops and none.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from incastlab.model.hystart import next_round

if TYPE_CHECKING:
    from incastlab.model.burst import Path


def grow(window: float, ssthresh: float, acked: float, growth: float = 1.0) -> float:
    """A window after ``acked`` segments are acknowledged without loss: one more segment per
    ACK below ``ssthresh`` (slow start), ``growth`` per window above it (congestion avoidance,
    whose window grows while the ACKs come: dw/da = growth/w, so w^2 grows by twice the ACKs
    times ``growth``, not the window by acked/w at once, which overshoots when the ACKs span
    many rounds). ``growth`` is a segment for Reno and DCTCP; CUBIC's (``Path.growth``, 0.53)
    is its TCP-friendly region's (RFC 9438 4.3), which sets its pace at datacenter round trips,
    where the cubic curve moves less than a segment over a whole block."""
    if window < ssthresh:
        room = ssthresh - window
        if acked <= room:
            return window + acked
        window, acked = ssthresh, acked - room
    return math.sqrt(window * window + 2 * growth * acked)


def slow_start_rounds(segments: float, window: float) -> int:
    """Slow-start rounds a response of ``segments`` takes from ``window``, doubling each."""
    return max(1, math.ceil(math.log2(segments / max(1.0, window) + 1)))


def at_timeout(window: float, ssthresh: float, through: float, sent: float) -> float:
    """The window of a sender that lost part of a round of ``sent`` segments from ``window``
    when its retransmission timer fires: the ACKs of the ``through`` segments that got through
    came first, and below ssthresh each grew it by one, as long as it stays under twice what
    is out (Linux's ``tcp_is_cwnd_limited`` in slow start). The timeout's ssthresh is cut from
    this window, not the one the round left with: the simulator at 14 x 28 segments into 330
    packets (classic Reno, windows carried), windows of 32 overflow the port, the senders time
    out with windows of 56 and ssthresh 28, so the next block's slow start brings them back to
    28 and the block after overflows the port again (every other block an RTO)."""
    return max(window, min(grow(window, ssthresh, through), 2 * sent))


def repeated_timeouts(senders: float, timeouts: float, left: float, window: float) -> float:
    """Expected senders that time out in a block when ``timeouts`` of ``senders`` do in the
    round that first overflows the port and every later round (``left`` segments each, sent
    ``window`` a round) overflows it alike: each sender's chance of escaping them all."""
    if timeouts <= 0:
        return 0.0
    rounds = 1 + left / max(1.0, window)
    return senders * (1 - math.pow(1 - min(1.0, timeouts / senders), rounds))


def transfer_time(
    p: Path, senders: float, segments: float, window: float, found: float = math.inf
) -> float:
    """A block without losses: ``senders`` each send ``segments`` from ``window``, doubling per
    round (slow start; up to ``found``, where HyStart ended it: model/hystart.py), after the
    request's way out and the response's way back (the RTT)."""
    pt = p.packet_time
    return p.rtt + round_trips(senders, segments, window, p.rtt, pt, lambda w: next_round(w, found))


def sawtooth_time(
    p: Path, senders: float, segments: float, window: float, left: float, at: float, ceiling: float
) -> float:
    """A block whose senders cut their windows (from ``at``, to ``p.beta`` of it) with
    ``left`` of their ``segments`` still to send: slow start from ``window`` up to the cut,
    congestion avoidance after it under ``ceiling`` packets (the buffer, or the marking
    threshold, and the pipe)."""
    cut = max(2.0, p.beta * at)
    after = held_avoidance(p, senders, ceiling)
    ca = round_trips(senders, left, cut, p.rtt, p.packet_time, after)
    return transfer_time(p, senders, segments - left, window) + ca


def restart_time(p: Path, senders: float, left: float, ssthresh: float, ceiling: float) -> float:
    """Seconds ``senders`` that timed out take to send their ``left`` segments again after the
    RTO: from a window of one, doubling a round up to ``ssthresh`` (half the window the timer
    fired on), then congestion avoidance under ``ceiling``. The link is idle while the rounds
    are short of it: the simulator at 4 x 124 KB into 153 packets at 39 Gbps, 181 us (classic
    Reno, windows carried), the block whose carried windows of 96 overflow the port: all four
    time out, 26 segments each lost, and the block takes 1.86 ms (the RTO 0.45 ms; the
    model 0.74 ms with the rest sent at the link's rate after the RTO, 1.59 ms with these
    rounds of slow start); the run 4.0 Gbps, the model 6.8 before and 5.0 after."""
    ca = avoidance(senders, p.growth, p.beta, ceiling)

    def after(w: float) -> float:
        return min(2 * w, ssthresh) if w < ssthresh else ca(w)

    return round_trips(senders, left, 1.0, p.rtt, p.packet_time, after)


def round_trips(
    senders: float,
    segments: float,
    window: float,
    rtt: float,
    packet_time: float,
    after: Callable[[float], float],
) -> float:
    """Seconds ``senders`` take to send ``segments`` each, a window a round, ``after`` giving
    each round's window from the last's. A round that does not fill the link lasts one RTT
    plus the first segment's two hops; the last ends when its last segment has crossed both."""
    t = 0.0
    rounds = _rounds(segments, window, after)
    for k, (_, b) in enumerate(rounds):
        if k == len(rounds) - 1:
            return t + senders * b * packet_time + packet_time
        t += max(rtt + 2 * packet_time, senders * b * packet_time)
    return t


def _rounds(
    segments: float, window: float, after: Callable[[float], float]
) -> list[tuple[float, float]]:
    """Each round's window and the segments it sends, ``segments`` in all from ``window``,
    ``after`` giving each round's window from the last's."""
    rounds: list[tuple[float, float]] = []
    rem, w = float(segments), max(1.0, window)
    while rem > 1e-9:
        b = min(w, rem)
        rem -= b
        rounds.append((w, b))
        w = after(w)
    return rounds


def avoidance(
    senders: float, growth: float, beta: float, ceiling: float
) -> Callable[[float], float]:
    """Congestion avoidance's next window: ``growth`` segments more a round trip until the
    senders' windows together exceed ``ceiling`` packets (the buffer and the pipe), where a
    loss cuts each to ``beta`` of itself (fast retransmit; its RTOs are counted apart)."""
    return lambda w: max(2.0, beta * w) if senders * w > ceiling else w + growth


def sawtooth_window(p: Path, senders: float, left: float, at: float, ceiling: float) -> float:
    """The window a sawtooth (:func:`sawtooth_time`) ends its block with: cut from ``at``,
    grown a round at a time while ``left`` segments go out."""
    cut = max(2.0, p.beta * at)
    after = held_avoidance(p, senders, ceiling)
    rounds = _rounds(left, cut, after)
    return rounds[-1][0] if rounds else cut


#: Rounds of ACKs after which a held CUBIC window grows by one all the same: the held ``cnt``
#: is 100 windows of ACKed segments (``tcp_cubic.c``), and the new cwnd ends the hold.
HELD_ROUNDS = 100


def cubic_hold(p: Path) -> float:
    """Seconds Linux's CUBIC holds its window after a loss (:func:`held_avoidance`); 0 for
    the other congestion controls and CUBIC updated on every ACK (RFC 9438's, the classic
    profile's: ``tcp.cubic_update``). Its update is recomputed once cwnd changes or HZ/32
    jiffies on (28 ms at HZ 250, about 31 ms on a fine clock), on the tick after that: half
    a tick more on average. The simulator owns the rule (``linux_cubic_hold``, reported by
    the core with the RTO's timers: ``backends/model.py``)."""
    return max(p.cubic_hold, 0.0)


def held_avoidance(p: Path, senders: float, ceiling: float) -> Callable[[float], float]:
    """Congestion avoidance's next window after a loss (:func:`avoidance`) where Linux's
    CUBIC holds it. Right after the cut the curve's target is the window itself, so
    ``tcp_cubic.c`` sets ``cnt`` to 100 windows, and recomputes it, with the Reno-friendly
    estimate its ACKs have moved meanwhile, only once cwnd changes or HZ/32 jiffies later
    (:func:`cubic_hold`; the simulator's ``cubic_linux.rs`` too). Each hold ends with the
    window catching up with the Reno-friendly line (``p.growth`` a round trip since the
    cut), where the next hold starts: a staircase, not the line. A round is a round trip,
    or the link's time where the senders' windows exceed the pipe; a new cut (the windows
    past ``ceiling``) starts a new hold.

    The simulator at 3 x 452 KB into 10.7 KB at 6.8 Gbps, 521 us (linux CUBIC, IW 1): after
    their cuts the senders keep windows of 11, 6 and 24 for 13-26 ms (25-50 round trips),
    sending 6-12 segments a round trip on a pipe of 293; blocks of 28, 17, 14 and 14 ms,
    586 Mbps. The model, growing them 0.53 a round trip, had 16 ms and then 9 (994 Mbps);
    held, and carried so into the next block (carry.py), 31 and 32 ms (410 Mbps): it now
    errs the other way, the simulator's senders growing faster where a cut comes early in
    a jiffy (its ``cnt`` is recomputed at most once a jiffy), which the model leaves out."""
    hold = cubic_hold(p)
    if hold <= 0:
        return avoidance(senders, p.growth, p.beta, ceiling)
    base, elapsed, shown, rounds = 0.0, 0.0, 0.0, 0

    def after(w: float) -> float:
        nonlocal base, elapsed, shown, rounds
        if senders * w > ceiling:  # a loss: the cut, and a new hold from it
            base, elapsed, shown, rounds = max(2.0, p.beta * w), 0.0, 0.0, 0
            return base
        base = base or w
        elapsed += max(p.rtt, senders * w * p.packet_time)
        rounds += 1
        if rounds >= HELD_ROUNDS or elapsed - shown >= hold:  # recomputed: caught up
            shown, rounds = elapsed, 0
        return max(w, base + p.growth * shown / p.rtt)

    return after


def held_grow(p: Path, senders: float, window: float, acked: float) -> float:
    """The window a sender cut to ``window`` grows to while ``acked`` more segments are
    ACKed in congestion avoidance, ``senders`` sharing the link: :func:`grow` at the
    congestion control's pace, or Linux's CUBIC's staircase (:func:`held_avoidance`)."""
    if cubic_hold(p) <= 0:
        return grow(window, window, acked, p.growth)
    rounds = _rounds(acked, window, held_avoidance(p, senders, math.inf))
    return rounds[-1][0] if rounds else window
