"""Serial RTO waits (:mod:`incastlab.model.burst`, step 4): how senders that timed out
together get through a port that takes only a few of their retransmissions per RTO.

Each wait, the senders still waiting retransmit one segment each; the port holds its buffer
plus what it drains while they arrive, and the rest back off (2, 4, 8 RTOs... up to
``tcp.rto_max``). The retransmissions arrive spread over the order the requests reached the
senders (the receiver's link sends them one after the other, and a sender that lost its whole
window armed its timer when it answered), over the hosts' send jitter, and over the differences
between the senders' RTOs, which grow with every RTO waited. A run's first block has no such
differences: every sender's RTO is the handshake's alone. The simulator at 402 x 12 KB into
24 KB at 3.6 Gbps, RTOmin 8.8 ms: the first block waits 1,023 RTOs (ten backoffs), the later
ones 127 (seven).

The senders the port serves go on with their next round, two segments each, ACK-clocked by
the retransmissions it served; the port holds its buffer and the pipe of them. Those beyond
lose the round whole and time out again, queueing behind the backed-off senders
(:attr:`~incastlab.model.fitted.Constants.rejoin` of them land in the next wave; in a first
block, whose waves come together, one in ``2^level``: :func:`rejoined`): the same
point has 1.7 runs of timeouts per sender and block, and at 200 us RTT instead of 53 (a pipe
of 58 packets, not 16) the first block waits 255 RTOs. Where buffer and pipe hold the served
senders' round, nobody times out twice (470 x 10.6 KB into 98 KB at 88 Gbps, 38 us: one run
per sender and block).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.port import rto_seconds

if TYPE_CHECKING:
    from incastlab.model.burst import Path

#: Backoff levels a chain of waits follows at most (with the cap, hundreds of senders behind
#: a port that serves a few per wait need hundreds of waits).
MAX_LEVELS = 400

#: Expected senders below which a wave of retransmissions (or a turn of them) is taken as
#: none (model/fresh.py, model/turns.py).
NONE = 1e-2


def backoff(p: Path, level: int) -> float:
    """The wait after ``level`` backoffs, in RTOs: doubling up to the cap ``tcp.rto_max``
    (120 s by default, Linux's TCP_RTO_MAX), where a collapse of hundreds of senders spends
    most of its time."""
    return min(2.0**level, max(1.0, p.rto_max / rto_seconds(p)))


def waited(p: Path, level: int) -> float:
    """RTOs waited before the retransmission after ``level`` backoffs (1 + 2 + 4 ...)."""
    return sum(backoff(p, k) for k in range(min(level, MAX_LEVELS)))


def held(p: Path) -> float:
    """Packets the port holds of retransmissions (or probes) that arrive at once: its limit in
    whole frames, the one being sent counted in it, as the simulator's drop-tail counts the
    bytes of every packet until it has left (at least one). The simulator at 38 x 11 KB into
    4,370 bytes (2.9 frames) at 8.2 Gbps (linux Reno): the first round gets six senders
    through, then each wave of retransmissions on the same 4 ms tick two, 17 waves in all
    (258 s blocks). BBR's paced retransmissions do not arrive at once: the port sends one
    while the others come."""
    if p.loss_blind:
        return p.buffer_packets + 1
    return max(1.0, math.floor(p.buffer_packets))


def request_spread(p: Path) -> float:
    """Packet times between the first and the last sender's answer: the receiver's link
    sends the requests one after the other."""
    return p.request_gap * (p.senders - 1)


def served(waiting: float, cap: float, queue: float, drifted: bool) -> float:
    """Of ``waiting`` senders retransmitting after the same number of backoffs, those the
    port holds (``cap``: its ``queue`` plus what it drains while they arrive). The first
    retransmissions fire in the requests' order, each an RTO after its sender's last
    segment: drop-tail keeps exactly what fits (470 senders behind 131 packets of room: four
    waves, 15 RTOs, as in the simulator). After a backoff they have come apart (the hosts'
    jitter, and later blocks' drifted RTOs) and arrive at random over the spread: the queue
    takes the first ``queue`` of them whatever their order, and of the rest of the room
    (what the port drains over the spread) random arrivals leave some unused (the occupancy
    of its slots)."""
    if not drifted:
        return min(waiting, cap)
    q = min(queue, cap)
    spread = max(1e-9, cap - q)
    return min(waiting, q) + spread * (1 - math.exp(-max(0.0, waiting - q) / spread))


def served_again(got: float, room: float) -> float:
    """Of ``got`` senders the port served, those whose next round it drops whole: drop-tail
    keeps the first ``room`` packets (its buffer and the pipe) of their interleaved rounds."""
    return max(0.0, got - room)


def rejoined(p: Path, got: float, room: float, level: int, first: bool) -> float:
    """Of ``got`` senders a wave after ``level`` backoffs served, those whose next round the
    port drops (:func:`served_again`) and who land in the next wave. They time out again an
    RTO after it on a fresh timer (the ACK of the retransmission reset their backoff), and
    retransmit 1, 3, 7 RTOs after it, while the next wave comes ``2^(level + 1)`` RTOs after:
    in a run's ``first`` block, whose waves arrive together (no drift), they land in it
    only as often as their chain spans the gap, one in ``2^level``. The simulator at 326 x
    8.8 KB into 3.8 packets at 6.7 Gbps (classic DCTCP, first block): the waves at 3, 7,
    15, 31 and 63 RTOs served 44, 47, 42, 35 and 35 senders, and the re-timeouts of the
    wave at 7 RTOs retransmitted at 8-11 (24, 17, 16, 12), not at 15; the block took 2,050
    RTOs (the model 1,100; with every re-timeout in the next wave 21,500). Later blocks' waves
    spread over their senders' drifted RTOs, a spread that grows as the gap does."""
    share = 1.0 / backoff(p, level) if first else 1.0
    return share * served_again(got, room)
