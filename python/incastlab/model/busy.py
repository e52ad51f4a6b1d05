"""Waves of retransmissions into a busy port (:func:`incastlab.model.chain.chain`): in a run's
first block the senders that timed out together retransmit together, 1, 3, 7, 15 ... RTOs
after the loss, and the senders a wave served send the rest of their responses at once.
Where that takes the link longer than the gap to the next waves, those waves arrive at a port
still full of the served senders' rounds and lose most of their retransmissions, which back off
once more.

The simulator at 610 x 108 KB into 13 frames at 1.6 Gbps, RTT 37 us, RTOmin 4.6 ms (classic
Reno, first block): the port's queue is busy for the first 23 RTOs after the loss (the first
wave's 88 senders' 74 segments each take 11 RTOs of link time, and the waves at 1, 3, 7 and 15
RTOs add what they get through), then idle but for the waves at 31, 63, 127 ... 2,047 RTOs;
its senders time out up to 16-17 times in a row and the first block lasts 273-393 s (58,000-
84,000 RTOs, at the 120 s cap) against 4.9-9.8 s for the later ones. The model before this
served every wave alike and ended the chain after 10 backoffs (731 RTOs); with it, 11
(12 before the waves were timed from the first one's, below).

A wave into the busy port competes with the served senders' rounds, one segment or more each
after their RTO: the port's buffer and pipe hold ``held_packets`` of the two segments each of
those sends (four for classic BBR: :func:`served_round`), the rest is lost. Later blocks'
waves spread over their senders' drifted RTOs (:mod:`incastlab.model.drift`) and do not
meet the port at once; DCTCP's marks keep its queue short of full, and under Linux's profile
RACK-TLP finds losses apart from the RTO's waves (the model's other modules): the scores of
the random designs got worse with those included. Classic BBR's first blocks are included
(the read designs' pooled within 1.5x 87.77% -> 87.82% alone): its served senders, too,
send their rest at once, and its waves back off as Reno's do.

A wave's time is counted from the first wave's: the wave after ``level`` backoffs goes out
2 + 4 + ... + 2^level RTOs after it (the first wave itself waited one RTO from the loss), not
1 + 2 + ... + 2^(level - 1), which put every wave a level early against the link's busy time.

Timers on a coarse tick (Linux's 4 ms jiffies) fire together in every block, not only the
first (:func:`~incastlab.model.drift.tick_wave`): a wave lands on the port at one instant,
and while the senders an earlier wave served keep it full (their slow-start rounds, two
segments an ACK, more than its buffer and pipe hold) it takes none of the wave but the
packets it sends during the hosts' jitter, whatever the congestion control. The simulator
at 667 x 175 KB into 84 frames at 506 Mbps, RTOmin 3 ms (linux DCTCP, an 8 ms RTO, windows
carried): runs of 5 to 11 timeouts end 102, 88, 84, 84, 84, 84 and 78 times a block, the
port's 84 frames a wave: the rest of the block's first wave stays whole through the backoffs
while its 84 served senders keep the link busy (31 RTOs of their rest), and is served a wave
at a time from the fifth retransmission on; blocks of 17-35 s (2,047 and 4,095 RTOs)
against 1.96 s of link time, the model 3.9 s before (waves served from the second
retransmission), 33 s now.
At 271 x 447 KB into 131 frames at 396 Mbps (linux Reno, windows carried) the first wave's
131 senders hold the link for 150 RTOs and 144 of the other 140 end runs of seven timeouts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.bbr import MIN_WINDOW
from incastlab.model.serial import waited

if TYPE_CHECKING:
    from incastlab.model.burst import Path

#: No wave has made the link busy yet: (RTOs after the loss it stays busy, senders sending).
IDLE = (0.0, 0.0)


def busy_wave(
    p: Path, first: bool, level: int, got: float, link_rtos: float, busy: tuple[float, float]
) -> tuple[float, tuple[float, float]]:
    """Of ``got`` senders a wave after ``level`` backoffs would serve in an idle port, those
    it serves, and the link's busy time after it: a wave into an idle port makes the link
    busy for ``link_rtos`` (RTOs one served sender's rest takes on the link) times the
    senders it served; one into the busy port in a run's ``first`` block keeps the share of
    the port its senders' retransmissions find room in, and on a coarse timer tick (any
    block) none of it but what the port sends during the hosts' jitter, where the served
    senders' rounds overfill it. ``busy``: RTOs after the first wave the link stays busy
    until, and the senders sending then."""
    until, sending = busy
    t = waited(p, level + 1) - waited(p, 1)  # RTOs after the first wave (from the loss: +1)
    if t >= until:
        return got, (t + got * link_rtos, got)
    if p.timer_tick > 0:
        if 2 * sending <= p.held_packets:
            return got, busy
        return min(got, math.floor(p.host_jitter / p.packet_time)), busy
    if not first or p.marking is not None or p.rack_tlp:
        return got, busy
    return got * min(1.0, p.held_packets / (served_round(p) * sending)), busy


def served_round(p: Path) -> float:
    """Segments a sender a wave served sends at once when the ACK of its retransmission
    comes: two from Reno's window of one, four from BBR's, which never goes under
    ``bbr_cwnd_min_target`` once an ACK has come (Linux's ``bbr_set_cwnd``), though the RTO
    left it at one. The simulator at 238 x 247 KB (171 segments, IW 3) into 7.0 KB (4.6
    packets) at 444 Mbps, 8.5 us, RTOmin 3.3 ms, classic BBR, first block: a sender whose
    retransmission got through 2,040 RTOs after the loss sends four segments 0.14 ms later,
    loses the first of them in the port the others' rounds keep full and times out again;
    of the waves 1, 3, 7 ... 2,047 RTOs after the loss, those at 31 and 127 get 2 and 3
    senders' first segments through, the others 17-29 (the wave at 15 served 27 senders,
    whose rest takes the link 39 RTOs)."""
    return MIN_WINDOW if p.loss_blind else 2.0
