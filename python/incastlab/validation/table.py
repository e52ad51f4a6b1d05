"""The validation grid's table: per point the kernel's spread and each profile's median, the
summary per profile, BBR against CUBIC, and :func:`validate`, which builds them from the
stored kernel runs and fresh simulator runs."""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.real.testbed.simulator import check_kernel_clock, jitter_from_probes
from incastlab.studies.compare import inside, spread
from incastlab.validation.grid import (
    FALLBACK_RTT_S,
    ORDERING_RTO,
    ORDERING_SENDERS,
    TIE,
    Grid,
    Point,
)
from incastlab.validation.runs import (
    StallTrace,
    conditions_by_repetition,
    kernel_facts,
    load_real,
    measured_rtt_s,
    testbed_stalls,
    unstalled,
)
from incastlab.validation.sim import measured_goodput_bps, run_sim

if TYPE_CHECKING:
    from incastlab.result import Result
    from incastlab.scenario import Scenario


@dataclass
class Row:
    """One point of the table: the kernel's spread, each profile's median and error."""

    point: Point
    rtt_s: float | None
    real: list[float]  # goodput (bps) per repetition
    sim: dict[str, list[float]]  # profile -> goodput per seed (empty: missing)
    missing: dict[str, str] = field(default_factory=dict)  # profile -> why
    #: The kernel's evidence per repetition: RTOs and tail-loss probes of the senders (a
    #: probe fires at the RTO's time when one segment is outstanding: a stall the RTO
    #: counter misses), and the simulator's RTOs per seed and profile.
    real_timeouts: list[int] = field(default_factory=list)
    real_probes: list[int] = field(default_factory=list)
    sim_timeouts: dict[str, list[int]] = field(default_factory=dict)

    @property
    def real_median(self) -> float | None:
        return spread(self.real)[0] if self.real else None

    @property
    def real_min(self) -> float | None:
        return min(self.real) if self.real else None

    @property
    def real_max(self) -> float | None:
        return max(self.real) if self.real else None

    def sim_median(self, profile: str) -> float | None:
        got = self.sim.get(profile)
        return statistics.median(got) if got else None

    def error(self, profile: str) -> float | None:
        """sim / real − 1 of the medians."""
        s, r = self.sim_median(profile), self.real_median
        return None if s is None or not r else s / r - 1

    def beyond_range(self, profile: str) -> float | None:
        """How far the simulator's median lies outside the kernel's min–max, relative to the
        nearer end: positive above the maximum, negative below the minimum, 0 inside."""
        s = self.sim_median(profile)
        if s is None or not self.real:
            return None
        lo, hi = min(self.real), max(self.real)
        return s / hi - 1 if s > hi else (s / lo - 1 if s < lo else 0.0)

    def inside(self, profile: str, runs: int | None = None) -> bool | None:
        """Whether the simulator's median lies inside the min–max of the kernel's runs (of its
        first ``runs`` repetitions: the range widens with more runs)."""
        s = self.sim_median(profile)
        real = self.real[:runs]
        if s is None or not real:
            return None
        return inside(s, min(real), max(real))

    def record(self, profiles: Sequence[str]) -> dict[str, Any]:
        """The row as CSV cells (goodputs in Mbps)."""

        def mbps(x: float | None) -> float | None:
            return None if x is None else round(x / 1e6, 2)

        p = self.point
        out: dict[str, Any] = {
            "buffer": p.buffer,
            "rto_min": p.rto_min,
            "cc": p.cc,
            "senders": p.senders,
            "rtt_us": None if self.rtt_s is None else round(self.rtt_s * 1e6, 1),
            "real_runs": len(self.real),
            "real_median_mbps": mbps(self.real_median),
            "real_min_mbps": mbps(self.real_min),
            "real_max_mbps": mbps(self.real_max),
            "real_timeouts": median_int(self.real_timeouts),
            "real_loss_probes": median_int(self.real_probes),
        }
        for name in profiles:
            err = self.error(name)
            out[f"sim_{name}_mbps"] = mbps(self.sim_median(name))
            out[f"sim_{name}_vs_real"] = None if err is None else round(err, 3)
            out[f"sim_{name}_inside"] = self.inside(name)
            out[f"sim_{name}_timeouts"] = median_int(self.sim_timeouts.get(name, []))
            out[f"sim_{name}_missing"] = self.missing.get(name)
        return out


