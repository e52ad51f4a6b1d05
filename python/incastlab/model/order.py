"""Which senders a later, ACK-clocked slow-start round of a block leaves untouched where it
overflows the port (:func:`incastlab.model.stagger.lost_nothing`): the round keeps the order
the block's first round arrived in.

Each ACK releases two segments of the sender it acknowledges, so a slow-start round arrives in
the order the port sent the round before, every packet of it doubled: round ``k`` repeats the
first round's order at ``2^k`` packets for each of its packets. The first round's bursts (the
request's, ``b`` packets each at the link's rate) start spread over the hosts' send jitter and
the requests' wire times, so its order is the senders' in turn where that spread is long
against a burst, interleaved where it is short. A round that overflows the port drops what
arrives once it is full, and a sender whose part of the first round came before the share of
it that fills the port loses nothing: it goes on in slow start (:mod:`incastlab.model.rounds`)
and carries its grown window into the next block (:mod:`incastlab.model.carry`).

The simulator at 8 x 579 KB (400 segments) into 704 KB (464 frames) at 95.5 Gbps, 416 us
(linux CUBIC, IW 3, host jitter 1 us: 7.8 packet times, windows carried): slow start's round
of 176 overflows the port in the first block (212-238 drops), and 2, 3 and 3 of the 8 senders
(three seeds) go through it without a fast recovery; the interleaved rounds' rule
(:func:`incastlab.model.rounds.untouched`) spares none, this one 3.4 (the next block's
stall from it: :mod:`incastlab.model.kept`).

Scored on the 40 read designs (32002-32041) with :mod:`incastlab.model.kept`: within 1.5x
unflagged 88.20% -> 88.38% (17 points gained, 7 lost; the worst design -0.77). Without the
rule that a round longer than a round trip spares none: 88.45%, but one design -1.16 (classic
Reno's merged rounds spared where the simulator spares none; classic CUBIC's gained there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from incastlab.model.port import slow_start_rate

if TYPE_CHECKING:
    from incastlab.model.path import Path


def _arrived(t: float, spread: float, burst: float) -> float:
    """Packets of one burst of ``burst`` (at one packet a packet time, starting uniformly
    within ``spread`` packet times) arrived after ``t`` packet times, on average."""

    def area(x: float) -> float:  # integral of min(max(x, 0), burst) from 0
        if x <= 0:
            return 0.0
        if x <= burst:
            return x * x / 2
        return burst * burst / 2 + burst * (x - burst)

    return (area(t) - area(t - spread)) / spread


def ordered_untouched(
    p: Path, senders: float, per_sender: float, cap: float, start: float
) -> float:
    """Of ``senders`` whose ACK-clocked round of ``per_sender`` segments overflows a port that
    takes ``cap`` packets of it, those whose part of the round arrives before the port fills:
    the first round's bursts of ``start`` segments, spread over the hosts' jitter and the
    requests' wire times, in arrival order (the module's account)."""
    burst = max(1.0, start)
    spread = p.host_jitter / p.packet_time + p.request_gap * max(0.0, senders - 1)
    if senders <= 1 or spread <= 0 or per_sender <= burst or cap <= 0:
        return 0.0
    # A round that takes longer than a round trip to arrive runs into the next, and the
    # port's queue carries over between them: no round's own order decides what it drops
    # (the simulator at 51 x 173 KB into 611 frames, a pipe of 610, classic Reno, IW 4:
    # every sender goes into fast recovery in the first block's round of 32).
    if senders * per_sender / slow_start_rate(p) > p.pipe_packets:
        return 0.0
    # The share of the first round's order before the fill: a sender is untouched where the
    # packets arrived by its burst's end are under that share of the first round.
    share = min(1.0, cap / (senders * per_sender))
    target = share * burst
    if _arrived(burst, spread, burst) >= target:
        return 0.0
    lo, hi = burst, spread + burst
    if _arrived(hi, spread, burst) <= target:
        return float(senders)
    for _ in range(40):
        mid = (lo + hi) / 2
        if _arrived(mid, spread, burst) < target:
            lo = mid
        else:
            hi = mid
    return senders * min(1.0, max(0.0, (lo - burst) / spread))
