"""Turns on fresh timers (:func:`incastlab.model.burst._block`): how long the senders that take
turns after the first loss (:mod:`incastlab.model.rotate`) wait, where classic TCP's served
senders reset their backoff.

Each turn the senders whose timers fire retransmit one segment each. Those whose
retransmission the port drops back off: they wait twice as long, and again. Those it takes
have their backoff reset by its ACK and go on in slow start; the port holds a window that
repairs a loss by fast retransmit for only so many of them (``per`` below), and the others,
whose next round it drops, time out again on a fresh timer: one RTO later, not a backed-off
one. The block waits turn after turn, an RTO apart, until every sender is through, not the
backed-off chain (:func:`~incastlab.model.chain.chain`) whose waves come 1, 3, 7 RTOs
after the loss.

How many a turn serves depends on how long the served senders stay in the port. With a long
rest their windows grow until they crowd it, and it holds a window of dupthresh + 1 for each
(:func:`~incastlab.model.burst._repairing`): the simulator at 703 x 424 KB into 310 packets,
410 with the pipe (classic CUBIC, IW 4, restarting each block, RTOmin 186 ms) finishes 89,
98, 110, 117, 136, 127 senders in the turns 0-5 RTOs after the loss (410 / 4 = 103), blocks
of 8.0 RTOs and 1,670-1,700 timeouts, 4,230 runs of one and 1,213 of two over four blocks;
the backed-off chain gives the model 3 RTOs, these turns 6. With a short rest the served
senders are through before their windows grow, and a window of two, with limited transmit,
repairs a loss: 30 x 29 KB (20 segments) into 15 packets (classic CUBIC, RTOmin 18.5 ms)
finishes 5, 8, 10, 5 senders a turn (15 / 2 = 7.5), blocks of 4.0 RTOs, runs of one timeout
129 and of two 25 (the model 4 RTOs; with dupthresh + 1 it gave about 7, the backed-off
chain 3). Where the rest is long is a figure chosen, not derived: :data:`LONG_REST` segments
(on the random read designs 32 scored 0.06 point below it, 64 about as well). The split is
rough in between: 46 x 133 KB (85 segments of rest) into 21 packets (classic Reno, RTOmin
54 ms) finishes 6-11 senders a turn (21 / 2.6), blocks of 5-6 RTOs, the model 8 (before: 4).

Classic TCP only: under RACK-TLP (Linux) the probes serve part of each turn (rotate.py), and
the random designs scored worse with Linux's profile in (87.67% -> 87.57% pooled).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from incastlab.model.serial import NONE

if TYPE_CHECKING:
    from incastlab.model.burst import Path

#: Segments of rest from which the served senders' windows crowd the port (a chosen figure).
LONG_REST = 48.0

#: Turns followed at most (each at least an RTO).
MAX_TURNS = 100_000


def served_per_turn(p: Path, left: float) -> float:
    """Senders a turn serves through the rest of their response: those the port holds a
    window each of that repairs a loss, dupthresh + 1 segments where the ``left`` segments
    keep them there long enough to crowd it, two (limited transmit) otherwise."""
    window = 1.0 + p.dupthresh if left >= LONG_REST else 2.0
    return max(1.0, p.held_packets / min(window, max(1.0, left)))


def turn_waits(p: Path, cap: float, turns: float, left: float) -> float:
    """RTOs from the loss to the last turn of ``turns`` senders with ``left`` segments each,
    whose timers fire together, when the port takes ``cap`` retransmissions a turn
    (:func:`~incastlab.model.drift.retransmit_capacity`): those it drops back off, of those it
    takes :func:`served_per_turn` are through and the rest time out again an RTO later."""
    per = served_per_turn(p, left)
    pending: dict[int, list[tuple[int, float]]] = {1: [(0, turns)]}  # RTO -> (backoffs, senders)
    last = 0
    for _ in range(MAX_TURNS):
        if not pending:
            break
        t = min(pending)
        group = pending.pop(t)
        firing = sum(m for _, m in group)
        if firing < NONE:
            continue
        last = t
        got = min(firing, cap)
        for level, m in group:  # dropped retransmissions: a doubled timer
            lost = m * (1 - got / firing)
            if lost >= NONE:
                pending.setdefault(t + 2 ** (level + 1), []).append((level + 1, lost))
        again = got - per  # served, next round dropped: a fresh timer
        if again >= NONE:
            pending.setdefault(t + 1, []).append((0, again))
    return float(last)
