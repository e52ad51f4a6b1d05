"""The senders that timed out together, wave after backed-off wave (:func:`chain`): each wave
the port takes some of their retransmissions (:mod:`incastlab.model.drift`, fewer while it is
busy: :mod:`incastlab.model.busy`), the others wait twice as long, and those whose next round
it drops time out again behind them (:mod:`incastlab.model.serial`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model.busy import IDLE, busy_wave
from incastlab.model.drift import retransmit_capacity
from incastlab.model.serial import MAX_LEVELS, backoff, held, rejoined, served

if TYPE_CHECKING:
    from incastlab.model.burst import Path
    from incastlab.model.fitted import Constants


def chain(
    p: Path,
    c: Constants,
    waiting: float,
    segments: float,
    first: bool,
    rto: float,
    stalled: float = 0.0,
) -> tuple[float, float, float]:
    """Senders that timed out together (in the run's ``first`` block or a later one):
    (expected serial waits in RTOs, expected timeouts, RTOs of those waits the link spends
    sending the rest of the senders the chain's own waves served). Each wait they retransmit
    one segment each; those the port cannot hold (fewer while it is busy: model/busy.py) wait
    twice as long, those whose next round it drops time out again behind them
    (model/serial.py). ``stalled``: packets the port sent between the first and the last of
    their timers being armed (bbr.stalled_spread), which their retransmissions keep apart,
    wave after wave."""
    waits, timeouts, level = 0.0, 0.0, 0
    room, busy, link_rtos = p.held_packets, IDLE, segments * p.packet_time / rto
    sent: list[tuple[float, float]] = []  # (start, end) of the link's busy spells
    while waiting > 1e-3 and level < MAX_LEVELS:
        waits += backoff(p, level) * (1 - math.exp(-waiting))
        timeouts += waiting
        cap = retransmit_capacity(p, c.dispersion, level, first) + stalled
        got = served(waiting, cap, held(p), drifted=level > 0)
        before = busy
        got, busy = busy_wave(p, first, level, got, link_rtos, busy)
        if busy != before:  # a wave into the idle port: the link sends its senders' rest
            sent.append((busy[0] - busy[1] * link_rtos, busy[0]))
        waiting -= got
        if segments > 1:
            waiting += c.rejoin * rejoined(p, got, room, level, first)
        level += 1
    # The spells count from the first wave, the waits from the loss, an RTO before it.
    covered = sum(max(0.0, min(end + 1, waits) - (start + 1)) for start, end in sent)
    return waits, timeouts, covered
