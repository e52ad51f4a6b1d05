"""BBR under RACK-TLP (Linux's profile) in a full port: the room a sender needs to repair a
loss, and the timeouts of the rounds it loses whole while in recovery (Cardwell, Cheng, Gunn,
Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion Control", ACM Queue, 2016; Cheng,
Cardwell, Dukkipati, Jha, "The RACK-TLP Loss Detection Algorithm for TCP", RFC 8985, 2021).
The rest of BBR's model is :mod:`incastlab.model.bbr`; :func:`incastlab.model.burst._block`
uses both.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.tail import backoff_tail

if TYPE_CHECKING:
    from incastlab.model.burst import Path


def rack_room(p: Path) -> bool:
    """Whether every BBR sender under RACK-TLP has room in the port and the pipe to repair its
    losses without waiting its turn: two segments each, the hole and one SACKed above it
    (RACK marks the hole lost on that SACK, no ``dupthresh`` of them needed, and BBR keeps
    its window, four segments at least, through the loss). The senders then go on together,
    none taking turns after the overflow (:func:`incastlab.model.rotate.fresh_turns`). The
    simulator at 28 x 16.9 KB (12 segments, IW 4) into 68 packets (0.2 of pipe), 114 Mbps,
    18 us, RTOmin 52 ms, Linux's profile, restarting every block: 412 drops, 109 fast
    recoveries, 33 loss probes and 3 RTOs in 4 blocks (the model, with the 11 senders beyond
    the port's room for ``dupthresh`` + 1 each taking turns, 11 RTOs a block: 0.60 of the
    simulator's goodput, 0.76 now). Below two segments each the senders' turns stay as they
    were (held / 2 there too scored lower on the nineteen read designs: 87.05% within 1.5x
    against 87.11%)."""
    return p.loss_blind and p.rack_tlp and p.held_packets >= 2 * p.senders


#: Chance a round that a BBR sender in recovery under RACK-TLP sends into the full port ends
#: in an RTO: a figure chosen from the simulator (:func:`recovery_timeouts`), not derived.
RECOVERY_ROUND_RTO = 0.01


def recovery_timeouts(p: Path, left: float) -> float:
    """Chance that a BBR sender with room to repair (:func:`rack_room`) times out while it
    sends the ``left`` segments of its response after the round that overflowed (that
    round's own repair is :func:`~incastlab.model.bbr.unprobed_recovery`'s), a round of its
    share of the port and the pipe (``held_packets / senders``) at a time.

    Its window kept, the port stays full round after round, and a round of which nothing gets
    through waits for the RTO (:func:`~incastlab.model.bbr.unprobed_recovery`: no probe in
    recovery), so the chance grows with the rounds left, :data:`RECOVERY_ROUND_RTO` each. The
    simulator on the 193 unflagged Linux-profile BBR points of the nineteen read designs whose
    first block overflows with room for two segments a sender: RTOs per sender and block, median
    (mean), 0 (0.40) with under 3 rounds left, 0.05 (0.20) with 3-10, 0.21 (0.69) with 10-30,
    0.40 (0.57) with 30-100, 2.3 (3.0) beyond; per round left a median 0.7%, 1.1%, 0.9% and 1.3%
    in the last four. 69 x 187 KB (130 segments, IW 2) into 219 packets, 566 Mbps, 6 us (Linux's
    profile, restarting every block): 9,416 drops, 1,517 fast recoveries and 285 RTOs in 4
    blocks, 1.05 a sender and block over some 40 rounds (the model 0.33 now: the rounds' chance
    is not independent, and a sender times out more than once). On the nineteen read designs
    half and twice the figure give 87.00% and 87.04% within 1.5x, the figure 87.11%."""
    return float(1 - math.exp(-recovery_runs(p, left)))


def recovery_runs(p: Path, left: float) -> float:
    """Expected runs of timeouts of one sender over the ``left`` segments of
    :func:`recovery_timeouts`, a sender timing out more than once: the rounds of its share of
    the port and the pipe, :data:`RECOVERY_ROUND_RTO` each (as a Poisson rate, so that
    ``1 - exp(-runs)`` is that function's chance)."""
    rounds = left / max(1.0, p.held_packets / p.senders)
    return float(-rounds * math.log(1 - RECOVERY_ROUND_RTO))


def unluckiest_waits(senders: float, runs: float) -> float:
    """RTO waits, beyond the one the senders' chain counts (model/chain.py), of the
    unluckiest of ``senders`` BBR senders under RACK-TLP that each time out ``runs`` times
    on average over the rest of the response (:func:`recovery_runs`), in RTOs: the expected
    largest of ``senders`` Poisson counts, less one.

    The timeouts strike each sender apart, round after round, and BBR paces each at its share
    of the link: a sender's own waits are not made up by the others finishing first, and
    the block ends when the unluckiest sender's are over. The simulator at 69 x 187 KB (130
    segments, IW 2) into 219 packets, 566 Mbps, 6 us, Linux's profile, restarting every
    block: 285 RTOs in 4 blocks, 0-14 a sender (3-6 for most), in 146 runs of successive
    timeouts (59 single, 46 double, 30 triple, 11 of four), blocks of 0.21-0.34 s on 0.18 s
    of link time; the model 0.219 s with one RTO wait, 0.237 s with these (the three seeds'
    mean 0.40 s: the count of 1% a round is short of the simulator's, 0.53 runs a sender and
    block against 0.39). Counting the runs' backoff too (each RTO's retransmission dropped as
    often as the kept windows overflow the port) gave 0.33 s there but overshot the short
    responses: 87.45% within 1.5x on the nineteen read designs (87.98% with the waits capped
    at the transfer), against 88.06% before and 88.19% without it."""
    if runs <= 0 or senders <= 1:
        return 0.0
    expected, below, term, k = 0.0, 0.0, math.exp(-runs), 0
    while k < 1000:
        below += term  # P(count <= k)
        tail = 1 - min(1.0, below) ** senders  # P(largest > k)
        if tail < 1e-9:
            break
        expected += tail
        k += 1
        term *= runs / k
    return max(0.0, expected - 1)


def recovery_tail(p: Path, busy: float, runs: float, busy_loss: float) -> float:
    """RTOs a block lasts beyond ``busy`` RTOs of the link's time where the ``runs`` chains of
    timeouts of :func:`recovery_runs` (all senders', spread over the busy time) back off in
    the port the others' kept windows keep full: each retransmission of a chain is lost as
    often as the port is full for it, ``busy_loss`` (the classic profile's chains,
    :mod:`incastlab.model.tail`) where the senders have two segments of room each
    (:func:`rack_room`), less as their share grows (``2 * senders / held_packets``) and as the
    pipe takes more of what the path holds (a packet is lost only where the queue is full),
    and the last chain still backing off when the others' bytes are through ends the block
    (:func:`~incastlab.model.tail.backoff_tail`). Where the transfer is shorter than an RTO a
    chain's first retransmission comes after it, into an idle port, and its one wait is the
    chain's (model/chain.py): no tail.

    The simulator at 1,024 x 885 KB (612 segments) into 3.9 MB (2.8 packets a sender with the
    pipe), 15 Gbps, 309 us, Linux's profile, windows carried: runs of 1-6 timeouts, most of
    4-5 (1+2+4+8+16 RTOs of 12 ms: they end with the transfer, 0.51 s), blocks of 0.88-1.35 s
    (one 3.6 s) against the model's 0.71 s without the chains, 1.00 s with them. At 100 x 744
    KB into 2-12 packets a sender (1 Gbps, 10 us, RTOmin 3 ms, restarting every block) the
    runs go on, a timeout to the next, about two times in three at 2 packets a sender, one
    in three to a half at 4-8, and their RTOs a round fall from 1.6% to 0.1% from 2 to 12.
    On the 29 read designs the chains scored 87.86% within 1.5x against 87.77% before (with
    the chance of a whole round lost falling with the share as the 100-sender runs do,
    87.70%: the 1% a round of :data:`RECOVERY_ROUND_RTO` stays); with the stragglers of
    model/straggle.py 87.96%, 87.92% with a tail under a one-RTO transfer too."""
    if busy < 1 or runs <= 0:
        return 0.0
    full = p.buffer_packets / p.held_packets
    loss = busy_loss * min(1.0, 2 * p.senders / p.held_packets) * full
    return backoff_tail(p, busy, 0.0, runs / busy, loss, p.held_packets)
