"""The replica: the inferred scenario as a file a user can edit and rerun, its buffer fitted by
simulation, and the figures that set it beside the capture.

The switch buffer is the one value a receiver-side capture cannot show (the drops happen
before the capture point), but it decides how many responses lose their tails. It is found by
bisection on a log scale: the buffer at which the replica's timeouts per block equal the
capture's. More buffer never adds timeouts in these workloads, so the bisection converges; its
range is the pair of buffers that bracket the capture's count.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from incastlab.doctor.infer import Estimate
from incastlab.result import Result
from incastlab.trace import TraceReport

#: The buffers the fit searches between, bytes: from a few frames to far more than any
#: shallow-buffered data-centre switch gives one port.
BUFFER_LO, BUFFER_HI = 4_000, 16_000_000
#: Bisection steps on log2(buffer): 12 steps from 4 KB..16 MB narrow it to ~0.3% of a doubling.
FIT_STEPS = 10
PS_PER_S = 10**12


def _rate(bps: int) -> str:
    for unit, k in (("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3)):
        if bps % k == 0:
            return f"{bps // k}{unit}"
    return f"{bps}bps"


def _time(ps: int) -> str:
    for unit, k in (("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps % k == 0:
            return f"{ps // k}{unit}"
    return f"{ps}ps"


def scenario_dict(
    est: dict[str, Estimate], buffer_bytes: int, profile: str, seed: int = 1
) -> dict[str, Any]:
    """The replica as a scenario with unit strings (what ``incast sim FILE`` reads)."""
    workload: dict[str, Any] = {"kind": est["workload"].value}
    if est["workload"].value == "sync_read":
        workload |= {"sru": f"{est['response'].value}B", "blocks": est["rounds"].value}
    else:
        workload |= {"flow_size": f"{est['response'].value}B"}
    rtt_ps = max(1_000_000, round(est["rtt"].value, -6))  # whole microseconds
    return {
        "seed": seed,
        "topology": {
            "senders": est["senders"].value,
            "link": _rate(est["link"].value),
            "rtt": _time(rtt_ps),
            "buffer": f"{buffer_bytes}B",
        },
        "tcp": {"profile": profile, "rto_min": _time(est["rto_min"].value)},
        "workload": workload,
    }


@dataclass(frozen=True)
class Figures:
    """What the capture and the replica are compared on."""

    goodput_bps: float
    block_p50_s: float
    block_p99_s: float
    timeouts_per_block: float
    blocks: int

    def to_json(self) -> dict[str, Any]:
        return {
            "goodput_bps": self.goodput_bps,
            "block_time_p50_s": self.block_p50_s,
            "block_time_p99_s": self.block_p99_s,
            "timeouts_per_block": self.timeouts_per_block,
            "blocks": self.blocks,
        }


def _quantile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def capture_figures(t: TraceReport) -> Figures:
    """The capture's goodput over its span, its blocks' durations and timeouts per block."""
    r = t.report
    times = [b["duration_ns"] / 1e9 for b in r["blocks"] if b["flows"]]
    blocks = max(1, len(times))
    return Figures(
        float(r["goodput_bps"]),
        _quantile(times, 0.5),
        _quantile(times, 0.99),
        r["rtos"] / blocks,
        blocks,
    )


def replica_figures(results: Sequence[Result]) -> Figures:
    """The replica's, pooled over its seeds: mean goodput, block-time quantiles over every
    block of every seed, timeouts per block."""
    times = [t for r in results for t in (r.block_times_s or [r.duration_s])]
    blocks = max(1, len(times))
    return Figures(
        statistics.fmean(r.goodput_bps for r in results),
        _quantile(times, 0.5),
        _quantile(times, 0.99),
        sum(r.timeouts for r in results) / blocks,
        blocks,
    )


#: Runs scenarios (dicts with unit strings), one Result each, in order.
Runner = Callable[[list[dict[str, Any]]], list[Result]]


def fit_buffer(
    est: dict[str, Estimate], target: Figures, profile: str, seeds: Sequence[int], run: Runner
) -> Estimate:
    """The port buffer at which the replica times out as often per block as the capture."""

    def timeouts(buf: int) -> float:
        rs = run([scenario_dict(est, buf, profile, s) for s in seeds])
        return replica_figures(rs).timeouts_per_block

    lo, hi = math.log2(BUFFER_LO), math.log2(BUFFER_HI)
    if timeouts(BUFFER_HI) > target.timeouts_per_block:
        return _buffer_estimate(BUFFER_HI, BUFFER_HI, None, "even the largest buffer tried")
    at_lo = timeouts(BUFFER_LO)
    if at_lo <= target.timeouts_per_block and target.timeouts_per_block > 0:
        return _buffer_estimate(BUFFER_LO, None, BUFFER_LO, "even the smallest buffer tried")
    for _ in range(FIT_STEPS):
        mid = (lo + hi) / 2
        if timeouts(round(2**mid)) > target.timeouts_per_block:
            lo = mid
        else:
            hi = mid
    # ``hi`` is the smallest buffer found whose timeouts do not exceed the capture's.
    b_lo, b_hi = round(2**lo), round(2**hi)
    if target.timeouts_per_block == 0:
        return _buffer_estimate(b_hi, b_hi, None, "no timeout in the capture")
    return _buffer_estimate(b_hi, b_lo, b_hi, "")


def _buffer_estimate(value: int, lo: int | None, hi: int | None, why: str) -> Estimate:
    if hi is None:
        text = f"at least {value:,} B: the replica times out no more than the capture"
    elif lo is None:
        text = f"at most {value:,} B: the replica times out no less than the capture"
    else:
        text = f"replica's timeouts per block match the capture's between {lo:,} and {hi:,} B"
    conf = "medium" if lo is not None and hi is not None else "low"
    return Estimate(
        "buffer",
        value,
        lo,
        hi,
        conf,
        "fitted by simulation: " + text + (f" ({why})" if why else ""),
    )


def calibrate_rto_min(
    est: dict[str, Estimate], capture_median_ns: int, profile: str, seed: int
) -> Estimate:
    """RTOmin corrected by the replica's own capture: the replica is run once with a capture
    at its receiver, read as the operator's capture was, and RTOmin moved by the difference
    between the two lost-tail silences. What lies between RTOmin and that silence (the
    smoothed RTT with its queueing, Linux's RTO formula, half round trips) is then the
    replica's to get right, not a guess's."""
    import tempfile
    from pathlib import Path

    from incastlab.backends.sim import simulate
    from incastlab.doctor.evidence import INTERVAL_PS, PROBE_RTO_GAP, PROBE_RTO_MIN_PS
    from incastlab.doctor.infer import snap_rto_min, tail_cluster
    from incastlab.trace import TraceOptions, analyze

    first = est["rto_min"]
    with tempfile.TemporaryDirectory(prefix="incast-doctor-") as tmp:
        pcap = Path(tmp) / "replica.pcap"
        simulate(scenario_dict(est, est["buffer"].value, profile, seed), pcap=pcap)
        t = analyze(pcap, TraceOptions(None, PROBE_RTO_MIN_PS, INTERVAL_PS, PROBE_RTO_GAP))
    c = tail_cluster(t.report["tail_rto_silences_ns"])
    if c is None:
        return first
    shift_ps = (capture_median_ns - c[0]) * 1000
    value = snap_rto_min(max(first.value // 4, first.value + shift_ps))
    return Estimate(
        "rto_min",
        value,
        None,
        None,
        first.confidence,
        f"{first.evidence}; the replica's at RTOmin {first.value / 1e9:g} ms "
        f"{c[0] / 1e6:,.2f} ms",
    )
