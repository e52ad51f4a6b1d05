"""Which senders a block's first round gets through the port (:mod:`incastlab.model.burst`,
step 3), where the requests stagger their bursts.

The receiver's link sends the requests one after the other, a request's wire time apart
(``s`` packet times), and each sender answers with its window back to back at the link's
rate. The bursts overlap, ``f / s`` packets arriving per packet time, and drop-tail keeps what
comes before its buffer fills, then one packet per packet time it sends. So the first senders'
windows get through whole, and later ones lose theirs whole but for the odd packet the port
takes as it drains: the port's packets are not one from each of as many senders as it holds
(the interleaved bursts of :func:`incastlab.model.port.round_capacity`), but concentrated on
fewer senders, most of which lose nothing. The simulator at 598 x 8.2 KB into 204 packets at
47 Gbps (IW 2, classic CUBIC): of the first round's 281 packets, 118 senders got both, 45
one, and 435 none; 152 senders finished without a timeout (the model with one packet each
for 281 senders: 9). At 470 x 10.6 KB into 65 packets (IW 4): 8 got four, 12 three, 11 two,
40 one, 399 none; 67 finished without a timeout.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.rounds import untouched

if TYPE_CHECKING:
    from incastlab.model.burst import Path


def fill_time(q: float, f: float, s: float) -> float:
    """Packet times after the first packet until the port's ``q`` packets of buffer fill,
    bursts of ``f`` packets starting ``s`` apart (as a fluid: each burst arrives at the link's
    rate, the port drains one packet a packet time)."""
    rate = f / s  # packets arriving per packet time once the bursts overlap fully
    if rate <= 1:
        return math.inf
    # Ramp: the first f packet times, bursts keep starting and none has ended: T^2 / (2s).
    t = s + math.sqrt(s * s + 2 * s * q)
    if t <= f:
        return t
    return (q + f * f / (2 * s)) / (rate - 1)


def first_round(p: Path, n: float, f: float, cap: float) -> tuple[float, float, float] | None:
    """Of ``n`` senders whose first-round bursts of ``f`` packets (staggered by the requests)
    overflow a port that takes ``cap`` packets of them: (those with the whole burst through,
    those with part of it through, the packets those got), or ``None`` where every burst
    begins before the port fills (the interleaved bursts of port.py)."""
    s = p.request_gap
    t = fill_time(p.buffer_packets, f, s) if s > 0 else math.inf
    if math.isinf(t) or n * s <= t:
        return None
    full = min(n, max(0.0, (t - f) / s))
    started = min(n, t / s)
    # After the port fills it takes one packet a packet time of the f / s arriving: each
    # later burst gets each of its packets with that chance.
    later = max(0.0, n - started) * (1 - (1 - min(1.0, s / f)) ** max(1.0, f))
    partial = max(1e-9, min(n - full, (started - full) + later))
    return full, partial, max(0.0, cap - full * f)


def emptied(n: float, f: float, cap: float) -> float:
    """Of ``n`` senders whose interleaved first-round bursts of ``f`` overflow a port that
    takes ``cap`` packets, those with none through: once the buffer fills the port takes one
    packet a packet time of whichever arrive, each alike, so a sender's count is binomial and
    some get none though there is room for a packet from each. The simulator at 34 x 54 KB
    (IW 10) into 74 packets at 69 Gbps (classic CUBIC, host jitter 5.6 packet times): of 340
    packets the port took 83; 5 senders got none of theirs and timed out, every block 3-5
    (the model with 2.4 each for all: none, 9.5x too optimistic)."""
    if n <= 0 or f <= 0:
        return 0.0
    taken = min(1.0, cap / (n * f))
    return float(n * (1 - taken) ** max(1.0, f))


def split(
    p: Path, n: float, f: float, cap: float, first: bool
) -> tuple[float, float, float, float, float]:
    """The overflow of a round of ``n`` bursts of ``f`` into a port that takes ``cap``
    packets: (senders that lose their whole burst, senders that lose part of it, the packets
    these lose, the senders that send the next round, the packets each of the partial ones
    got through). A ``first`` round's bursts are staggered by the requests
    (:func:`first_round`); later ones interleave, and drop-tail keeps the first ``cap``
    packets: one from each of ``cap`` senders, the others lose all."""
    got = first_round(p, n, f, cap) if first else None
    if got is None:
        # Counted for classic Reno and CUBIC, as limited transmit (model/limited.py) is:
        # BBR's and RACK-TLP's fitted rules stay as they were, and DCTCP's where its marks keep
        # the port short of full (burst.Path.holds_queue).
        counted = first and not (p.rack_tlp or p.loss_blind or p.holds_queue)
        whole = max(n - cap, emptied(n, f, cap) if counted else 0.0)
        partial = max(1e-9, n - whole)
        return whole, partial, max(0.0, n * f - cap - whole * f), n, min(f, cap / partial)
    full, partial, through = got
    return n - full - partial, partial, partial * f - through, full + partial, through / partial


def lost_nothing(p: Path, n: float, f: float, cap: float, first: bool) -> float:
    """Of ``n`` senders whose round of ``f`` overflows a port that takes ``cap`` packets,
    those that lost nothing and go on in slow start: the interleaved rounds' last to arrive
    each lose a segment (:func:`incastlab.model.rounds.untouched`), and in a ``first`` round
    the first senders get their whole burst through (:func:`first_round`)."""
    got = first_round(p, n, f, cap) if first else None
    return max(untouched(n, f, cap), 0.0 if got is None else got[0])
