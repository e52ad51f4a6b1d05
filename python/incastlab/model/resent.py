"""Retransmissions lost to the cut windows of a slow-start overflow (classic profile).

A sender that lost part of a slow-start round and repairs it by fast retransmit cuts its
window to ``beta`` of the round's; where the cut windows of those repairing, with the
windows of the senders that lost nothing (still in slow start), still overflow what the port
and the pipe hold, the queue stays full through the recovery and the port drops part of the
retransmissions too. Without RACK (the classic profile) a lost retransmission is found only
by the RTO. Reno's half of a doubled round is the round before, which fit; CUBIC keeps 0.7,
1.4 times a round that fit.

The simulator at 5 x 269 KB into 277 KB (182 frames), 19.2 Gbps, 21 us, IW 10 (classic
CUBIC, restarting every block): slow start's fourth round (80 a sender) overflows 182 + 32
held, 316-343 drops in a run, 11-13 fast recoveries, and 1, 3 and 0 senders time out in the
first block of three seeds (blocks of 47 ms against 0.63 ms); the model had none (13.5x),
with this 1.17 (0.98x). The sender that times out in the first seed sent 57 retransmissions
in its fast recovery from 0.31 ms; four of them, sent at 0.44-0.45 ms, were lost, and went
out again after its RTO, at 47.06 ms. 45 x 775 KB into 5,328 frames at 71.9 Gbps, IW 3
(classic CUBIC, windows carried): 1-2 timeouts in the first block of every seed, 122 ms
against 4.1 ms; the model none before (8.15x), 5.0 after (1.02x: one RTO sets the block).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from incastlab.model.path import Path


def lost_retransmissions(
    p: Path,
    senders: float,
    timed_out: float,
    spared: float,
    per_sender: float,
    window: float,
    ssthresh: float,
) -> float:
    """Expected senders, of ``senders`` whose round of ``per_sender`` segments (``window``)
    overflowed the port, that repair it by fast retransmit and lose the retransmission to the
    still-full queue: the share of what the cut windows (and the ``spared`` senders', who lost
    nothing) send over what the port and the pipe hold, one retransmission each at risk
    (``timed_out``: those that time out anyway). Not where RACK finds a lost retransmission
    by time (Linux's profile), BBR keeps its window (its own rule, model/bbr.py), DCTCP's
    marks keep the port short of full, or the round was not slow start's (a window carried
    past ssthresh overflows by a segment, and its cut drains the queue)."""
    if p.rack_tlp or p.loss_blind or p.holds_queue or window > ssthresh:
        return 0.0
    repairing = max(0.0, senders - spared - timed_out)
    sent = repairing * p.beta * per_sender + spared * per_sender
    if repairing <= 0 or sent <= p.held_packets:
        return 0.0
    return repairing * (1.0 - p.held_packets / sent)
