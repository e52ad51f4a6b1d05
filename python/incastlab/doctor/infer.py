"""The scenario a capture shows: each value with the range the evidence allows, how sure it
is, and which evidence gave it.

What a capture taken at the receiver shows directly: the flows into it (the senders), the bytes
of each response (per block when the client reads in rounds), the ingress rate (the link, when
the fan-in fills it) and the delay from a request to its first answer (the RTT). What it cannot
show directly are the switch buffer (the drops happen upstream of the capture) and RTOmin (at
a receiver, a resend after a timeout looks like one after a flow's ordinary pause behind 15
others, and today's Linux probes a lost tail before its timer fires): both are fitted by
simulation (:mod:`incastlab.doctor.replica`).
"""

from __future__ import annotations

import collections
import math
import statistics
from dataclasses import dataclass
from typing import Any

from incastlab.trace import TraceReport

#: Link rates Ethernet ports come in, bits per second.
STANDARD_RATES = tuple(
    int(x * 1e6)
    for x in (
        10,
        100,
        1_000,
        2_500,
        5_000,
        10_000,
        25_000,
        40_000,
        50_000,
        100_000,
        200_000,
        400_000,
        800_000,
    )
)
#: RTOmin values operating systems and operators use (Linux 200 ms, data-centre tunings
#: down to 1 ms), picoseconds; an estimate within 10% of one is taken as that one.
COMMON_RTO_MIN_PS = tuple(
    int(ms * 1e9) for ms in (1, 2, 4, 5, 10, 20, 40, 50, 100, 200, 250, 300, 500, 1000)
)
#: A frame on the wire: MSS payload plus Ethernet, IP and TCP headers (1448 + 14 + 20 + 32)
#: and preamble, start delimiter and inter-frame gap (20 B), for serialization times.
FULL_FRAME_WIRE_BYTES = 1538
PS_PER_NS = 1000


def frame_time_ps(link_bps: int) -> int:
    """A full frame's serialization at ``link_bps``, picoseconds."""
    return FULL_FRAME_WIRE_BYTES * 8 * 10**12 // link_bps


@dataclass(frozen=True)
class Estimate:
    """One inferred value: ``value`` in base units (bytes, bit/s, picoseconds, a count or a
    name), the range ``lo``..``hi`` the evidence allows (``hi`` None: unbounded above), how
    sure (``exact``, ``high``, ``medium``, ``low``, ``assumed``) and from what."""

    name: str
    value: Any
    lo: float | None
    hi: float | None
    confidence: str
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "lo": self.lo,
            "hi": self.hi,
            "confidence": self.confidence,
            "evidence": self.evidence,
        }


