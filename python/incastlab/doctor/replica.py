"""The replica: the inferred scenario as a file a user can edit and rerun, with what the
capture cannot show fitted by simulation, and the figures that set it beside the capture.

Two values decide how an incast collapses and cannot be read from a capture at the receiver:
the switch buffer (drops happen upstream of the capture point) and RTOmin (a resend after a
timeout looks like one after a flow's ordinary pause, and Linux probes a lost tail before its
timer fires). They are fitted together: for each common RTOmin, the buffer at which the
replica resends as many segments per block as the capture (bisection on a log scale: more
buffer, fewer drops); then the RTOmin whose replica completes its blocks (or flows) in the
capture's distribution of times, and CUBIC or BBR likewise. A block that times out lasts at
least an RTO, so that distribution shows RTOmin where no single resend does.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from incastlab.doctor.infer import COMMON_RTO_MIN_PS, Estimate
from incastlab.doctor.search import log_crossing
from incastlab.doctor.timer import (
    one_per_tick,
    rto_estimate,
    rtt_driven_floor,
    rtt_driven_timeout,
    shown_tick,
)
from incastlab.trace import TraceOptions, TraceReport

#: The buffers the fit searches between, bytes: from a few frames to far more than any
#: shallow-buffered data-centre switch gives one port.
BUFFER_LO, BUFFER_HI = 4_000, 16_000_000
#: Bisection steps on log2(buffer) while RTOmin is searched (12 doublings in 6 steps: within
#: 14%), and for the final buffer (10 steps: within 1%).
SEARCH_STEPS, FINAL_STEPS = 6, 10
#: Completion-time quantiles the RTOmin fit compares.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
#: The reading both captures get for their pauses before resends: every silence of 0.8 ms
#: or more before a resend counts (ordinary pauses too, alike on both sides).
PROBE_RTO_MIN_PS = 1_000_000_000
#: Silence thresholds the pauses are compared at: 0.8 ms to ~3.3 s, two per doubling.
SILENCE_GRID_NS = tuple(int(800_000 * 2 ** (k / 2)) for k in range(25))
#: Weight of the pauses' term beside the completion times'.
SILENCE_WEIGHT = 0.25


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
    est: dict[str, Estimate], buffer_bytes: int, rto_min_ps: int, profile: str, seed: int = 1
) -> dict[str, Any]:
    """The replica as a scenario with unit strings (what ``incast sim FILE`` reads)."""
    workload: dict[str, Any] = {"kind": est["workload"].value}
    if est["workload"].value == "sync_read":
        workload |= {"sru": f"{est['response'].value}B", "blocks": est["rounds"].value}
    else:
        workload |= {"flow_size": f"{est['response'].value}B"}
    # When the servers start answering, where the capture shows they do not all start at once.
    for key in ("request_stagger", "jitter"):
        if key in est and est[key].value:
            workload[key] = _time(int(est[key].value))
    rtt_ps = max(1_000_000, round(est["rtt"].value, -6))  # whole microseconds
    marking = est.get("ecn_threshold")
    return {
        "seed": seed,
        "topology": {
            "senders": est["senders"].value,
            "link": _rate(est["link"].value),
            "rtt": _time(rtt_ps),
            "buffer": f"{buffer_bytes}B",
        }
        # A threshold at or above the buffer is the buffer's (the simulator wants it below,
        # and DCTCP wants one).
        | (
            {"ecn_threshold": f"{min(int(marking.value), buffer_bytes - 1)}B"}
            if marking and marking.value
            else {}
        ),
        "tcp": {"profile": profile, "rto_min": _time(rto_min_ps)}
        | (
            {"congestion_control": est["congestion_control"].value}
            if "congestion_control" in est
            else {}
        )
        | _initial_window(est)
        | _timer_tick(est, profile)
        | ({"ecn": True} if "ecn" in est else {}),
        "workload": workload,
    }


def _initial_window(est: dict[str, Estimate]) -> dict[str, int]:
    """The replica's initial window where the capture showed one (else its profile's)."""
    e = est.get("initial_window")
    return {"initial_window": int(e.value)} if e is not None and e.value else {}


def _timer_tick(est: dict[str, Estimate], profile: str) -> dict[str, str]:
    """The replica's timer tick where the capture showed one, under the key the profile's
    timers take it by (:func:`incastlab.real.testbed.simulator.profile` owns that rule)."""
    from incastlab.real.testbed.simulator import profile as on_tick

    e = est.get("timer_tick")
    if e is None or not e.value:
        return {}
    keys = on_tick(profile, _time(int(e.value)))
    return {k.removeprefix("tcp."): v for k, v in keys.items() if k != "tcp.profile"}


@dataclass(frozen=True)
class Figures:
    """What the capture and the replica are compared on. ``times`` are the blocks' durations
    (a synchronized read) or the flows' completions (a one-shot fan-in), seconds."""

    goodput_bps: float
    times: tuple[float, ...]
    timeouts_per_block: float
    blocks: int
    #: Segments resent per block: every packet lost upstream of the capture is resent and
    #: seen once more, however the pause before it is read (a timeout or not).
    retx_per_block: float = 0.0
    #: Stalls without a timeout per block (``incast pcap``'s probe stalls: a block silent
    #: for RTOmin/2 or more that no timeout ended).
    stalls_per_block: float = 0.0
    #: Each seed's goodput where several were pooled: a fan-in that times out or not by
    #: chance (a fresh one-shot fan-in on Linux does, in two runs of three) is bimodal, and
    #: the mean alone hides it.
    seed_goodputs_bps: tuple[float, ...] = ()

    def quantile(self, q: float) -> float:
        s = sorted(self.times)
        return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")

    def to_json(self) -> dict[str, Any]:
        return {
            "goodput_bps": self.goodput_bps,
            "time_p50_s": self.quantile(0.5),
            "time_p99_s": self.quantile(0.99),
            "timeouts_per_block": self.timeouts_per_block,
            "blocks": self.blocks,
            "retx_per_block": self.retx_per_block,
            "probe_stalls_per_block": self.stalls_per_block,
            "goodput_seeds_bps": list(self.seed_goodputs_bps),
        }


