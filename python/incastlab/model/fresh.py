"""Fresh waves (:func:`incastlab.model.burst._block`): senders whose retransmissions a wave got
through time out again, one RTO later, not a backed-off one.

A sender whose retransmission is acknowledged has its backoff reset and goes on in slow start,
the retransmission's ACK releasing two segments. Where the senders a wave served come back
together and their doubling rounds keep the port full, those rounds overflow it as a block's
rounds do: a sender that loses a segment of a window too small for fast retransmit times out
once more, on a fresh timer, so it retransmits one RTO later and the port serves it as it
served the wave. The block waits wave after wave, an RTO each. The count that times out again
is the block's own overflow rule (:func:`incastlab.model.burst._burst`) for the served senders,
from the two segments their retransmission's ACK releases.

They come back spread over the wave they were served from (each timer armed at its own last
ACK), and their slow starts fill the port only where their segments keep the link busy over
that spread and their own slow-start rounds: at a load under 1 the queue rarely reaches the
buffer. The model takes the chance that it does as load^buffer (the full-queue tail of a
queue of that many packets; a simplification chosen, not fitted: Kleinrock, "Queueing
Systems, Volume 1: Theory", Wiley, 1975), so a wave that does not saturate the port leaves
nobody to time out again.

The simulator at 361 x 183 KB into 552 packets (50 of pipe) at 22.9 Gbps, RTOmin 133 ms
(classic CUBIC, IW 2, windows kept while idle), a later block: 149 senders lose their whole
first window and 52 more time out after it; at 1 RTO 196 senders come back (21,700 packets
in 11.7 ms, the link full) and 29 of them time out again, at 2 RTOs those 29 finish, at 3 RTOs
six whose retransmission was lost: 236-244 timeouts a block, 898 runs of one timeout and 27 of
two, blocks of 3.06 RTOs (the model one wave: 1.12 RTOs). At 70 x 95 KB into 50 packets (26 of
pipe) at 6.5 Gbps, RTOmin 18.5 ms (classic Reno): waves at 0, 1, 2 and 3 RTOs finishing about
30, 30, 6 and 3 senders, blocks of 3.1 RTOs (the model 1.35 before, 2.1 after). At 703 x 424
KB into 310 packets (classic CUBIC, IW 4, restarting each block) eight waves an RTO apart
serve about 110 senders each, blocks of 8 RTOs (the model, whose chain there backs off, 3:
not covered here). Where the wave does not fill the link no one times out again: 44 x 13.6 KB
into 28 packets at 10.3 Gbps (classic Reno), 24 senders come back over 0.42 ms with 0.2 ms of
link time and all finish; 471 x 33 KB into 1,281 packets at 12 Gbps, 184 senders over 5 ms
with 4.3 ms of link time, all finish (one seed each).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from incastlab.model.serial import NONE
from incastlab.model.window import slow_start_rounds

if TYPE_CHECKING:
    from incastlab.model.burst import Path

#: Waves followed at most (each an RTO; a wave that fits the port ends them).
MAX_WAVES = 16


def fresh_waves(
    p: Path, served: float, left: float, spread: float, again: Callable[[float], float]
) -> tuple[float, float]:
    """RTOs the block waits beyond the wave that served ``served`` senders with ``left``
    segments each to send, and the timeouts of those waves. Their timers fired over
    ``spread`` seconds (the wave before, as the port served it); ``again(m)`` of ``m``
    senders that go on together time out again, as often as their segments' link time over
    the spread and their own slow-start rounds fills the buffer (load^buffer, the load at
    most 1). Each wave is one RTO, counted as often as it has a sender (an expected count
    ``m`` has one with chance 1 - e^-m)."""
    waits, timeouts, m = 0.0, 0.0, served
    rounds = slow_start_rounds(left, 1.0)
    for _ in range(MAX_WAVES):
        busy = m * left * p.packet_time
        load = min(1.0, busy / max(spread + rounds * p.rtt, 1e-12))
        nxt = again(m) * load ** max(1.0, p.buffer_packets)
        m, spread = min(m, nxt), max(busy, rounds * p.rtt)
        if m < NONE:
            break
        waits += 1 - math.exp(-m)
        timeouts += m
    return waits, timeouts
