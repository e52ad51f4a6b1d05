"""Limited transmit (RFC 3042; Linux's in-flight accounting, which the simulator follows): a
sender that lost the end of a round (:func:`incastlab.model.burst._timeout_share`) and has some
of its next round through does not need ``dupthresh`` of that round through at once. Each
segment the receiver SACKs has left the network, so it releases a new one, whose SACK releases
the next, until ``dupthresh`` are SACKed and fast retransmit repairs the hole. Only a sender
with none of that round through, or whose released segments the port drops in turn, waits for
the RTO.

The simulator at 44 x 13.6 KB into 28 packets (53 of pipe) at 10.3 Gbps, RTOmin 47 ms (classic
Reno, IW 4): 0.52-0.64 RTOs per sender and block, every block one RTO, 100 Mbps; with
``tcp.limited_transmit = false`` 0.8-1.2 RTOs per sender, blocks of 2-3 RTOs, 34-37 Mbps (the
model, which asked for ``dupthresh`` of the next round at once, 1.35 and 2.4 RTOs, 41 Mbps). At
12 x 15 KB into 6.8 packets at 17 Gbps (classic CUBIC): 11.3 Mbps with it, 3.9-4.2 without.

The count of the next round through is binomial over the segments sent, each taken as often as
the round's share of the port (a Poisson count, which lets a sender get more than it sent,
scored worse on the random designs). Counted for classic Reno and CUBIC; DCTCP's and BBR's
fitted rules and RACK-TLP's reorder timer (model/probe.py) keep the count short of dupthresh.
Where the port takes the whole next round nobody times out: the few RTOs of small fan-ins
(34 x 54 KB, IW 10, into 74 packets, the simulator 0.12 RTOs per sender) come from the senders
with none of their first round through (model/stagger.py's ``emptied``).
"""

from __future__ import annotations

import math
from functools import lru_cache


@lru_cache(maxsize=4096)
def _reaches(out: int, sacked: int, through: float, dupthresh: int) -> float:
    """Chance that a sender with ``out`` released segments in flight and ``sacked`` SACKed
    gets ``dupthresh`` SACKed: each released segment gets through with chance ``through``
    and releases another while fewer than ``dupthresh`` are SACKed."""
    if sacked >= dupthresh:
        return 1.0
    if out <= 0:
        return 0.0
    total = 0.0
    for j in range(1, out + 1):  # j of the out through; none through ends the clock
        pj = math.comb(out, j) * through**j * (1 - through) ** (out - j)
        total += pj * _reaches(j, sacked + j, through, dupthresh)
    return total


def stalled(sent: float, after: float, dupthresh: int) -> float:
    """Chance that a sender whose next round of ``sent`` segments gets ``after`` of them
    through the port (on average; each alike, so a binomial count: none is more than it sent)
    never gets ``dupthresh`` SACKed: none through, or too few and the segments they release
    lost in turn, each as often as the round's."""
    n = max(1, round(sent))
    q = round(min(1.0, max(0.0, after / n)), 3)

    def count(k: int) -> float:
        return math.comb(n, k) * q**k * (1 - q) ** (n - k) if k <= n else 0.0

    few = count(0)
    for k in range(1, dupthresh):
        few += count(k) * (1 - _reaches(k, k, q, dupthresh))
    return few