def _responses(t: TraceReport) -> tuple[str, list[int], int]:
    """(workload kind, bytes per response, rounds): a synchronized read when flows answered in
    two or more rounds (blocks), else a one-shot fan-in of one response per flow."""
    blocks = [b for b in t.report["blocks"] if b["flows"]]
    if len(blocks) >= 2:
        return "sync_read", [b["bytes"] // b["flows"] for b in blocks], len(blocks)
    return "incast", [f["unique_bytes"] for f in t.report["flows"]], 1


def infer(trace: TraceReport) -> dict[str, Estimate]:
    """Every value the capture shows directly, by scenario concept (RTOmin and the buffer
    are fitted by simulation: :mod:`incastlab.doctor.replica`)."""
    t = trace.report
    flows = t["flows"]
    out: dict[str, Estimate] = {}
    senders = len({f["src"] for f in flows})
    per_block = max((b["flows"] for b in t["blocks"]), default=len(flows))
    n = senders if senders > 1 else per_block
    out["senders"] = Estimate(
        "senders",
        n,
        n,
        n,
        "exact" if senders == per_block or senders > 1 else "high",
        f"{len(flows)} flows into {t['receiver']} from {senders} addresses, at most "
        f"{per_block} in one block",
    )
    kind, sizes, rounds = _responses(trace)
    size = int(statistics.median(sizes))
    spread = (min(sizes), max(sizes))
    out["workload"] = Estimate(
        "workload",
        kind,
        None,
        None,
        "high",
        f"{rounds} rounds of requests answered by the same flows"
        if kind == "sync_read"
        else "one response per flow, no second round",
    )
    out["response"] = Estimate(
        "response",
        size,
        spread[0],
        spread[1],
        "high" if spread[1] <= 1.1 * max(1, spread[0]) else "medium",
        f"median new bytes per flow per {'block' if kind == 'sync_read' else 'flow'} over "
        f"{len(sizes)}; range {spread[0]:,}..{spread[1]:,} B",
    )
    out["rounds"] = Estimate("rounds", rounds, rounds, rounds, "exact", "blocks read")
    out["link"] = _link(trace)
    out["rtt"] = _rtt(trace, out["link"].value)
    out["initial_window"] = _initial_window(trace)
    return out


def nearest_rate(peak_bps: float) -> tuple[int, bool]:
    """The standard Ethernet rate nearest ``peak_bps`` on a log scale, and whether the peak
    is that rate's (within 15%: a saturated link's peak counts headers but not the preamble
    and gap, and back-to-back frames from a deeper queue upstream can crowd one window)."""
    rate = min(STANDARD_RATES, key=lambda r: abs(math.log(max(peak_bps, 1.0) / r)))
    return rate, 0.85 * rate <= peak_bps <= 1.15 * rate


def shown(name: str, value: Any) -> str:
    """An estimate's value as people read it, in the unit of the concept it names."""
    from incastlab.units import format_rate, format_size, format_time

    if value is None:
        return "-"
    if name == "link":
        return format_rate(value)
    if name in ("response", "buffer", "ecn_threshold"):
        return format_size(value)
    if name in ("rtt", "rto_min", "request_stagger", "jitter", "timer_tick"):
        return format_time(value)
    return str(value)


def _link(t: TraceReport) -> Estimate:
    """The receiver's link from the peak ingress over 1 ms: the standard rate nearest to it
    on a log scale. A saturated link shows within ~15% of its rate (wire bytes count headers
    but not the preamble and gap; frames arriving back to back from a deeper queue upstream
    can crowd one window); a fan-in that never filled the link shows less."""
    rows = {r["window_ns"]: r for r in t.report["rates"]}
    peak = float(rows.get(1_000_000, max(rows.values(), key=lambda r: r["window_ns"]))["peak_bps"])
    rate, full = nearest_rate(peak)
    if not full and peak < rate:
        rate = next((r for r in STANDARD_RATES if r >= peak), STANDARD_RATES[-1])
    return Estimate(
        "link",
        rate,
        rate if full else peak,
        rate if full else None,
        "high" if full else "low",
        f"peak ingress over 1 ms {peak / 1e6:,.1f} Mbps"
        + ("" if full else " (the fan-in never filled a standard rate: it may be faster)"),
    )


def _rtt(t: TraceReport, link_bps: int) -> Estimate:
    """Base RTT: the shortest handshake where the capture has one (SYN to SYN-ACK: no server
    application and no full frame in it), else the shortest delay between a block's request
    and its first answer, less the two full-frame serializations (sender's NIC, switch port)
    the first answer waits for; that delay bounds it from above either way."""
    answers = [b["first_answer_ns"] for b in t.report["blocks"] if b["first_answer_ns"]]
    handshake_ps = int(t.report["handshake_ns"]) * PS_PER_NS
    if not answers and not handshake_ps:
        return Estimate(
            "rtt", 100_000_000, None, None, "assumed", "no request or handshake in the capture"
        )
    base = hi = None
    evidence = []
    if answers:
        first_ps = min(answers) * PS_PER_NS
        ser_ps = frame_time_ps(link_bps)
        base, hi = max(first_ps - 2 * ser_ps, first_ps // 4), first_ps
        evidence.append(
            f"shortest request-to-first-answer delay {first_ps / 1e6:,.1f} us over "
            f"{len(answers)} blocks, less two frames at the link rate "
            f"({2 * ser_ps / 1e6:,.1f} us)"
        )
    if handshake_ps:
        base, hi = handshake_ps, max(hi or 0, handshake_ps)
        evidence.insert(0, f"shortest handshake (SYN to SYN-ACK) {handshake_ps / 1e6:,.1f} us")
    assert base is not None and hi is not None
    return Estimate("rtt", base, base, hi, "medium", "; ".join(evidence))


def _initial_window(t: TraceReport) -> Estimate:
    """The senders' initial window from their connections' first flights (``incast pcap``'s
    ``first_flight``: the packets that arrived before the receiver's first ACK of the
    response could have drawn an answer), where a flight was seen whole: it ended a clear
    pause before that, and the response went on after it. Behind a slow NIC or a shared
    port the flights stretch past a round trip and show only a lower bound; the replica
    then runs its profile's window."""
    flows = t.report["flows"]
    whole = [int(f["first_flight"]) for f in flows if f["first_flight_whole"]]
    seen = [int(f["first_flight"]) for f in flows if f["first_flight"]]
    counts = collections.Counter(whole)
    value, agree = max(counts.items(), key=lambda kv: (kv[1], kv[0]), default=(0, 0))
    if agree >= 2:
        # Two flows at least, and most of those seen whole, say the same.
        sure = agree >= 0.75 * len(whole)
        return Estimate(
            "initial_window",
            value,
            min(whole),
            max(whole),
            "high" if sure else "low",
            f"{len(whole)} of {len(flows)} connections' first flights seen whole, {agree} of "
            f"them {value} packets, before the first ACK could draw an answer",
        )
    if seen:
        return Estimate(
            "initial_window",
            None,
            max(seen),
            None,
            "bound",
            (
                f"no first flight of {len(flows)} seen whole"
                if not whole
                else f"{len(whole)} first flights of {len(flows)} seen whole, not two alike"
            )
            + f" (a flight took longer than a round trip, or lost its tail): at least "
            f"{max(seen)} packets; the replica runs its profile's window",
        )
    return Estimate(
        "initial_window",
        None,
        None,
        None,
        "not shown",
        "no connection's first flight in the capture (it began before, or no ACK came): "
        "the replica runs its profile's window",
    )
