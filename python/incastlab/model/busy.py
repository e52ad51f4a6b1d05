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
served every wave alike and ended the chain after 10 backoffs (731 RTOs); with it, 12.

A wave into the busy port competes with the served senders' rounds, one segment or more each
after their RTO: the port's buffer and pipe hold ``held_packets`` of the two segments each of
those sends, the rest is lost. Later blocks' waves spread over their senders' drifted RTOs
(:mod:`incastlab.model.drift`) and do not meet the port at once; DCTCP's marks keep its queue
short of full, and BBR's and RACK-TLP's losses are not found by the RTO alone (the model's
other modules): the scores of the random designs got worse with those included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    the port its senders' retransmissions find room in."""
    until, sending = busy
    t = waited(p, level)
    if t >= until:
        return got, (t + got * link_rtos, got)
    if not first or p.marking is not None or p.loss_blind or p.rack_tlp:
        return got, busy
    return got * min(1.0, p.held_packets / (2 * sending)), busy