def capture_figures(t: TraceReport) -> Figures:
    """The capture's goodput over its span, completion times and timeouts per block."""
    r = t.report
    blocks = [b for b in r["blocks"] if b["flows"]]
    if len(blocks) >= 2:
        times = tuple(b["duration_ns"] / 1e9 for b in blocks)
    else:
        # From the first data to each flow's last: a connection opened before the fan-in
        # and closed after the whole of it would stretch both ends.
        start = min(f["first_data_ns"] for f in r["flows"])
        times = tuple((f["last_data_ns"] - start) / 1e9 for f in r["flows"])
    n = max(1, len(blocks))
    retx = r["retx_fast"] + r["retx_rto"] + r["retx_tlp"]
    stalls = r.get("probe_stalls", 0) / n
    return Figures(float(r["goodput_bps"]), times, r["rtos"] / n, n, retx / n, stalls)


def replica_run(
    est: dict[str, Estimate], rto_min_ps: int, profile: str, seeds: Sequence[int]
) -> Figures:
    """The replica at the fitted values under each seed, captured and read as the capture
    was, pooled."""
    buf = int(est["buffer"].value)
    return pooled(
        [
            replica_readings(scenario_dict(est, buf, rto_min_ps, profile, s), rto_min_ps)[0]
            for s in seeds
        ]
    )


def distance(capture: Figures, replica: Figures) -> float:
    """How far the replica is from the capture: the sum over :data:`QUANTILES` of the
    completion times' |ln(ratio)|, plus |ln| of the goodput ratio and of the ratio of
    (1 + timeouts per block), the capture's counted against the replica's RTOmin."""
    d = abs(math.log(max(replica.goodput_bps, 1.0) / max(capture.goodput_bps, 1.0)))
    d += abs(math.log((1 + replica.timeouts_per_block) / (1 + capture.timeouts_per_block)))
    for q in QUANTILES:
        d += abs(math.log(max(replica.quantile(q), 1e-9) / max(capture.quantile(q), 1e-9)))
    return d


def silence_distance(capture: Sequence[int], replica: Sequence[int], blocks: int) -> float:
    """How differently two captures pause before resends: at each threshold of
    :data:`SILENCE_GRID_NS`, |ln| of the ratio of (1 + silences at least that long per
    block). A timeout's pause (RTOmin plus a round trip and its queueing) shows as a step in
    these counts, where the flows' ordinary pauses have long ended."""
    cs, rs = sorted(capture), sorted(replica)
    n = max(1, blocks)
    d = 0.0
    for g in SILENCE_GRID_NS:
        c = (len(cs) - bisect.bisect_left(cs, g)) / n
        r = (len(rs) - bisect.bisect_left(rs, g)) / n
        d += abs(math.log((1 + r) / (1 + c)))
    return SILENCE_WEIGHT * d


