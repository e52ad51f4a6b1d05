"""The replica: the inferred scenario as a file a user can edit and rerun, its buffer fitted by
simulation, and the figures that set it beside the capture.

The switch buffer is the one value a receiver-side capture cannot show (the drops happen
before the capture point), but it decides how many responses lose their tails. It is found by
bisection on a log scale: the buffer at which the replica's timeouts per block equal the
capture's. More buffer never adds timeouts in these workloads, so the bisection converges; its
range is the pair of buffers that bracket the capture's count.
"""

from __future__ import annotations

import bisect
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
    est: dict[str, Estimate],
    buffer_bytes: int,
    profile: str,
    seed: int = 1,
    rto_min_ps: int | None = None,
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
        "tcp": {"profile": profile, "rto_min": _time(rto_min_ps or est["rto_min"].value)},
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
    est: dict[str, Estimate],
    target: Figures,
    profile: str,
    seeds: Sequence[int],
    run: Runner,
    by: str = "timeouts",
) -> Estimate:
    """The port buffer at which the replica times out as often per block as the capture
    (``by="timeouts"``), or reaches its goodput (``by="goodput"``, compared as fewer
    timeouts are: a lack of goodput stands for an excess of timeouts)."""

    def figure(f: Figures) -> float:
        return f.timeouts_per_block if by == "timeouts" else -f.goodput_bps

    def timeouts(buf: int) -> float:
        rs = run([scenario_dict(est, buf, profile, s) for s in seeds])
        return figure(replica_figures(rs))

    want = figure(target)
    lo, hi = math.log2(BUFFER_LO), math.log2(BUFFER_HI)
    if timeouts(BUFFER_HI) > want:
        return _buffer_estimate(BUFFER_HI, BUFFER_HI, None, "even the largest buffer tried")
    if timeouts(BUFFER_LO) <= want and (by == "goodput" or want > 0):
        return _buffer_estimate(BUFFER_LO, None, BUFFER_LO, "even the smallest buffer tried")
    for _ in range(FIT_STEPS):
        mid = (lo + hi) / 2
        if timeouts(round(2**mid)) > want:
            lo = mid
        else:
            hi = mid
    # ``hi`` is the smallest buffer found whose timeouts do not exceed the capture's.
    b_lo, b_hi = round(2**lo), round(2**hi)
    if by == "timeouts" and want == 0:
        return _buffer_estimate(b_hi, b_hi, None, "no timeout in the capture")
    return _buffer_estimate(b_hi, b_lo, b_hi, f"matched on {by}")


def _buffer_estimate(value: int, lo: int | None, hi: int | None, why: str) -> Estimate:
    if hi is None:
        text = f"at least {value:,} B: the replica times out no more than the capture"
    elif lo is None:
        text = f"at most {value:,} B: the replica times out no less than the capture"
    else:
        text = f"the replica matches the capture between {lo:,} and {hi:,} B"
    conf = "medium" if lo is not None and hi is not None else "low"
    return Estimate(
        "buffer",
        value,
        lo,
        hi,
        conf,
        "fitted by simulation: " + text + (f" ({why})" if why else ""),
    )



#: Silence thresholds the RTO fit compares captures at: 0.5 ms to ~4 s, four per doubling.
SILENCE_GRID_NS = tuple(int(500_000 * 2 ** (k / 4)) for k in range(53))


def silence_shape(silences: Sequence[int]) -> list[float]:
    """Share of the silences at least each threshold long: the shape of a capture's pauses
    before resends, whatever their number."""
    n = len(silences)
    if not n:
        return [0.0] * len(SILENCE_GRID_NS)
    s = sorted(silences)
    return [(n - bisect.bisect_left(s, g)) / n for g in SILENCE_GRID_NS]


def shape_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Area between two survival curves on the log-time grid."""
    return sum(abs(x - y) for x, y in zip(a, b, strict=True))


def replica_silences(scenario: dict[str, Any]) -> list[int]:
    """Run ``scenario`` with a capture at its receiver and read that capture as the
    operator's probe reading was read: every silence taken for a timeout."""
    import tempfile
    from pathlib import Path

    from incastlab.backends.sim import simulate
    from incastlab.doctor.evidence import INTERVAL_PS, PROBE_RTO_GAP, PROBE_RTO_MIN_PS
    from incastlab.trace import TraceOptions, analyze

    with tempfile.TemporaryDirectory(prefix="incast-doctor-") as tmp:
        pcap = Path(tmp) / "replica.pcap"
        simulate(scenario, pcap=pcap)
        t = analyze(pcap, TraceOptions(None, PROBE_RTO_MIN_PS, INTERVAL_PS, PROBE_RTO_GAP))
    return list(t.report["rto_silences_ns"])


def fit_rto_min(
    est: dict[str, Estimate], capture_silences: Sequence[int], profile: str, seed: int
) -> Estimate:
    """The common RTOmin whose replica pauses before its resends as the capture's senders
    did: each candidate's replica is captured at its receiver and read the same way as the
    capture, and the survival curves of the two captures' silences are compared. Read the
    same way, both sides carry the same ordinary pauses taken for timeouts, and what Linux
    adds to RTOmin (the smoothed RTT with its queueing, the probe before the timeout) is the
    replica's to reproduce."""
    from incastlab.doctor.infer import COMMON_RTO_MIN_PS

    target = silence_shape(capture_silences)
    scored = []
    for c in COMMON_RTO_MIN_PS:
        sil = replica_silences(scenario_dict(est, est["buffer"].value, profile, seed, c))
        scored.append((shape_distance(target, silence_shape(sil)), c))
    scored.sort()
    (best_d, best), (next_d, second) = scored[0], scored[1]
    near = sorted(c for d, c in scored if d <= best_d * 1.25 + 1e-9)
    return Estimate(
        "rto_min",
        best,
        near[0],
        near[-1],
        "high" if next_d > 1.5 * best_d else "medium",
        f"replica's pauses before resends closest to the capture's ({len(capture_silences)}) "
        f"among {len(scored)} RTOmin values: distance {best_d:.2f}, next "
        f"{second / 1e9:g} ms at {next_d:.2f}",
    )