def median_int(values: Sequence[int]) -> float | None:
    return statistics.median(values) if values else None


@dataclass
class ProfileSummary:
    profile: str
    points: int  # with both a real and a simulated median
    missing: int
    median_abs_error: float | None
    inside_share: float | None
    outside: list[Row]
    #: The share inside the min–max of only the first half of each point's runs: how much the
    #: verdict owes to the number of runs.
    half_runs: int = 0
    inside_share_half: float | None = None
    #: The share inside the kernel's min–max or within :data:`NEAR_RANGE` of its nearer end:
    #: how many of the points outside are near misses (a secondary figure, not the test).
    near_share: float | None = None


#: How far beyond the kernel's min–max a point counts as near (relative to the nearer end).
NEAR_RANGE = 0.01


@dataclass
class Ordering:
    """BBR against CUBIC at one (buffer, N) with RTOmin 200 ms: goodput ratios."""

    buffer: str
    senders: int
    real: float | None
    sim: dict[str, float | None]


def summarize(rows: Sequence[Row], profiles: Sequence[str]) -> list[ProfileSummary]:
    out = []
    for name in profiles:
        both = [r for r in rows if r.error(name) is not None]
        errors = [abs(e) for r in both if (e := r.error(name)) is not None]
        ins = [r for r in both if r.inside(name)]
        half = max((len(r.real) + 1) // 2 for r in both) if both else 0
        ins_half = [r for r in both if r.inside(name, half)]
        near = [r for r in both if abs(r.beyond_range(name) or 0.0) <= NEAR_RANGE]
        out.append(
            ProfileSummary(
                profile=name,
                points=len(both),
                missing=sum(1 for r in rows if name in r.missing),
                median_abs_error=statistics.median(errors) if errors else None,
                inside_share=len(ins) / len(both) if both else None,
                outside=[r for r in both if not r.inside(name)],
                half_runs=half,
                inside_share_half=len(ins_half) / len(both) if both else None,
                near_share=len(near) / len(both) if both else None,
            )
        )
    return out


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def orderings(
    rows: Sequence[Row],
    profiles: Sequence[str],
    senders: Sequence[int] = ORDERING_SENDERS,
    rto_min: str = ORDERING_RTO,
) -> list[Ordering]:
    """BBR's goodput over CUBIC's (medians) per buffer and N at ``rto_min``, where both ran."""
    by = {(r.point.buffer, r.point.rto_min, r.point.cc, r.point.senders): r for r in rows}
    out = []
    for buffer in dict.fromkeys(r.point.buffer for r in rows):
        for n in senders:
            bbr, cubic = by.get((buffer, rto_min, "bbr", n)), by.get((buffer, rto_min, "cubic", n))
            if bbr is None or cubic is None:
                continue
            out.append(
                Ordering(
                    buffer,
                    n,
                    ratio(bbr.real_median, cubic.real_median),
                    {p: ratio(bbr.sim_median(p), cubic.sim_median(p)) for p in profiles},
                )
            )
    return out


def harder(ratio_: float | None, tie: float = TIE) -> str:
    """Which collapses harder, given BBR / CUBIC; within ``tie`` of 1, neither."""
    if ratio_ is None:
        return "-"
    if abs(ratio_ - 1) <= tie:
        return "neither"
    return "BBR" if ratio_ < 1 else "CUBIC"


def ordering_summary(ords: Sequence[Ordering], profiles: Sequence[str]) -> dict[str, Any]:
    """The median BBR / CUBIC ratio in the kernel and per profile, and per profile the
    share of (buffer, N) where the simulator names the same one as collapsing harder."""
    real = [o.real for o in ords if o.real is not None]
    out: dict[str, Any] = {"real": statistics.median(real) if real else None, "profiles": {}}
    for p in profiles:
        pairs = [(o.real, o.sim[p]) for o in ords if o.real is not None and o.sim[p] is not None]
        sims = [s for _, s in pairs if s is not None]
        agree = [harder(r) == harder(s) for r, s in pairs]
        out["profiles"][p] = {
            "median": statistics.median(sims) if sims else None,
            "same_order": (sum(agree) / len(agree)) if agree else None,
            "points": len(pairs),
        }
    return out


# --- the study -------------------------------------------------------------------------


@dataclass
class Validation:
    grid: Grid
    profiles: dict[str, dict[str, Any]]
    rows: list[Row]
    #: What the kernel ran, as the first stored run recorded it.
    kernel: dict[str, Any] = field(default_factory=dict)
    #: How busy the machine was during the kernel's runs: per run, the share of CPU time
    #: spent on other (niced) work.
    other_load: list[float] = field(default_factory=list)
    #: The testbed's per-link timing noise given to the simulator
    #: (:func:`incastlab.real.testbed.simulator.jitter_from_probes`).
    jitter_s: float = 0.0
    #: Per repetition (over the points): the median share of CPU time the machine was busy
    #: and the median measured base RTT. Runs recorded on another day can differ in both.
    by_repetition: list[tuple[int, float | None, float | None]] = field(default_factory=list)
    #: The testbed's client stalls the simulator replays (:func:`.runs.testbed_stalls`).
    stalls: list[StallTrace] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return list(self.profiles)

    def summary(self) -> list[ProfileSummary]:
        """Each profile's summary, then (where the stalls were replayed) each profile's
        without them, under :func:`unstalled`'s name: how much the figures owe to the replay,
        whose traces come from this grid's own single-flow runs."""
        names = [*self.names, *(unstalled(n) for n in self.names)]
        return summarize(self.rows, [n for n in names if any(n in r.sim for r in self.rows)])

    def orderings(self) -> list[Ordering]:
        return orderings(self.rows, self.names)


def validate(
    grid: Grid,
    real_dir: Path,
    profiles: Mapping[str, Mapping[str, Any]],
    *,
    simulate: Callable[[Scenario], Result] | None = None,
    say: Callable[[str], None] = lambda _m: None,
) -> Validation:
    """Build every point's row from the stored kernel runs and fresh simulator runs (the
    kernel's grid must have been run, see :func:`.runs.run_real`; missing runs are left out)."""
    stored = {p: load_real(real_dir, p, grid.repeat) for p in grid.points()}
    every = measured_rtt_s([r for rs in stored.values() for r in rs])
    jitter = jitter_from_probes([r for rs in stored.values() for r in rs]) or 0.0
    stalls = testbed_stalls(stored)
    rows = []
    for p, real in stored.items():
        if not real:  # nothing to referee this point against
            continue
        rtt = measured_rtt_s(real) or every
        row = Row(p, rtt, [r.goodput_bps for r in real], {})
        row.real_timeouts = [r.timeouts for r in real]
        row.real_probes = [
            int(r.report.get("kernel_counters", {}).get("TCPLossProbes", 0)) for r in real
        ]
        for name, o in profiles.items():
            sim = functools.partial(run_sim, p, grid, rtt or FALLBACK_RTT_S, o, jitter)
            got = sim(simulate=simulate, stalls=stalls)
            row.sim[name] = [measured_goodput_bps(r, grid.warmup) for r in got.results]
            row.sim_timeouts[name] = [r.timeouts for r in got.results]
            if got.missing:
                row.missing[name] = got.missing
            if stalls and not got.missing:
                plain = sim(simulate=simulate)
                row.sim[unstalled(name)] = [
                    measured_goodput_bps(r, grid.warmup) for r in plain.results
                ]
        rows.append(row)
        say(f"{p.key}: simulated")
    runs = [r for rs in stored.values() for r in rs]
    check_kernel_clock(kernel_facts(runs))
    load = [float(m["cpu_nice"]) for r in runs if "cpu_nice" in (m := r.report.get("machine", {}))]
    return Validation(
        replace(grid),
        {k: dict(v) for k, v in profiles.items()},
        rows,
        kernel_facts(runs),
        load,
        jitter,
        conditions_by_repetition(stored.values(), grid.repeat),
        stalls,
    )
