"""When the servers start answering: a client that asks them one after another (the replica's
``workload.request_stagger``) and servers that answer at different times (``workload.jitter``:
a uniform wait before answering, or before a one-shot flow starts).

A capture at the receiver shows when each request left and when each flow's first segment
arrived, but the arrival also holds the queue that segment met at the receiver's port, which a
fan-in whose servers start apart fills with the early servers' data. So the stagger is read
directly, and the jitter is fitted by simulation: the replica, captured and read as the
capture is, with the jitter whose early answers (a block's lower quartile of request-to-answer
delays, less its shortest: the flows that met the least queue) come as late as the capture's.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable

from incastlab.doctor.infer import PS_PER_NS, Estimate, frame_time_ps
from incastlab.doctor.replica import captured, scenario_dict
from incastlab.trace import TraceOptions, TraceReport

#: Port buffer of the replicas the jitter is fitted with, bytes: the early answers' delays
#: hardly move with it (16 x 64 KB at 100 Mbps, stagger 300 us: the same within 0.7 ms at
#: 32 KB and 256 KB for jitters of 0-10 ms, where the median's moved by 3.5-6 ms).
FIT_BUFFER = 64_000
#: Fractions of the direct estimate the fit tries (the direct estimate is an upper bound:
#: every first segment's queue counted as the server's wait).
FIT_FRACTIONS = (0.0, 0.125, 0.25, 0.5, 0.75, 1.0)
#: RTOmin of those replicas, picoseconds (Linux's; the early answers come before any timer).
FIT_RTO_MIN_PS = 200 * 10**9


def direct_starts(t: TraceReport, link_bps: int, kind: str) -> dict[str, Estimate]:
    """When the servers start answering: a client that asks them one after another
    (``request_stagger``) and servers that answer at different times (``jitter``: a uniform
    wait before answering, or before a one-shot flow starts).

    Per block, the requests' spread gives the stagger; each flow's delay from its request to
    its first segment gives the jitter. Servers that answer together still see their first
    segments queue one behind another at the receiver's port, half of the flows waiting half
    of the n frame times; servers that wait uniformly up to J add J/2 to the median delay
    beyond the shortest. So J = 2 (median - shortest) - n frame times, and it counts only
    where it is more than n frame times (twice the spread of a synchronized start, seen in the
    simulator's captures). A block's first segments lost whole are late by a timeout: the
    median, not the spread's tail, keeps them out. In an emulation whose 16 servers share two
    CPUs, the servers started answering over 0.1-4.6 ms of their requests (their NICs'
    captures) and the client sent its requests over up to 4.6 ms: a fan-in that much less
    synchronized than a simultaneous start fills a port less, and a replica that starts every
    server together needs a deeper buffer to match it. The jitter read so is an upper bound
    (every first segment's queue counted as its server's wait): :func:`fit_jitter` refines it."""
    frame_ps = frame_time_ps(link_bps)
    spreads, jitters, flows = [], [], []
    for b in t.report["blocks"]:
        d = b.get("answer_delays_ns") or []
        if len(d) < 2:
            continue
        n = len(d)
        flows.append(n)
        spreads.append(b.get("request_spread_ns", 0) * PS_PER_NS / (n - 1))
        median = statistics.median(d) * PS_PER_NS
        jitters.append(max(0.0, 2 * (median - d[0] * PS_PER_NS) - n * frame_ps))
    if not flows:
        return {}
    n = max(flows)
    measured = statistics.median(spreads)
    jitter = statistics.median(jitters)
    # A client's requests leave one after another at its NIC anyway (a few microseconds
    # each): under half a full frame's time a request, the replica's own client does that.
    stagger = measured if measured > frame_ps / 2 else 0.0
    if kind != "sync_read":
        # A one-shot replica has no requests: the whole spread of its starts is the jitter.
        jitter += stagger * (n - 1)
        stagger = 0.0
    jitter = jitter if jitter > n * frame_ps else 0.0
    out = {}
    rounds = f"{len(flows)} block{'s' if len(flows) > 1 else ''}"
    if kind == "sync_read":
        out["request_stagger"] = Estimate(
            "request_stagger",
            _us(stagger),
            _us(min(spreads)),
            _us(max(spreads)),
            "medium",
            f"requests of a block spread over {measured * (n - 1) / 1e9:,.2f} ms (median over "
            f"{rounds})" + ("" if stagger else ": at the pace of the client's NIC"),
        )
    out["jitter"] = Estimate(
        "jitter",
        _us(jitter),
        _us(min(jitters)),
        _us(max(jitters)),
        "low" if jitter else "medium",
        f"first answers over {rounds}: 2 x (median - shortest) request-to-answer delay, less "
        f"{n} frame times"
        + (", plus the requests' spread (one-shot)" if kind != "sync_read" and jitter else "")
        + ("" if jitter else ": the servers answered together"),
    )
    return out


def early_answers_ps(t: TraceReport) -> float | None:
    """Median over blocks of the lower quartile of request-to-first-answer delays less the
    shortest, picoseconds; None without a block of two or more flows."""
    per_block = []
    for b in t.report["blocks"]:
        d = b.get("answer_delays_ns") or []
        if len(d) >= 2:
            per_block.append((d[(len(d) - 1) // 4] - d[0]) * PS_PER_NS)
    return statistics.median(per_block) if per_block else None


def fit_jitter(
    est: dict[str, Estimate],
    capture: TraceReport,
    replica_trace: Callable[[dict[str, Estimate]], TraceReport | None],
) -> Estimate:
    """The jitter whose replica's early answers come as late as the capture's: each of
    :data:`FIT_FRACTIONS` of the direct estimate runs once (``replica_trace`` runs a replica of
    ``est`` and reads its capture, None where it cannot), and the value between the two that
    bracket the capture's delay is interpolated. No jitter where the direct estimate saw
    none."""
    direct = est.get("jitter")
    target = early_answers_ps(capture)
    if direct is None or not direct.value or target is None:
        return direct or Estimate("jitter", 0, 0, 0, "medium", "no blocks to read it from")
    tried: list[tuple[float, float]] = []
    for f in FIT_FRACTIONS:
        j = _us(direct.value * f)
        trial = {**est, "jitter": Estimate("jitter", j, j, j, "low", "trial")}
        replica = replica_trace(trial)
        got = None if replica is None else early_answers_ps(replica)
        if got is not None:
            tried.append((j, got))
    if not tried:
        return direct
    value = _bracketed(tried, target)
    lo = min((j for j, g in tried if g >= 0.8 * target), default=value)
    hi = max((j for j, g in tried if g <= 1.25 * target), default=value)
    return Estimate(
        "jitter",
        value,
        min(lo, value),
        max(hi, value),
        "low",
        f"fitted by simulation: the replica's early answers (a block's lower quartile of "
        f"request-to-answer delays, less the shortest) as late as the capture's "
        f"{target / 1e9:,.2f} ms; {len(tried)} jitters tried up to the direct reading "
        f"{direct.value / 1e9:,.2f} ms",
    )


def _us(ps: float) -> int:
    """Picoseconds rounded to whole microseconds (what the replica's scenario writes)."""
    return int(round(ps, -6))


def _bracketed(tried: list[tuple[float, float]], target: float) -> float:
    """The jitter at which the (jitter, delay) points reach ``target``, linearly between the
    first pair that brackets it; the closest point where none does."""
    for (j0, g0), (j1, g1) in itertools.pairwise(tried):
        if g0 <= target <= g1 and g1 > g0:
            return _us(j0 + (j1 - j0) * (target - g0) / (g1 - g0))
    return min(tried, key=lambda p: abs(p[1] - target))[0]


def replica_trace(est: dict[str, Estimate], profile: str, seed: int) -> TraceReport | None:
    """A replica of ``est`` behind a :data:`FIT_BUFFER` port, captured and read; None for one
    that does not finish or whose capture cannot be read (:func:`captured`)."""
    read = captured(scenario_dict(est, FIT_BUFFER, FIT_RTO_MIN_PS, profile, seed), [TraceOptions()])
    return None if read is None else read[0]
