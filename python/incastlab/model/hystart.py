"""Where Linux CUBIC's HyStart ends slow start (Ha and Rhee, "Taming the elephants: New TCP
slow start", Computer Networks 2011, as ``tcp_cubic.c`` runs it): once cwnd is at least 16,
at the first ACK of a round whose ACK train (from the round's first ACK) has lasted longer
than half the minimum RTT. ssthresh is set to cwnd there, with no loss; CUBIC, which has no
last maximum yet, then grows cwnd by at most a twentieth a round trip (``cnt`` capped at 20)
until the first loss.

A sender's ACKs in a round come at the spacing its segments left the port with. In a block's
first round the senders' initial windows, sent together, interleave at the port: a sender's
ACKs come a packet time per sender apart. Later rounds are released by each sender's own ACKs
and overlap less: in the simulator about 0.8 of the senders' packet times, never more than 8
(a grid of 102 runs, linux CUBIC with a buffer that never overflows, 1-64 senders, IW 1-10,
pipes of 10-300 packets, 1-100 Gbps, one 1-3 MB response each: the rule's exit window is
within 1.3x of the simulator's in 65 and within 1.5x in 74; a round early or late doubles it).
Some of them (10 Gbps):

- 1 sender, pipe 300 packets, IW 2: slow start 2 ... 256, then 413 (the rule: 256 + 150);
- 2 senders, pipe 100, IW 2: 32, then 60-63 (32 + 50 / 1.6 = 63);
- 4 senders, pipe 300, IW 10: 80, then 122 (80 + 150 / 3.2 = 127);
- 8-32 senders, pipe 100, IW 2: 16, then 24 (16 + 50 / 6.4 ... 16 + 50 / 8 = 22-24);
- and where it misses: with IW 1 the senders' later rounds overlap less than the rule says
  (4-64 senders, pipe 100-300: 59-200 against 22-111), and at a round's edge it ends slow
  start a round early or late (2 senders, pipe 300, IW 10: 158-166 against 254).

So where the pipe is much larger than a round's burst, slow start ends far short of filling
it, and the rest of a large response goes at the exit window, a round trip at a time: 2 x 130 KB
at 1.35 Gbps, 278 us (a pipe of 30 packets, 49 of buffer): both senders end slow start at 26
segments, the port's queue peaks at 46 packets and nothing is lost, where the windows of 47 the
model carried without HyStart overflowed it every block.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from incastlab.model.burst import Path

#: cwnd below which HyStart does not look (``hystart_low_window``).
LOW_WINDOW = 16.0
#: cwnd growth a round trip after HyStart's exit, before any loss (CUBIC's ``cnt`` <= 20).
FOUND_GROWTH = 1.05
#: After the first round, a sender's ACKs are spaced by this share of the senders' packet
#: times, and by no more than MAX_SPREAD of them (fitted to the simulator's grid).
SPREAD = 0.8
MAX_SPREAD = 8.0


def ack_spacing(p: Path, senders: float, first: bool) -> float:
    """Seconds between one sender's ACKs in a slow-start round: in the ``first`` round the
    senders' bursts, sent together, interleave at the port (``senders`` packet times); later
    rounds' bursts are released by each sender's own ACKs and overlap less (about 0.8 of the
    senders, at most 8: the simulator's grid, see the module's note)."""
    n = max(1.0, senders)
    return (n if first else min(max(1.0, SPREAD * n), MAX_SPREAD)) * p.packet_time


def exit_window(p: Path, senders: float, window: float, segments: float) -> float:
    """The window HyStart ends slow start at for ``senders`` that start a response of
    ``segments`` from ``window`` (``math.inf``: it does not, within the response, or the
    sender runs no HyStart)."""
    if not p.hystart:
        return math.inf
    threshold = p.rtt / 2  # half the minimum RTT: unpaced, Linux's ack_delay does not apply
    w, sent, first = max(1.0, window), 0.0, True
    while sent + w < segments:
        # The round's j-th segment acknowledged: cwnd w + j, the train j spacings long; the
        # test needs cwnd at 16 before the round's last ACK starts the next round.
        j = max(threshold / ack_spacing(p, senders, first), LOW_WINDOW - w)
        if j < w:
            return w + j
        sent += w
        w, first = 2 * w, False
    return math.inf


def after_exit(w: float) -> float:
    """A round's window from the last one's after HyStart's exit, before any loss."""
    return w * FOUND_GROWTH


def next_round(w: float, found: float) -> float:
    """A round's window from the last one's: slow start's doubling up to ``found``, where
    HyStart ended it (``math.inf``: it has not), :func:`after_exit` from there."""
    return min(2 * w, found) if w < found else after_exit(w)


def grown(window: float, found: float, segments: float) -> float:
    """The window a sender ends a lossless response of ``segments`` with, from ``window``:
    slow start up to ``found``, then :func:`after_exit` a round."""
    w, left = max(1.0, window), float(segments)
    while left > 1e-9:
        left -= min(w, left)
        w = next_round(w, found)
    return w
