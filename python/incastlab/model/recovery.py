"""How a sender that lost part of a round recovers: the segments of the next round the port
takes for it (:func:`next_round_share`), whose duplicate ACKs decide between fast retransmit
and a timeout, and the chance that it times out (:func:`timeout_share`; under RACK-TLP that it
waits for a timer instead).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from incastlab.model import bbr
from incastlab.model.limited import stalled
from incastlab.model.port import round_capacity
from incastlab.model.probe import PROBE_TICKS, probe_seconds

if TYPE_CHECKING:
    from incastlab.model.burst import Path
    from incastlab.model.fitted import Constants


def next_round_share(p: Path, senders: float, delivered: float) -> float:
    """Segments per sender the port takes of those the ACKs of ``delivered`` release (two
    each in slow start): the next round's capacity shared by the ``senders``."""
    return min(2 * delivered, round_capacity(p, senders, 2 * delivered, False) / senders)


def timeout_share(
    p: Path,
    c: Constants,
    senders: float,
    delivered: float,
    tail: bool,
    first: bool,
    window: float = math.inf,
) -> float:
    """Chance that a sender which lost part (not all) of a round's ``window`` times out
    (under RACK-TLP: waits for a timer instead), having got ``delivered`` segments of it
    through."""
    if tail:  # nothing left to send after the lost tail (RACK-TLP: until the probe)
        return 1.0
    # Of the new segments the port takes `after` per sender, more for some and fewer for
    # others (Poisson). Those with fewer than dupthresh through get too few duplicate ACKs
    # for fast retransmit and wait for the RTO. Where `after` is large, none do: 13 x 630 KB
    # into 287 KB at 2.8 Gbps (Reno), 460-570 drops and no RTO.
    after = next_round_share(p, senders, delivered)
    few = sum(math.exp(-after) * after**k / math.factorial(k) for k in range(p.dupthresh))
    if not p.rack_tlp and not p.loss_blind and not p.holds_queue:
        # Each SACK releases a new segment (limited transmit): one segment through can be
        # enough (model/limited.py). BBR's fitted rule stays as it was, and DCTCP's where its
        # marks keep the port short of full (burst.Path.holds_queue).
        few = stalled(2 * delivered, after, p.dupthresh)
    if p.rack_tlp:
        # One SACKed segment marks the hole lost after RACK's reorder timer (RTT/4 and two
        # ticks: out of recovery, with fewer SACKed than dupthresh, Linux keeps a reordering
        # window though it has seen no reordering); with none through, the probe.
        none = math.exp(-after)
        reorder = p.rtt / 4 + p.timer_tick * PROBE_TICKS
        few = none + (few - none) * min(1.0, reorder / max(probe_seconds(p), 1e-12))
    if not p.loss_blind:
        return few
    # A sender that keeps its window through the loss (BBR) keeps the queue full, and its
    # retransmission is lost to it: Padhye et al.'s min(1, 3/w) for a loss to be a timeout,
    # scaled by tail_timeout. Senders that cut their windows let the queue drain first, and
    # so does the pipe where it holds the windows kept (bbr.kept_full).
    full = bbr.kept_full(p, senders, window)
    lost = full * min(1.0, c.tail_timeout * p.dupthresh / max(after, 1e-9))
    return few + (1 - few) * lost
