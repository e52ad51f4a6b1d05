"""What one round of the senders' bursts gets through the bottleneck port
(:mod:`incastlab.model.burst`, step 2), the rate an ACK-clocked slow-start round arrives
at, which DCTCP's marking (:mod:`incastlab.model.marking`) also follows, and the queue a
block builds in front of its drops, which the senders' RTO estimators follow."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from incastlab.model.burst import Path


def slow_start_rate(p: Path) -> float:
    """Times the link's rate a later slow-start round arrives at, ACK-clocked: each ACK
    releases two segments (three per delayed ACK of two)."""
    return 1.5 if p.delayed_ack > 0 else 2.0


def round_capacity(p: Path, senders: float, per_sender: float, first: bool) -> float:
    """Packets one round of ``senders`` bursts of ``per_sender`` packets gets through the port.

    The first round arrives at ``senders`` times the link rate while the port drains one
    sender's burst (and what arrives while the requests go out one after the other); later
    slow-start rounds arrive at twice the rate (two segments per ACK), so half of the round,
    or all of it beyond the pipe, must fit in the buffer."""
    q = p.buffer_packets
    if first:
        return q + per_sender + p.request_gap * (senders - 1)  # drained as requests go out
    # Each sender's NIC sends at most at the link rate.
    return arriving_capacity(p, min(slow_start_rate(p), senders))


def arriving_capacity(p: Path, rate: float) -> float:
    """Packets a round arriving at ``rate`` times the link's rate gets through the port: the
    port sends one packet for every ``rate`` that arrive, so its buffer holds the last
    ``1 - 1 / rate`` of the round, or the whole round where the buffer and the pipe hold it;
    a round no faster than the link never fills it."""
    if rate <= 1:
        return math.inf
    return min(p.buffer_packets * rate / (rate - 1), p.held_packets)


def queue_ramp(senders: int, queue_bytes: float, frame: int, link_bps: float) -> tuple[float, int]:
    """The queue a block builds before its drops (seconds of delay: the port's buffer, or
    DCTCP's marking threshold it holds the queue at) and the round trips each sender samples
    while it builds (its share of the buffer's packets, at least one, at most 64: beyond, the
    estimator has caught up). A sender times out on the RTO its estimator learned from those:
    10 x 657 KB into 5.5 MB at 440 Mbps (classic CUBIC, RTOmin 3.2 ms), the blocks with
    timeouts take 269-274 ms against 127 ms (the queue's 99 ms and more), and the model with
    RTOmin alone gave 128 ms."""
    samples = max(1, min(64, round(queue_bytes / frame / max(1, senders))))
    return queue_bytes * 8 / link_bps, samples


def rto_seconds(p: Path, first: bool = False) -> float:
    """The RTO a sender waits before backoff, as the simulator's estimator learns it from the
    round trips that saw the port's queue build (:func:`queue_ramp`): the one rule the waits
    and their backoff's cap (:func:`incastlab.model.serial.backoff`) both read. In the run's
    ``first`` block the estimator starts from the handshake's sample alone (``rto_first``)."""
    base = (p.rto_first or p.rto) if first else p.rto
    return max(base, p.rto_queued)


def turns_rto(p: Path, rto: float) -> float:
    """The RTO of senders that take turns through the full port (burst._block's ``rotating``)
    on a coarse timer tick (Linux's profile): their round trips keep crossing the full queue,
    and their estimators settle on the base RTT plus its delay (``rto_settled``), not the few
    samples of its build-up (:func:`queue_ramp`). The simulator at 201 x 372 KB into 58
    frames at 167 Mbps, RTOmin 0.64 ms (linux CUBIC, windows carried; a 4.2 ms queue): the
    later blocks' waves of retransmissions 1.6 and 3.2 s into the block, 127 and 255 RTOs of
    12 ms (the settled estimator's), not of the ramp's 8 ms; the senders' silences before
    a retransmission 8 or 12 ms times 1, 2, 4 ... plus a tick. Under the classic profile
    (1 us clock) the same measure gives the ramp's RTO (128 x 485 KB into 117 frames at
    253 Mbps, classic Reno: 5.2, 10.5, 21, 43 ms ... against 5.2 ms and 10.8 settled), and
    the rule is left out there."""
    return max(rto, p.rto_settled) if p.timer_tick > 0 else rto
