"""The backoff tail (:mod:`incastlab.model.burst`): a block ends when its last sender's
backed-off timer fires, which can be long after the link has sent the block's bytes.

Where many senders share a port too small for each to keep a window (they take turns waiting
for RTOs, :func:`incastlab.model.burst._block`), the port stays full while the block's bytes go
through, and a retransmission sent into it is lost as often as not. A sender whose
retransmissions keep being lost backs off (its k-th retransmission ``1 + 2 + ... + 2^(k-1)``
RTOs after its timeout) while the link is busy with the others, and when the link has sent
everyone else's bytes it still waits for its timer: the block ends at that sender's next
retransmission, up to twice the busy time after its timeout. The simulator at 544 x 768 KB
into 78 KB at 779 Mbps, RTOmin 17.7 ms (classic Reno): the link is busy the first 258 RTOs of
each block, which ends after 522-535; runs of 9 timeouts in a row (511 RTOs).

The senders that were still backing off when the link went idle retransmit together at the
first retransmission past it, and while they overfill the port's buffer and pipe (``room``)
they collide again, and those lost back off once more: the simulator at 655 x 28 KB into
170 KB at 317 Mbps (BBR) is busy for 210 RTOs, then again at 255-315, 510-540 and 1,030.

A survivor whose retransmission gets through is not done with the port: its ACK releases
two segments (slow start from the window of one the RTO left), and a BBR sender, whose pacing
the loss did not slow, sends them at once, so the port holds half as many returning BBR
senders as retransmissions (:func:`returning_segments`). The simulator at 6 x 812 KB into 4.1
packets (1.1 of pipe) at 106 Mbps, 126 us, RTOmin 178 ms (classic BBR, windows from the
initial one each block): the link's time is 2.2 RTOs a block; two senders come back at 3 RTOs
and a third, whose retransmission met theirs, at 7 (1 + 2 + 4); blocks of 3.4-7.4 RTOs, 7.2
on average over three seeds (the model 4.0 with the survivors' one segment each, 6.3 with
two). At 20 x 428 KB into 2.9 packets at 161 Mbps, RTOmin 3.1 ms: busy for 140 RTOs, three
senders come back together at 255 and back off again, two more at 511, and the block ends at
1,029. Counted for every congestion control, the random designs scored worse (three lost 0.3-0.4
points, one gained 0.3): two segments each is kept for BBR alone.

In a later block the start's survivors retransmit at their drifted RTOs, apart by the
differences between them times the RTOs waited since the first retransmission
(:mod:`incastlab.model.drift`, as the chain's waves are), and the port sends some while they
come: only a run's first block, whose RTOs are the handshake's, keeps them in step. The
simulator at 238 x 247 KB (171 segments) into 7.0 KB (4.6 packets) at 444 Mbps, 8.5 us,
RTOmin 3.3 ms, classic BBR: first blocks of 8,200-16,300 RTOs, later ones of 645-1,114 (the
model 3,377 in every block, its tail's collisions alike; now 7,839 and 1,360); at 440 x 32
KB into 7.1 KB at 547 Mbps: later blocks of 1,030-2,070 RTOs (the model 3,273, now 2,071).
At 544 x 78 KB into 620 packets at 31 Gbps the spread of the second retransmission is not
yet enough: runs of one and two timeouts in every block, 3-4 RTOs, as the model's (counting
the RTOs waited from the timeout, not from the first retransmission, had them 1).

The chains start in two ways: together, the senders that time out in the round that first
overflows the port (at the start of the busy time), and one by one through it (a rate per
RTO). A chain that started ``u`` RTOs before the busy time ends has sent its retransmissions
before the end (each lost with :attr:`~incastlab.model.fitted.Constants.busy_loss`) and waits
for the next one after it. The block's extension is the latest of these, in expectation.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

from incastlab.model.serial import MAX_LEVELS, waited

if TYPE_CHECKING:
    from incastlab.model.burst import Path


def _times(p: Path, busy: float) -> list[float]:
    """RTOs after a timeout each retransmission goes out (0 for the timeout itself), up to
    the first past ``busy``."""
    out = [0.0]
    for level in range(1, MAX_LEVELS):
        out.append(waited(p, level))
        if out[-1] >= busy:
            break
    return out


def _chains_past(t: list[float], busy: float, rate: float, loss: float, x: float) -> float:
    """Expected chains started through the ``busy`` RTOs, ``rate`` per RTO, whose next
    retransmission after the busy time comes more than ``x`` RTOs after it (``t``:
    :func:`_times`): for each number ``k`` of retransmissions sent before the end, each lost
    with chance ``loss``, the start times that leave the next one that late."""
    n = 0.0
    for k in range(len(t) - 1):
        if t[k] >= busy:
            break
        span = min(t[k + 1] - x, busy) - t[k]
        if span > 0:
            n += loss**k * span
    return rate * n


def still_waiting(p: Path, busy: float, rate: float, loss: float) -> float:
    """Expected chains of timeouts still backing off when ``busy`` RTOs of lossy busy time
    end: ``rate`` start per RTO through it, each retransmission lost with chance ``loss``."""
    return _chains_past(_times(p, busy), busy, rate, loss, 0.0)


def returning_segments(p: Path) -> float:
    """Segments each of the start's survivors puts into the port at once when its
    retransmission after the busy time gets through: two for BBR (its ACK releases two in slow
    start from one, paced at the rate the loss left alone), one otherwise (the retransmission
    alone decides whether the survivor is lost again)."""
    return 2.0 if p.loss_blind else 1.0


def backoff_tail(
    p: Path,
    busy: float,
    start: float,
    rate: float,
    loss: float,
    room: float = math.inf,
    drift: float = 0.0,
) -> float:
    """Expected RTOs a block lasts beyond ``busy`` RTOs of busy link: ``start`` senders time
    out together at its start and ``rate`` per RTO through it, each retransmission sent
    while it is busy is lost with chance ``loss``, and those of the start still waiting at
    the end collide while they are more than ``room`` packets
    (:func:`returning_segments` each) and what the port sends while their retransmissions
    arrive, ``drift`` packet times apart per RTO waited since their first (a later block's
    drifted RTOs, :func:`~incastlab.model.drift.drift_per_rto`; 0 in a run's first block)."""
    if busy <= 0 or loss <= 0 or (start <= 0 and rate <= 0):
        return 0.0
    t = _times(p, busy)
    # Chains that started at the start: still waiting at the end if every retransmission
    # before it was lost; then they end at the first one after it.
    m = sum(1 for x in t[1:] if x < busy)
    x0 = t[m + 1] - busy if m + 1 < len(t) else 0.0
    hit0 = 1 - (1 - loss**m) ** start if start > 0 else 0.0

    def count(x: float) -> float:
        return _chains_past(t, busy, rate, loss, x)

    edges = {0.0, x0}
    for k in range(len(t) - 1):
        edges.add(max(0.0, t[k + 1] - busy))
        edges.add(max(0.0, t[k + 1] - t[k]))
    xs = sorted(edges)
    # Between the edges ``count`` is linear: the chance that no chain reaches past x,
    # exp(-count), integrates in closed form.
    ext = 0.0
    for lo, hi in itertools.pairwise(xs):
        if hi <= lo:
            continue
        a, b = count(lo), count(hi)
        none = (
            (hi - lo) * math.exp(-a)
            if abs(b - a) < 1e-12
            else ((math.exp(-a) - math.exp(-b)) * (hi - lo) / (b - a))
        )
        start_none = 1.0 - hit0 if lo < x0 else 1.0
        ext += (hi - lo) - none * start_none
    # The start's survivors retransmit together after the busy time and collide again as
    # long as they overfill the port's room: those lost back off once more.
    w, level, each = start * loss**m, m + 1, returning_segments(p)
    while w > 1e-3 and level < MAX_LEVELS:
        # The k-th retransmission's spread counts the RTOs waited since the first (as a
        # chain's waves do: serial.waited(k - 1)).
        spread = room + drift * waited(p, level - 1)
        w *= loss * max(0.0, 1 - spread / (each * w))
        if w <= 1e-3:
            break
        ext += (waited(p, level + 1) - waited(p, level)) * (1 - math.exp(-w))
        level += 1
    return ext