def captured(scenario: dict[str, Any], options: list[TraceOptions]) -> list[TraceReport] | None:
    """Run ``scenario`` with a capture at its receiver and read that capture once per
    ``options``; None for a replica that does not finish within the simulator's time budget
    or whose capture spans too long to read."""
    import tempfile
    from pathlib import Path

    from incastlab import SimulationError
    from incastlab._core import TraceError
    from incastlab.backends.sim import simulate
    from incastlab.trace import analyze

    with tempfile.TemporaryDirectory(prefix="incast-doctor-") as tmp:
        pcap = Path(tmp) / "replica.pcap"
        try:
            simulate(scenario, pcap=pcap)
            return [analyze(pcap, o) for o in options]
        except (SimulationError, TraceError):
            return None


def replica_readings(scenario: dict[str, Any], rto_min_ps: int) -> tuple[Figures, list[int]]:
    """Run ``scenario`` with a capture at its receiver and read that capture as the
    operator's is read: its figures with timeouts counted against ``rto_min_ps``, and its
    pauses before resends at :data:`PROBE_RTO_MIN_PS`. Both sides then carry the same
    misreadings (ordinary pauses taken for timeouts, backed-off timeouts guessed). A
    replica that does not finish within the simulator's time budget (32 senders behind a
    4 KB port at RTOmin 200 ms) reads as the worst there is: no goodput, endless losses."""
    read = captured(
        scenario,
        [
            TraceOptions(None, PROBE_RTO_MIN_PS, 100_000_000),
            TraceOptions(None, rto_min_ps, min(100_000_000, rto_min_ps)),
        ],
    )
    if read is None:
        # A replica so collapsed its capture spans minutes (backed-off timeouts: more
        # intervals than the reader bins) is as far from any capture as one that never ends.
        return Figures(0.0, (math.inf,), math.inf, 1, math.inf), []
    probe, at = read
    return capture_figures(at), list(probe.report["rto_silences_ns"])


@dataclass(frozen=True)
class Fit:
    """A buffer found for one RTOmin, and how close its replica came."""

    rto_min_ps: int
    buffer: int
    buffer_lo: int | None
    buffer_hi: int | None
    distance: float
    replica: Figures


def pooled(figs: Sequence[Figures]) -> Figures:
    """Several seeds' figures as one: mean goodput, every time, timeouts per block."""
    blocks = sum(f.blocks for f in figs)
    return Figures(
        statistics.fmean(f.goodput_bps for f in figs),
        tuple(t for f in figs for t in f.times),
        sum(f.timeouts_per_block * f.blocks for f in figs) / max(1, blocks),
        blocks,
        sum(f.retx_per_block * f.blocks for f in figs) / max(1, blocks),
        sum(f.stalls_per_block * f.blocks for f in figs) / max(1, blocks),
        tuple(f.goodput_bps for f in figs),
    )


