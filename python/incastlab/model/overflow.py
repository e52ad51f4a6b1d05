"""Which overflow of a round costs an RTO (the third step of :mod:`incastlab.model.burst`).

A round of ``f`` segments from each of ``n`` senders overflows the port: drop-tail keeps what the
port holds (:func:`incastlab.model.port.round_capacity`), whole bursts first where the requests
stagger them (:mod:`incastlab.model.stagger`). A sender none of whose round got through, or one
that cannot repair what it lost by fast retransmit (:mod:`incastlab.model.recovery`), waits for
the RTO; under RACK-TLP it waits for the probe timer instead, and times out where that probe is
lost too (:mod:`incastlab.model.probe`).
"""

from __future__ import annotations

import math

from incastlab.model.fitted import Constants
from incastlab.model.path import Path
from incastlab.model.port import round_capacity
from incastlab.model.probe import lone_share, probe_losses, still_full
from incastlab.model.recover import recovery_timeouts
from incastlab.model.recovery import next_round_share, timeout_share
from incastlab.model.stagger import split


def overflow(
    p: Path,
    c: Constants,
    n: float,
    f: float,
    first: bool,
    tail: bool,
    last: bool,
    paced: float,
    rest: float = 0.0,
    room: float = math.inf,
) -> tuple[float, float, float, float]:
    """Expected n that time out when ``n`` send a round of ``f`` each (the response's ``last``,
    ``rest`` segments each after it), and (RACK-TLP) those that wait for the probe timer instead,
    of these those with only their last segment out, and the segments each of these waiting lost
    (model/probe.py); ``paced``: a sender's chance of a timeout in a round BBR paced, or -1;
    ``room``: the senders the port holds a repairing window for (burst._repairing)."""
    if n <= 0 or f <= 0:
        return 0.0, 0.0, 0.0, 0.0
    burst = n * f
    cap = round_capacity(p, n, f, first)
    if burst <= cap:
        return 0.0, 0.0, 0.0, 0.0
    # Drop-tail keeps the first `cap` packets: whole bursts first where requests stagger them.
    whole, partial, lost, sharing, each = split(p, n, f, cap, first)  # model/stagger.py
    hit = min(partial, max(0.0, lost))
    share = timeout_share(p, c, sharing, each, tail, first, f) if paced < 0 else paced
    if p.rack_tlp:
        # RACK finds lost retransmissions by time and the tail loss probe a lost tail: what
        # would be an RTO waits for their timers instead, but the n with nothing through
        # after their loss probe together, and those whose probe the port drops time out.
        alone, dropped = (
            math.exp(-next_round_share(p, sharing, each)),
            0.0 if first else 1 - cap / burst,
        )
        lone = hit * share * lone_share(lost, partial, dropped) if last else 0.0
        lost_each = max(1.0, lost / partial)  # segments each sender that got part through lost
        probes, resend = hit * share + whole, whole * f + hit * share * lost_each
        resend /= max(probes, 1e-12)
        full = still_full(p, n - whole, rest, f)  # the others' rest outlasts the probe timer
        probing = hit * (1.0 if tail else alone)
        lost_probes = probe_losses(p, whole, probing, full)
        # The others repair together, and the port can drop a whole flight (model/recover.py).
        probed_each = (whole * f + probing * lost_each) / max(whole + probing, 1e-12)
        probed = whole + probing - lost_probes
        sacked = hit - probing
        after = recovery_timeouts(p, f, probed, probed_each, sacked, lost_each, lost_probes, room)
        return lost_probes + after, probes, lone, resend
    return whole + hit * share, 0.0, 0.0, 0.0
