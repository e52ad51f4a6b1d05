"""The scenario a capture shows: each value with the range the evidence allows, how sure it
is, and which evidence gave it.

What a capture taken at the receiver shows directly: the flows into it (the senders), the bytes
of each response (per block when the client reads in rounds), the ingress rate (the link, when
the fan-in fills it), the delay from a request to its first answer (the RTT) and the silences
before retransmissions no duplicate ACK triggered (the RTO). What it cannot show directly is the
switch buffer: the drops happen upstream of the capture. That one is fitted by simulation
(:mod:`incastlab.doctor.replica`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from incastlab.doctor.evidence import Evidence
from incastlab.trace import TraceReport

#: Link rates Ethernet ports come in, bits per second.
STANDARD_RATES = tuple(
    int(x * 1e6) for x in (10, 100, 1_000, 2_500, 5_000, 10_000, 25_000, 40_000, 50_000,
                           100_000, 200_000, 400_000, 800_000)
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


def rto_min_from_probe(probe: TraceReport) -> int | None:
    """RTOmin in picoseconds from the probe reading's timeout silences, snapped to a common
    value within 10%; None when the capture has no timeout."""
    r = probe.report
    if not r["rtos"]:
        return None
    # The analyzer's estimate is the lower quartile of the silences before timeout
    # retransmissions (backed-off silences are longer); a sender's RTO is RTOmin plus about
    # one smoothed RTT, small beside any RTOmin worth diagnosing.
    est = int(r["rto_estimate_ns"]) * PS_PER_NS
    near = min(COMMON_RTO_MIN_PS, key=lambda c: abs(c - est))
    return near if abs(near - est) <= 0.1 * near else est


def _responses(t: TraceReport) -> tuple[str, list[int], int]:
    """(workload kind, bytes per response, rounds): a synchronized read when flows answered in
    two or more rounds (blocks), else a one-shot fan-in of one response per flow."""
    blocks = [b for b in t.report["blocks"] if b["flows"]]
    if len(blocks) >= 2:
        return "sync_read", [b["bytes"] // b["flows"] for b in blocks], len(blocks)
    return "incast", [f["unique_bytes"] for f in t.report["flows"]], 1


def infer(ev: Evidence) -> dict[str, Estimate]:
    """Every value the capture shows, by scenario concept."""
    t = ev.final.report
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
    kind, sizes, rounds = _responses(ev.final)
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
    out["link"] = _link(ev.final)
    out["rtt"] = _rtt(ev.final, out["link"].value)
    out["rto_min"] = _rto_min(ev)
    return out


def _link(t: TraceReport) -> Estimate:
    """The receiver's link from the peak ingress over 1 ms (wire bytes, so a saturated link
    shows ~98% of its rate): the smallest standard rate at or above that peak."""
    rows = {r["window_ns"]: r for r in t.report["rates"]}
    peak = float(rows.get(1_000_000, max(rows.values(), key=lambda r: r["window_ns"]))["peak_bps"])
    rate = next((r for r in STANDARD_RATES if r >= peak * 0.999), STANDARD_RATES[-1])
    full = peak >= 0.9 * rate
    return Estimate(
        "link",
        rate,
        peak if not full else rate,
        rate if full else None,
        "high" if full else "low",
        f"peak ingress over 1 ms {peak / 1e6:,.1f} Mbps"
        + ("" if full else " (the fan-in never filled a standard rate: it may be faster)"),
    )


def _rtt(t: TraceReport, link_bps: int) -> Estimate:
    """Base RTT from the shortest delay between a block's request and its first answer, less
    the two full-frame serializations (sender's NIC, switch port) the first answer waits for."""
    answers = [b["first_answer_ns"] for b in t.report["blocks"] if b["first_answer_ns"]]
    if not answers:
        return Estimate(
            "rtt", 100_000_000, None, None, "assumed", "no request seen before an answer"
        )
    first_ps = min(answers) * PS_PER_NS
    ser_ps = FULL_FRAME_WIRE_BYTES * 8 * 10**12 // link_bps
    base = max(first_ps - 2 * ser_ps, first_ps // 2)
    return Estimate(
        "rtt",
        base,
        base,
        first_ps,
        "medium",
        f"shortest request-to-first-answer delay {first_ps / 1e6:,.1f} us over "
        f"{len(answers)} blocks, less two frames at the link rate ({2 * ser_ps / 1e6:,.1f} us)",
    )


def _rto_min(ev: Evidence) -> Estimate:
    r = ev.probe.report
    snapped = rto_min_from_probe(ev.probe)
    if snapped is None:
        return Estimate(
            "rto_min",
            200_000_000_000,
            None,
            None,
            "assumed",
            "no timeout in the capture; Linux's default taken",
        )
    raw = int(r["rto_estimate_ns"]) * PS_PER_NS
    return Estimate(
        "rto_min",
        snapped,
        min(snapped, raw),
        max(snapped, raw),
        "high" if r["rtos"] >= 3 else "medium",
        f"{r['rtos']} timeouts; lower quartile of their silences {raw / 1e9:,.2f} ms",
    )