def fit_buffer(
    est: dict[str, Estimate],
    target: Figures,
    rto_min_ps: int,
    profile: str,
    seeds: Sequence[int],
    steps: int,
) -> tuple[Fit, list[int]]:
    """The port buffer at which the replica, captured and read as the capture is, resends
    as many segments per block (more buffer, fewer drops), at RTOmin ``rto_min_ps``; bounded
    when even the smallest or the largest buffer misses, and a floor when the capture
    resends nothing. Also the replica's pauses there.

    Resends, not timeouts per block or goodput: every packet dropped upstream of the capture
    comes once more, whatever the pause before it, where a capture's timeouts depend on how
    its pauses are read (at a 10 ms RTOmin the flows' ordinary pauses count too: a fit on
    them found a quarter of the buffer and half the goodput, 16 x 64 KB at 100 Mbps behind
    32 KB), and goodput near the link hardly moves with the buffer (the same capture fitted
    on goodput read 274 KB)."""
    seen: dict[int, tuple[Figures, list[int]]] = {}

    def reading(buf: int) -> tuple[Figures, list[int]]:
        if buf not in seen:
            rs = [
                replica_readings(scenario_dict(est, buf, rto_min_ps, profile, s), rto_min_ps)
                for s in seeds
            ]
            seen[buf] = (pooled([f for f, _ in rs]), [x for _, sil in rs for x in sil])
        return seen[buf]

    # Timeouts per block tell buffers apart only where RTOmin, not the RTT-driven timeout,
    # sets them (and where a buffer so small that flows time out more than they resend
    # makes resends fall again); below that floor the capture's reading of them counts the
    # flows' ordinary pauses and the resends alone decide.
    floor = rtt_driven_floor(profile, BUFFER_LO, int(est["link"].value), shown_tick(est))
    use_timeouts = rto_min_ps > floor

    def short(buf: int) -> bool:
        f = reading(buf)[0]
        score = math.log((1 + f.retx_per_block) / (1 + target.retx_per_block))
        if use_timeouts:
            score += math.log((1 + f.timeouts_per_block) / (1 + target.timeouts_per_block))
        return score > 0

    def crossing(a: int, b: int) -> tuple[int, int]:
        # The buffers either side of where the replica's resends cross the capture's,
        # smaller first (a < b).
        return log_crossing(short, a, b, steps)

    # Resends fall again at the smallest buffers, where flows mostly sit out backed-off
    # timers (16 x 64 KB one-shot at 100 Mbps: 152 resends behind 4 KB, 190 behind 32 KB),
    # and BBR resends more behind a deeper port: where the smallest buffer resends too
    # little, the search starts from the smallest of the x4 grid that resends too much, and
    # both crossings, below and above it, are tried; the replica closer to the capture wins.
    start = BUFFER_LO if short(BUFFER_LO) else next((b for b in GRID[1:] if short(b)), None)
    if short(BUFFER_HI):
        buf, b_lo, b_hi = BUFFER_HI, BUFFER_HI, None
    elif start is None:
        buf, b_lo, b_hi = BUFFER_LO, None, BUFFER_LO
    else:
        pairs = [crossing(start, BUFFER_HI)]
        if start != BUFFER_LO:
            pairs.append(crossing(BUFFER_LO, start))
        # The side that resends no more than the capture: the larger buffer above the
        # start, the smaller below it.
        ends = [(p[1], p) if i == 0 else (p[0], p) for i, p in enumerate(pairs)]
        buf, (b_lo, b_hi) = min(ends, key=lambda e: distance(target, reading(e[0])[0]))
        if target.retx_per_block == 0:
            b_hi = None  # no loss: any buffer from here on loses as little
    f, sil = reading(buf)
    return Fit(rto_min_ps, buf, b_lo, b_hi, distance(target, f), f), sil


def fit_rto_and_buffer(
    est: dict[str, Estimate],
    capture_at: Callable[[int], Figures],
    capture_silences: Sequence[int],
    profile: str,
    seeds: Sequence[int],
    on_candidate: Callable[[int], None] | None = None,
    rto_candidates: Sequence[int] = COMMON_RTO_MIN_PS,
) -> tuple[Estimate, Estimate, list[Fit]]:
    """RTOmin among the common values, each with its loss-matching buffer, chosen by the
    completion times, goodput and timeouts (the capture's read with that RTOmin:
    ``capture_at(rto_min_ps)``) and the pauses before resends (``capture_silences``, read
    at :data:`PROBE_RTO_MIN_PS`); then that RTOmin's buffer to the final precision.
    ``rto_candidates`` (picoseconds) are the RTOmins tried, those no longer than the
    capture's longest completion time (a shorter one at least), one per timer tick. With two
    or more seeds each candidate's replica runs under a second seed too: half the two
    distances' gap is the noise within which candidates cannot be told apart."""
    longest = max(capture_at(COMMON_RTO_MIN_PS[-1]).times, default=0.0)
    tried = one_per_tick(sorted(rto_candidates), profile, shown_tick(est))
    candidates = [c for c in tried if c / 1e12 <= max(longest, 0.001)] or tried[:1]
    fits, noise = [], {}
    for c in candidates:
        f, noise[c] = _candidate(est, capture_at(c), capture_silences, c, profile, seeds)
        fits.append(f)
        if on_candidate:
            on_candidate(c)
    fits.sort(key=lambda f: f.distance)
    best = fits[0]
    target = capture_at(best.rto_min_ps)
    if "congestion_control" not in est:  # else the user named it (doctor --cc)
        est["congestion_control"] = assumed_congestion_control(profile)
    grid = _grid(est, target, best.rto_min_ps, profile, seeds)
    final, _ = fit_buffer(est, target, best.rto_min_ps, profile, seeds[:2], FINAL_STEPS)
    buffer = _buffer_estimate(final)
    if grid[0][0] < GRID_BETTER * final.distance:
        # The bisection's criterion (resends, timeouts) is not monotone in the buffer for
        # every workload (BBR resends more behind a deeper port; a port so shallow that
        # flows mostly wait resends less): a point of the grid that replicates the capture
        # clearly better wins.
        d, buf = grid[0]
        buffer = Estimate(
            "buffer",
            buf,
            buf // 2,
            buf * 2,
            "low",
            f"fitted by simulation: the closest of a x4 grid of buffers (distance {d:.2f} "
            f"against {final.distance:.2f} where the replica resends as often, "
            f"{final.buffer:,} B)",
        )
    link = int(est["link"].value)
    floor = rtt_driven_floor(profile, int(buffer.value), link, shown_tick(est))
    timeout = rtt_driven_timeout(profile, int(buffer.value), link, shown_tick(est))
    return rto_estimate(fits, noise, floor, candidates[0], timeout), buffer, fits


