"""Spurious RTOs: the loop a queue longer than the senders' RTOs holds them in.

A sender's RTO comes from the round trips it measured before the queue: the handshake's
sample alone in its first block. A synchronized burst interleaves the senders' segments in the
port, so a sender's ACKs arrive a queue of ``min(N, buffer)`` packets apart (the gap), and the
senders whose first ACK comes later than their RTO (a share ``1 - RTO / gap``) time out with
nothing lost. They stay in the loop if they alone keep one another's ACKs more than an RTO
apart (a gap over two RTOs); fewer time out once and their duplicates drain. Each resends its
window (go-back-N duplicates that join the queue), and by Karn's rule never samples the delay
that fooled it (no RTT sample of a retransmitted segment): from then on every segment it sends
is resent once more, and every queue wait costs ``log2(wait / RTO) + 1`` backed-off timeouts,
each a duplicate of the head, while :attr:`incastlab.model.fitted.Constants.loop_segments`
segments get through (a window restarted from one, growing per ACK). The wait is the queue the
senders keep full of them, at most the buffer. Senders whose first burst beats the timer sample
the queue instead, and their RTOs cover it from then on. Timestamps (Linux's RTT sample of a
resent head) break the loop.

The simulator at 382 x 37 KB into 10 MB at 137 Mbps, RTOmin 0.3 ms (classic): no drop,
193,612 timeouts, 14.7% of the link, where the burst model without the loop says 99%.

Between one gap and two an RTO the late share still loops, but only through the run's first
block, the one started on the handshake's RTO: with fewer than that left behind, their ACKs
come within an RTO of one another once the senders that sampled the queue have gone, and the
loop dies out over the blocks after. The simulator at 126 x 56 KB into 5.85 MB at 121 Mbps,
RTOmin 8.1 ms (classic Reno, windows carried; a gap of 1.56): no drop, 1,588 timeouts in the
first block, then 393, 74 and 14; a third of the senders (the late share, 0.36) time out
36-49 times each in the run, the rest once or twice. Charging the first block alone is a
simplification chosen from that count, not derived (one seed's blocks of 774, 563, 520
and 504 ms against 470 ms of link time).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from incastlab.model.burst import Constants, Path


def ack_gap(senders: float, buffer_packets: float, packet_time: float, rto: float) -> float:
    """RTOs between a sender's ACKs behind the full queue (``min(N, buffer)`` packets apart):
    the gap."""
    return min(senders, buffer_packets) * packet_time / rto


def late_share(gap: float) -> float:
    """The share of senders whose first ACK comes later than their RTO, with ACKs ``gap`` RTOs
    apart: ``1 - RTO / gap``, or none where the gap is under an RTO."""
    return 1.0 - 1.0 / gap if gap > 1 else 0.0


def loop_link_time(
    senders: int,
    segments: int,
    buffer_packets: float,
    packet_time: float,
    rto: float,
    loop_segments: float,
    blocks: int = 1,
) -> float:
    """The link time (seconds) a block of ``senders`` x ``segments`` takes with its spurious
    timeouts' duplicates, on average over a run of ``blocks``, or 0 where no loop holds
    (``rto``: the one the senders start the run with)."""
    gap = ack_gap(senders, buffer_packets, packet_time, rto)
    if gap <= 1:
        return 0.0
    # The share of senders that time out loops in every block only if they alone keep one
    # another's ACKs more than an RTO apart: (1 - 1/gap) x gap > 1. Below, through the first
    # block alone (the module's docstring).
    looping = 1.0 if gap > 2 else 1.0 / max(1, blocks)
    u = loop_segments
    k = 1.0
    for _ in range(20):  # the wait and the duplicates that lengthen it, to a fixed point
        k = math.log2(min(buffer_packets, senders * (2 * u + k)) * packet_time / rto + 1)
    link = senders * segments * packet_time
    return link * (1 + looping * late_share(gap) * (1 + k / u))


def spurious_loop(p: Path, c: Constants) -> float:
    """The link time a block of ``p`` takes with its spurious RTOs; 0 where RTT samples see
    through retransmissions (:attr:`~incastlab.model.burst.Path.karn` off)."""
    if not p.karn:
        return 0.0
    return loop_link_time(
        p.senders,
        p.segments,
        p.buffer_packets,
        p.packet_time,
        _handshake_rto(p),
        c.loop_segments,
        p.blocks,
    )


def spurious_share(p: Path) -> float:
    """The share of senders whose first ACK of the run's first block comes later than the RTO
    they start it with (the handshake's): they time out with nothing lost (the loop's
    ``1 - RTO / gap``), Karn's rule or not."""
    return late_share(ack_gap(p.senders, p.buffer_packets, p.packet_time, _handshake_rto(p)))


def _handshake_rto(p: Path) -> float:
    """The RTO the senders start the run's first block with: the handshake's sample alone."""
    return p.rto_first or p.rto
