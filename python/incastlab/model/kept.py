"""Senders that carry a whole response's window into the next block and lose its tail
(:mod:`incastlab.model.burst`, where windows persist across blocks).

A block whose slow-start round overflows the port cuts the windows of the senders that lost
segments of it, but those whose part of the round came before the port filled
(:mod:`incastlab.model.order`) go on in slow start and carry the window they grew, often the
whole response, into the next block (:func:`incastlab.model.carry.carried_after_loss` carries
the mean of the two). In that block they send their whole response in the request's round, the
longest bursts of it: where the round overflows the port, their ends arrive after it filled and
are dropped, and nothing they send after the hole shows it. Under RACK-TLP each waits for the
tail loss probe (or, where its short last segment slips into the bytes the full port has left,
RACK's reorder timer: a window of a quarter of the RTT, two ticks more, fired on the wheel's
next tick); classic TCP waits for the RTO.

The simulator at 8 x 579 KB (400 segments) into 704 KB (464 frames) at 95.5 Gbps, 416 us
(linux CUBIC, IW 3, host jitter 1 us, windows carried): 2-3 of the 8 senders go through the
first block's overflow untouched; in the second block those send their 400 segments at once,
one loses segments 65-399 but its last (841 bytes, in the port's leftover room), another
everything after its 71st, and the block takes 12-19 ms on a 2.2 ms transfer, waiting for the
reorder timer and the probe (no RTO). The model, from the mean carried window (128 segments,
272 left after the first round): no wait, 1.9 ms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from incastlab.model.port import round_capacity
from incastlab.model.stagger import first_round

if TYPE_CHECKING:
    from incastlab.model.path import Path


def cut_tails(p: Path, window: float, share: float, kept: float) -> tuple[float, float]:
    """Expected senders that send their whole response in the block's first round, from the
    window ``kept`` that a ``share`` of them carried out of the last block (the mean over all:
    ``window``), and lose its end there, and the segments each loses."""
    n, seg = float(p.senders), float(p.segments)
    if share <= 0 or kept < seg or p.loss_blind:
        return 0.0, 0.0
    # The others' window: what the mean leaves once the kept ones' is taken out.
    others = max(1.0, (window - share * kept) / (1 - share)) if share < 1 else 0.0
    total = n * (1 - share) * min(others, seg) + n * share * seg
    cap = round_capacity(p, n, seg, True)
    if total <= cap:
        return 0.0, 0.0
    # The requests stagger the bursts: the first senders' whole bursts get through
    # (stagger.py); interleaved, every burst's end comes after the port filled.
    got = first_round(p, n, total / n, cap)
    through = 0.0 if got is None else got[0] / n
    lost = seg * min(1.0, (total - cap) / total)
    return n * share * (1 - through), max(1.0, lost)
