"""ECN in a capture: whether the senders' data is ECN-capable, how much of it a switch
marked, what the receiver's echoes say of the congestion control, and the switch's marking
threshold, fitted by simulation.

The marks are in the capture itself (the IP header's ECN field on every data packet, the ECE
flag on the receiver's ACKs), so unlike the buffer the use of ECN needs no fit. Which response
the senders make is told by the receiver's echo: a DCTCP receiver echoes each mark once, on
the ACK that covers it (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1), so
it sends fewer echoes than marks where it acknowledges every other segment; an RFC 3168
receiver repeats its echo on every ACK until the sender's CWR arrives (Ramakrishnan, Floyd
and Black, "The Addition of Explicit Congestion Notification (ECN) to IP", RFC 3168, 2001),
so a lone mark draws a round trip's worth of echoes.
"""

from __future__ import annotations

import math

from incastlab.doctor.infer import Estimate
from incastlab.doctor.search import log_crossing
from incastlab.trace import TraceOptions, TraceReport

#: Share of the data packets that must be ECN-capable for the senders to count as using ECN
#: (a few ECT packets among many are another host's).
MIN_ECT_SHARE = 0.5
#: Echoes per mark below which the receiver echoes each mark once (DCTCP), at and above which
#: it repeats them until CWR (RFC 3168).
DCTCP_ECHOES_PER_MARK = 0.9
#: The marking thresholds the fit searches between, bytes (a packet to the largest buffers
#: of a shallow-buffered switch port), and its bisection steps on a log scale.
THRESHOLD_RANGE = (1_500, 4_000_000)
THRESHOLD_STEPS = 9
#: The port the threshold is fitted behind: deep enough that marks, not drops, pace the
#: senders (a DCTCP port's buffer is far above its threshold).
FIT_BUFFER = 8_000_000


def marks(t: TraceReport) -> tuple[int, int, int, int, int]:
    """(data packets, ECN-capable, marked CE, the receiver's echoes, CWRs) into the receiver."""
    flows = t.report["flows"]
    return (
        sum(int(f["data_packets"]) for f in flows),
        sum(int(f["ect"]) for f in flows),
        sum(int(f["ce"]) for f in flows),
        sum(int(f["echoes"]) for f in flows),
        sum(int(f["cwr"]) for f in flows),
    )


def marked_share(t: TraceReport) -> float:
    """The share of the ECN-capable data packets a switch marked CE."""
    _, ect, ce, _, _ = marks(t)
    return ce / ect if ect else 0.0


def ecn_estimates(t: TraceReport) -> dict[str, Estimate]:
    """``ecn`` (and ``congestion_control``, DCTCP, where the echoes say so) when the senders'
    data is ECN-capable; nothing otherwise."""
    data, ect, ce, echoes, cwr = marks(t)
    if not data or ect < MIN_ECT_SHARE * data:
        return {}
    seen = (
        f"{ect:,} of {data:,} data packets ECN-capable, {ce:,} ({ce / ect:.1%}) marked CE, "
        f"{echoes:,} echoes (ECE) from the receiver, {cwr:,} CWR from the senders"
    )
    out = {"ecn": Estimate("ecn", True, None, None, "high", seen)}
    if ce:
        per_mark = echoes / ce
        if per_mark < DCTCP_ECHOES_PER_MARK:
            out["congestion_control"] = Estimate(
                "congestion_control",
                "dctcp",
                None,
                None,
                "medium",
                f"{per_mark:.2f} echoes per mark: the receiver echoes each mark once, as "
                "DCTCP's does (an RFC 3168 receiver repeats its echo until CWR)",
            )
    return out


def fit_threshold(
    est: dict[str, Estimate], capture: TraceReport, profile: str, seed: int
) -> Estimate:
    """The marking threshold at which the replica (``est`` behind a deep port) marks the
    capture's share of packets, by bisection on a log scale (a lower threshold marks more).
    A bound where even the ends of :data:`THRESHOLD_RANGE` miss. Under DCTCP the share falls
    as the threshold rises (the senders hold the queue about it); under a classic response
    (halve once per window on an echo) it need not: 8 x 256 KB at 1 Gbps marked 13.7% at 8
    KB and 16.3% at 30 KB in the simulator, so the fit there is only a rough reading
    (confidence low)."""
    from incastlab.doctor.replica import PROBE_RTO_MIN_PS, captured, scenario_dict

    target = marked_share(capture)
    cc = est.get("congestion_control")
    dctcp = cc is not None and cc.value == "dctcp"

    def share(k: int) -> float | None:
        marking = Estimate("ecn_threshold", k, k, k, "", "")
        sc = scenario_dict(
            est | {"ecn_threshold": marking}, FIT_BUFFER, PROBE_RTO_MIN_PS, profile, seed
        )
        read = captured(sc, [TraceOptions(None, PROBE_RTO_MIN_PS, 100_000_000)])
        return None if read is None else marked_share(read[0])

    lo, hi = THRESHOLD_RANGE
    if target == 0:
        return Estimate(
            "ecn_threshold",
            None,
            None,
            None,
            "not shown",
            "no packet marked CE: the threshold is above any queue the capture's fan-in built "
            "(the replica marks none)",
        )
    at_lo, at_hi = share(lo), share(hi)
    if at_lo is None or at_hi is None:
        return Estimate(
            "ecn_threshold", None, None, None, "not shown", "the replica did not finish"
        )
    measured = f"the capture's {target:.1%} of packets marked"
    if at_hi >= target:
        return Estimate(
            "ecn_threshold",
            hi,
            hi,
            None,
            "bound",
            f"fitted by simulation: {measured}; even at {hi:,} B the replica marks {at_hi:.1%}",
        )
    if at_lo <= target:
        return Estimate(
            "ecn_threshold",
            lo,
            0,
            lo,
            "bound",
            f"fitted by simulation: {measured}; even at {lo:,} B the replica marks {at_lo:.1%}",
        )
    # A replica that does not finish reads as marking too much: deeper thresholds are tried.
    lo, hi = log_crossing(lambda k: (m := share(k)) is None or m > target, lo, hi, THRESHOLD_STEPS)
    value = int(math.sqrt(lo * hi))
    return Estimate(
        "ecn_threshold",
        value,
        lo,
        hi,
        "medium" if dctcp else "low",
        f"fitted by simulation: the replica marks {measured} between {lo:,} and {hi:,} B "
        f"(a {FIT_BUFFER:,} B port)"
        + (
            ""
            if dctcp
            else "; under a classic ECN response marks need not fall as the "
            "threshold rises, so this is a rough reading"
        ),
    )