def _candidate(
    est: dict[str, Estimate],
    target: Figures,
    silences: Sequence[int],
    rto_min_ps: int,
    profile: str,
    seeds: Sequence[int],
) -> tuple[Fit, float]:
    """One candidate's buffer (first seed) and its distance to the capture, the mean over
    two seeds when there are two, with half their gap: the seed noise."""
    f, sil = fit_buffer(est, target, rto_min_ps, profile, seeds[:1], SEARCH_STEPS)
    d, noise = f.distance + silence_distance(silences, sil, target.blocks), 0.0
    if len(seeds) > 1:
        sc = scenario_dict(est, f.buffer, rto_min_ps, profile, seeds[1])
        f2, sil2 = replica_readings(sc, rto_min_ps)
        d2 = distance(target, f2) + silence_distance(silences, sil2, target.blocks)
        noise, d = abs(d2 - d) / 2, (d + d2) / 2
    return Fit(rto_min_ps, f.buffer, f.buffer_lo, f.buffer_hi, d, f.replica), noise


#: Buffers, bytes, x4 apart, the replica is also tried at: the closest is within 2x of the
#: buffer that replicates the capture best.
GRID = (4_000, 16_000, 64_000, 256_000, 1_024_000, 4_096_000)
#: A grid point whose distance is under this share of the bisection's replaces it.
GRID_BETTER = 0.8


def _grid(
    est: dict[str, Estimate], target: Figures, rto_min_ps: int, profile: str, seeds: Sequence[int]
) -> list[tuple[float, int]]:
    """(distance, buffer) at every buffer of :data:`GRID`, pooled over two seeds, closest
    first."""
    out = []
    for buf in GRID:
        figs = [
            replica_readings(scenario_dict(est, buf, rto_min_ps, profile, s), rto_min_ps)[0]
            for s in seeds[:2]
        ]
        out.append((distance(target, pooled(figs)), buf))
    return sorted(out)


def assumed_congestion_control(profile: str) -> Estimate:
    """The congestion control the replica runs: the profile's default, assumed. A capture at
    the receiver does not show it: the bottleneck's queue re-spaces every packet at the
    link rate (BBR's pacing and CUBIC's bursts arrive alike), BBR's first flights are not
    paced (its startup pacing rate, 2.89 x IW / srtt, exceeds the link), and a fit by
    simulation (each family over a grid of buffers, the closer replica chosen) picked
    wrongly in 4 of 7 rows of benchmarks/doctor_table.py: the families' completion times
    differ by less than the seeds' noise over a few blocks."""
    cc = "cubic" if profile == "linux" else "reno"
    return Estimate(
        "congestion_control",
        cc,
        None,
        None,
        "assumed",
        f"the {profile} profile's default: a capture at the receiver does not show the "
        "congestion control (the bottleneck re-spaces packets; a fit by simulation could "
        "not tell CUBIC from BBR); set tcp.congestion_control in the replica if known",
    )


def _buffer_estimate(f: Fit) -> Estimate:
    if f.buffer_hi is None:
        text = f"at least {f.buffer:,} B: from there the replica is as fast as the capture"
    elif f.buffer_lo is None:
        text = f"at most {f.buffer:,} B: even there the replica is faster than the capture"
    else:
        text = f"the replica reaches the capture's goodput between {f.buffer_lo:,} and "
        text += f"{f.buffer_hi:,} B"
    conf = "medium" if f.buffer_lo is not None and f.buffer_hi is not None else "low"
    return Estimate(
        "buffer", f.buffer, f.buffer_lo, f.buffer_hi, conf, "fitted by simulation: " + text
    )
