"""DCTCP's hold on the window across blocks (:mod:`incastlab.model.burst`): a sender's window
stays near its share of the marking threshold and the pipe, but only once the queue has passed
the threshold and marked its segments.

A block whose rounds never queue more than the threshold marks nothing: DCTCP has nothing to
cut, slow start grows the window as Reno's would, and the window is carried into the next block
whole, where the senders' first round together can overflow the port. The simulator at 68 x
16 KB into 872 KB (marking at 436 KB) at 1.4 Gbps, IW 1, windows carried (classic DCTCP): the
first block's largest round brings at most 423 KB, no mark, no cut; the second block's first
round (windows of about 13) drops 200 segments and waits an RTO (48 timeouts), after which the
marks hold the windows and the next blocks take 6.9 ms again.

A round that passes the threshold cuts the windows as a loss would (to half: DCTCP's fraction
of marked segments starts at one), part of a round late: the marks come back on the ACKs of
the round's later segments, after the earlier ones, unmarked, have released two segments each
of the next round; the first marked ACK then cuts the window to half of what it has grown to,
and the sender sends no more until what is out falls under it. A later slow-start round
arrives at twice the link's rate on what the last one left queued (half of it, less the
pipe), so the unmarked segments are twice the room left under the threshold. The marks fall
on the round's last segments to come in, on the last senders' bursts, whole where the
requests' stagger keeps them apart (:func:`marked_senders`): those with none go on in slow
start, and their doubled bursts take the next round's marks. The simulator at
9 x 38 KB into 132 KB (marking at 66 KB, 4 packets of pipe) at 2.7 Gbps, IW 1, classic
DCTCP: rounds of 1, 2, 4, 8 segments, then 11 (the rest) from three senders and 6 from the
six cut, no drop, no RTO, 1.12 ms a block; the model with the next round whole (9 x 11
segments overflow the buffer and the pipe) waited 2.3 RTOs a block, 3.3 ms.
From then on the windows grow a segment a round trip, cut again each time together they pass
the threshold (:func:`marked_avoidance`), and where the pipe is far larger than the threshold
the link stays mostly idle, as behind a short buffer (model/window.py). The simulator at
7 x 693 KB into 372 KB (marking at 186 KB) at 38 Gbps, 1.75 ms (5,450 packets of pipe),
windows carried, classic DCTCP: rounds of 10, 20, 40, 72, then 45, 29, 30, 31...
segments, no RTO, 25-30 ms a block, 4% of the link (the model, which let the windows fill the
pipe, 8.2 ms).

The block ends with the window the sawtooth grew back to, and the next block starts from it
(restarts aside), not from the senders' share of the threshold and the pipe, which a large pipe
puts far above it. The simulator at 2 x 88 KB into 9.7 KB (marking at 4.9 KB, 118 packets of
pipe), 9.1 Gbps, 160 us, linux DCTCP, windows carried: rounds of 4, 6, then 4, 3, 3, 5, 5, 7,
6, 7, 9 segments, 5 echoes answered by each sender in 4 blocks of 12 round trips (1.98 ms); the
model, carrying windows of 15 (its share: 60), 1.18 ms a block; carrying the sawtooth's 10,
1.37 ms.

Marks that fall only on the round that ends the responses cut little that the next block
sees: the senders, done, keep most of the windows slow start grew on that round's ACKs. The
simulator at 78 x 59 KB into 2.6 MB (marking at 1.3 MB) at 94 Gbps, 50 us, IW 3, classic
DCTCP, windows carried: the first block's last round (20 segments each) queues 1.75 MB, and
the windows end it at 15 to 44 segments (27 on average; their share is 16); the second
block's first round drops 164 segments and 21 senders wait an RTO (85 ms, 0.49 ms a block
otherwise). The model, which had cut them to 12, took 0.47 ms a block; carrying them
whole (44): all 78 time out in the second block, whose time is the RTO either way.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from incastlab.model.port import round_capacity, slow_start_rate
from incastlab.model.window import avoidance, sawtooth_time, sawtooth_window

if TYPE_CHECKING:
    from incastlab.model.burst import Path, Rounds


def _held_unmarked(p: Path) -> float:
    """Packets the path holds before the port marks: the marking threshold and the pipe."""
    assert p.marking is not None
    return p.marking / p.frame + p.pipe_packets


def share_cap(p: Path) -> float:
    """The window DCTCP's marking holds a sender to: its share of the marking threshold and
    the pipe (no cap without marking)."""
    if p.marking is None:
        return math.inf
    return max(2.0, _held_unmarked(p) / p.senders)


def carried_cap(
    p: Path,
    mark: Rounds | None,
    ssthresh: float,
    lossy: bool,
    sawtooth: float,
) -> float:
    """The window a block lets a sender carry into the next: its sawtooth's last (``sawtooth``)
    under its share (:func:`share_cap`) once a loss (``lossy``) or the marks have cut it.

    ``mark`` is :func:`incastlab.model.burst._burst`'s account of the block on the threshold's
    port. Marks that fall only on the round that ends the response cut what the senders they
    fall on carry (:func:`echoed_cut`), nothing more."""
    if lossy:
        return min(share_cap(p), sawtooth)
    if mark is None or mark.loss_round is None:
        return math.inf
    last = mark.left <= mark.window / 2 + 1e-9  # half of the marked round left: nothing after
    if last and math.isinf(ssthresh):
        return echoed_cut(p, mark.loss_round == 0, mark.window, 2 * mark.left)
    return min(share_cap(p), sawtooth)


def echoed_cut(p: Path, first: bool, window: float, per_sender: float) -> float:
    """The mean window the senders carry out of a block whose marks fall only on its last
    round, of ``per_sender`` segments each from ``window`` (the block's ``first`` round).

    The senders, done, still take the marks their ACKs echo: the first marked ACK cuts the
    window, grown by the round's unmarked ACKs before it, to half, and the sender carries
    that. Where the marks fall on some senders' bursts whole (:func:`marked_senders`), one
    sender can have gone unmarked: it carries what slow start grew on the whole round, and the
    next block's first round overflows by it, so the block carries that. Where they fall on
    every sender's burst, every sender cuts, however many of the round's segments come in
    unmarked: the simulator at 17 x 15.9 KB (11 segments) into 189 KB (marking at 94 KB) at
    668 Mbps, 54 us, IW 4, linux DCTCP, windows carried: rounds of 4 and 7, the queue at
    most 174 KB, every window cut (at most 8, 4.8 on average carried), no drop, 3.5 ms
    blocks; the model, which had one sender unmarked since the round's unmarked segments were
    more than a sender's round, carried 15 and waited for probes in the second block
    (0.31 Gbps against 0.62). The simulator at
    5 x 12 KB into 38 KB (marking at 19 KB, 4.7 packets of pipe) at 874 Mbps, 66 us, IW 3,
    classic DCTCP, windows carried: rounds of 3 and 6 segments, 4-6 of each sender's 9
    marked, all on the second round; the first marked ACK
    comes after the last segment went out, and each sender cuts once, and starts the second
    block from 5 segments, not 12 (no drop, no RTO, 0.69-0.73 ms a block; the model, which
    carried 12, waited an RTO, 45 ms, in the second block). At 78 x 59 KB into 2.6 MB at
    94 Gbps (marks on 40% of the last round, of 20 segments) the windows end at 15-44, 27 on
    average, and the unmarked senders' whole responses overflow the second block's first
    round: 21 RTOs. Carrying the mean window (27-31) there hid them (45x too optimistic)."""
    grown = window + per_sender
    hits = first_marks(p, p.senders, per_sender, first)
    if hits is None or hits[0] < p.senders:
        return grown
    return max(2.0, (window + hits[1]) / 2)


def avoiding_capacity(p: Path, cap: float) -> float:
    """Packets a round gets through the port once the marks have cut every sender's window
    and it grows a segment a round trip (``cap``: a slow-start round's): the round comes in
    at the rate of the ACKs, not twice it, and the port holds what the pipe does not, unless
    the senders' one more segment each, come in together, overflow it as a slow-start round
    of one would.

    The simulator at 3 x 45 KB into 17 KB (marking at 8.3 KB, 5,200 packets of pipe) at
    50 Gbps, 1.27 ms, IW 4, classic DCTCP, windows restarted: each sender cut once a block
    (2-4 cuts in 4 blocks), the port's queue at most 8 packets, no drop, no RTO, 7.6-10.2 ms
    a block; the model, which took the cut windows' rounds at twice the link's rate (a
    round of 3 x 9 overflowing 11 packets), waited RTOs: 101 ms a block. 13 x 192 KB into
    52 KB at 38 Gbps, 701 us (2,150 packets of pipe): no RTO, the model 0.1 a sender."""
    if p.senders <= round_capacity(p, p.senders, 1.0, False):
        return max(cap, p.held_packets)
    return cap


def threshold_port(p: Path) -> Path:
    """The port as the marking sees it: a round that overflows this one marks segments (a
    port without marking of its own)."""
    assert p.marking is not None
    return dataclasses.replace(p, buffer=p.marking, marking=None)


#: The chance that one sender's segments come in under the marks of two rounds in a row (and
#: its window is cut twice): a figure chosen on the random designs' DCTCP points (0.07-0.2
#: score alike), not derived. The simulator's share spreads widely: 1 in 8 at 128 x 36 KB,
#: 25 in 35 at 35 x 733 KB (the docstring of :func:`marked_sawtooth`).
TWICE_CUT = 0.1


def marked_sawtooth(
    p: Path, senders: float, segments: float, window: float, left: float, at: float
) -> tuple[float, float]:
    """A block whose round of ``at`` segments a sender first passed the marking threshold,
    ``left`` of its ``segments`` unsent after it (:func:`incastlab.model.burst._burst`'s,
    which holds half the round): its time and the window it ends with.

    The block ends with its slowest sender, not the mean one. A slow-start round comes in as
    the senders' bursts one after the other, in the order of the block's first round, so the
    marks fall on the last senders' whole bursts, round after round: those are cut part way
    through the round that first passes the threshold (marked already in the one before), cut
    again by the next round's marks, to a quarter of ``at``, and grow back a segment a round
    trip. The more senders, the likelier one of them is (:data:`TWICE_CUT` each); the block
    waits for it. The simulator at 35 x 733 KB into 3.3 MB (marking at 1.6 MB, 11,700 packets
    of pipe), 93 Gbps, 1.54 ms, IW 10, linux DCTCP, no drop: 10 senders cut once go 10, 20,
    40, 80, 160, 192 segments a round and are done by 9.4 ms; 25 cut twice send 62-148 of the
    round of 160, drop to 39-90 segments and need 3-8 rounds more, the last done at
    17.4-20.5 ms (the model with the mean sender alone: 10.2 ms; with the slowest: 17.3 ms).
    128 x 36 KB into 1.1 MB at 52 Gbps, 1.59 ms, IW 2, classic DCTCP: most senders go 2, 4,
    8, 11 segments a round, one in eight is cut twice (8, 5, 4, 2), blocks of 9.8-13.0 ms
    (the mean sender alone: 6.7 ms; with the slowest: 11.3 ms)."""
    ceiling = _held_unmarked(p)
    mean_left = max(0.0, left - 1.5 * at)
    mean = sawtooth_time(p, senders, segments, window, mean_left, at, ceiling)
    # The slowest sends half its marked round (the other half is in ``left``), then from at / 4.
    slowest = sawtooth_time(p, senders, segments, window, left, at / 2, ceiling)
    some = 1 - (1 - TWICE_CUT) ** senders
    return (
        mean + some * max(0.0, slowest - mean),
        sawtooth_window(p, senders, mean_left, at, ceiling),
    )


def unmarked(p: Path, senders: float, per_sender: float, marks: float, first: bool) -> float:
    """Packets of a round of ``senders`` x ``per_sender`` past the marking threshold that come
    in unmarked: the ``marks`` that fit under it in a block's first round (its burst comes
    at once); in a later one, arriving at slow start's rate into what the last round left
    queued, the threshold's room times rate / (rate - 1)."""
    if first:
        return marks
    assert p.marking is not None
    rate = slow_start_rate(p)
    left = max(0.0, senders * per_sender * (rate - 1) / rate - p.pipe_packets)
    return max(0.0, rate / (rate - 1) * (p.marking / p.frame - left))


def marked_senders(p: Path, senders: float, per_sender: float, marked: float) -> float:
    """The senders that ``marked`` packets, the last to come in of a slow-start round of
    ``per_sender`` each, fall on.

    The block's first round reaches the port in the order the requests started the senders'
    bursts, a request's wire time (``gap`` packet times) apart, so a burst of the initial
    window overlaps those of the next ``(IW - 1) / gap`` senders only; each later round comes
    in as its ACKs release it and keeps that spread (each ACK releases its segments where the
    one it acknowledges was). The marks fall on the last senders' bursts, whole where they do
    not overlap: a sender's burst spread over ``m`` senders' places ends in the marked tail of
    the round with the chance marked / ((senders - m) x per_sender), and the senders it
    misses go on in slow start. The simulator's block 1 (IW 2, the marks on the second round,
    of 4 each): 41 senders at 5 Gbps (classic DCTCP), 104 marks on 30 senders (this rule 33;
    one mark on each sender's burst, as the model had it: 41; whole bursts: 26); 13 at
    38 Gbps, 13 marks on 6 (11; 13; 3); 4 at 5 Gbps, 6 marks on all 4 (4; 4; 1.5); 5 at
    874 Mbps, IW 3, the round of 6: 22 marks on all 5 (5; 5; 3.7). 940 at 45 Gbps (linux
    DCTCP), the first round of 2 each: 384 marks on 194 senders (this rule with the
    simulator's marks: 194), 988 marks on 256 senders in the second; the unmarked senders'
    rounds of 4 overflow the port, about 100 drops a block (the model, with every sender cut
    in the first round, no loss)."""
    gap = p.request_gap
    spread = senders if gap <= 0 else min(senders, 1 + (p.initial_window - 1) / gap)
    apart = (senders - spread) * per_sender  # the places the bursts' starts spread over
    share = 1.0 if apart <= max(0.0, marked) else marked / apart
    return max(min(1.0, marked), min(senders, marked, senders * share))


def first_marks(
    p: Path, senders: float, per_sender: float, first: bool
) -> tuple[float, float] | None:
    """The senders a round of ``per_sender`` segments each marks (the block's ``first``
    round) and the segments a marked one sends before its first mark (``None``: no mark)."""
    marks = round_capacity(threshold_port(p), senders, per_sender, first)
    total = senders * per_sender
    if total <= marks:
        return None
    marked = total - unmarked(p, senders, per_sender, marks, first)
    hit = marked_senders(p, senders, per_sender, marked)
    if hit <= 0:
        return None
    return hit, per_sender - marked / hit


def marked_round(
    p: Path,
    senders: float,
    per_sender: float,
    w: float,
    w_next: float,
    first: bool,
    uncut: float,
    avoiding: bool = False,
) -> tuple[float, float | None, float]:
    """The mean window of the round after one of ``per_sender`` segments each (from window
    ``w``; ``w_next`` if none is marked; the block's ``first``), the window the marks cut to
    (``None`` while some senders got no mark and go on in slow start), and the senders no
    mark has cut yet, of ``uncut`` before the round.

    A round's marks fall on its last senders, and a sender left unmarked doubles its burst
    into the next round, whose marks then fall on it: the simulator at 41 x 22 KB (block 1,
    classic DCTCP, IW 2), 30 senders marked on the second round, and the 11 left unmarked
    each marked on the third (their rounds of 8). So each round's marks cut the senders not
    yet cut in the share they fall on, and once less than one is left every sender is cut.

    A marked sender sends, before its first mark comes back, what the ACKs of its unmarked
    segments release: two a segment in slow start, one a segment where it is ``avoiding``
    (past ssthresh: a block started from a window at or above the ssthresh an earlier block's
    losses left), and the marked ACKs after them release nothing until what is out falls
    under the cut. The simulator at 14 x 12.9 KB into 66 packets (marking at 33, 1.2 of pipe)
    at 158 Mbps, IW 4, RTOmin 115 ms, classic DCTCP, windows restarted each block (ssthresh
    2.8 kept): after the first block's 8-11 RTOs, each block's senders send 4, then 3 on the
    unmarked ACKs, 1-2 after the marked ones, no drop, no RTO, 9.9 ms a block; the model,
    which doubled the unmarked ones (a round of 14 x 5 over the 68 packets the port and the
    pipe hold), waited 0.76 RTO every block: 96 ms (now 10.1 ms after the first)."""
    hits = first_marks(p, senders, per_sender, first)
    if hits is None:
        return w_next, None, uncut
    hit, through = hits  # through: a marked sender's segments before its first mark
    cut = max(2.0, (w + through) / 2)
    released = 1.0 if avoiding else slow_start_rate(p)  # segments an unmarked ACK releases
    again = min(w_next, max(released * through, cut))
    mean = (hit * again + (senders - hit) * w_next) / senders
    left = uncut * (1 - hit / senders)
    return mean, cut if left < 1 else None, left


def marked_avoidance(p: Path, senders: float, window: float) -> float:
    """The next round's window of ``senders`` in congestion avoidance once the marks have cut
    them all: a segment more a round trip until together they pass the marking threshold and
    the pipe, where the marks cut each again (to ``p.beta``, as :func:`marked_sawtooth`), so
    the port overflows only where one round's growth past the threshold (a segment a sender)
    overflows the buffer above it, not where the windows grow into the buffer and the pipe.
    The simulator at 17 x 546 KB into 88 KB (marking at 44 KB, 29 packets; 31 of pipe) at
    6.6 Gbps, linux DCTCP, windows restarted: 3,061-3,122 cuts in 4 blocks (45 a sender and
    block), 1-6 drops, no RTO and no probe stall, 12.0-12.2 ms a block; the model, which let
    the windows grow to the buffer and the pipe (5.2 each), waited a loss probe every block:
    21.2 ms (now 12.0 ms)."""
    return avoidance(senders, p.growth, p.beta, _held_unmarked(p))(window)
