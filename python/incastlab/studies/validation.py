"""The emulator as the referee: the simulator against this machine's real Linux TCP on a grid.

The grid (:data:`FULL`): 100 Mbps, 64 KB SRU, 32 KB and 128 KB switch ports, N = 1 … 32
senders, RTOmin 200 ms and 1 ms, CUBIC and BBR, 30 blocks per run. Each point runs

- on the real kernel (:mod:`incastlab.real.emulate`) ``repeat`` times (the seed only labels a
  repetition), every run stored as it finishes, one Parquet file per point and repetition, so
  a rerun resumes and the stored runs are the evidence;
- on the simulator, once per *profile* with each of :data:`SIM_SEEDS`, given the testbed's
  measured round trip (``topology.rtt``), framing, timing noise, tbf-shaped NICs and port,
  its client's stalls (a single-flow kernel run's pauses per seed, and once more without
  them, so the summary shows what the figures owe to the replay) and this kernel's 4 ms
  timer tick (HZ = 250): ``classic``
  measures RTTs on that clock too, as the papers' kernels did; ``linux`` measures them in µs
  and runs its timers on the tick. A profile is a name and the scenario overrides it stands
  for; another name means ``tcp.profile = <name>``. A point the simulator refuses is recorded
  as missing for that profile, with the reason.

Per point: the kernel's median, min and max goodput over repetitions, each profile's median
over seeds, sim / real − 1, and whether the simulator's median lies inside the kernel's
min–max. The summary: per profile the median |sim / real − 1| and the share of points inside;
and at 2–16 senders with RTOmin 200 ms the ratio of BBR's goodput to CUBIC's, in the kernel
and in each profile (below 1: BBR collapses harder).

Everything is written under the output directory: ``README.md`` (the command, the summary,
the table, the points outside with a reason column for people to fill), ``validation.png`` and
``validation.csv``.
"""

from __future__ import annotations

import csv
import functools
import math
import random
import statistics
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.studies.compare import inside, spread

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.result import Result
    from incastlab.scenario import Scenario

#: What the simulator is always given for this testbed: the kernel's timer tick (HZ = 250).
KERNEL_CLOCK = "4ms"
#: The testbed's framing, given to the simulator like its RTT: tbf charges a packet its
#: length as the veth sends it, a 1514-byte frame for 1448 bytes of payload (Ethernet 14,
#: IP 20, TCP with timestamps 32; no FCS, preamble or inter-frame gap).
TESTBED_FRAMING = {"tcp.header_bytes": "66B", "tcp.phy_overhead": "0B"}


def testbed_nic() -> dict[str, Any]:
    """The testbed's NICs as the simulator takes them: one segment per GSO packet (the
    emulator's ``GSO_MAX_SEGS``) means no TSO bursts, whatever the profile's default; and
    each NIC is a veth shaped by tbf (the emulator's ``TBF_BURST``), not a wire: after an
    idle spell two frames leave at once where a wire spaces them a frame time apart. The
    pair decides which packet gets the slot the bottleneck port just freed: with wires, at
    16 senders the simulator lost fast retransmissions more often than new data (17% vs
    14%) and took twice the kernel's RTOs, where the kernel lost them less often (11%)."""
    from incastlab.real.emulate import GSO_MAX_SEGS, TBF_BURST

    return {"tcp.tso": GSO_MAX_SEGS > 1, "topology.nic_burst": f"{TBF_BURST}B"}


def testbed_port() -> dict[str, Any]:
    """The testbed's switch port as the simulator takes it: the port towards the receiver is
    a veth shaped by tbf with the NICs' two-frame bucket (the emulator's ``TBF_BURST``), not
    a wire, so two frames can reach the receiver back to back, and a delivery-rate sample
    over such a pair (BBR's) reads far above the link. ``topology.port_burst`` shapes every
    port towards a host; the testbed's others are plain veths that carry only requests and
    ACKs. Like the stall replay, it was kept for its effect on this grid's own points (an
    earlier trial, before the stall replay and the timer wheel, moved the grid away)."""
    from incastlab.real.emulate import TBF_BURST

    return {"topology.port_burst": f"{TBF_BURST}B"}


def testbed_protocol() -> dict[str, str]:
    """The testbed's application protocol, given to the simulator like its framing: requests
    and response headers of the block protocol's header size. The header decides which
    segment ends a response and so whether a lost last segment leaves one packet or two
    outstanding: a probe after 2·SRTT, or one at the RTO's time."""
    from incastlab import _core

    size = f"{_core.PROTOCOL_HEADER_BYTES}B"
    return {"workload.request_size": size, "workload.response_header": size}


#: Seeds of the simulator per point and profile: as many as the grid's kernel runs, since
#: each seed replays a run of the testbed's client stalls drawn at random
#: (:func:`point_stalls`; two seeds may draw the same run).
SIM_SEEDS = tuple(range(1, 11))
#: Profiles with overrides beyond ``tcp.profile = <name>``: each takes this kernel's tick its
#: own way (another name means just ``tcp.profile = <name>``).
PROFILES: dict[str, dict[str, Any]] = {
    # The papers' kernels measured RTTs on the jiffy clock too.
    "classic": {"tcp.profile": "classic", "tcp.clock_granularity": KERNEL_CLOCK},
    # Linux 5.x/6.x: RTTs in µs, timers on this kernel's 4 ms jiffies (the profile's own).
    "linux": {"tcp.profile": "linux", "tcp.timer_granularity": KERNEL_CLOCK},
}
#: The BBR-against-CUBIC question: these sender counts, with this RTOmin.
ORDERING_SENDERS = (2, 4, 8, 16)
ORDERING_RTO = "200ms"
#: BBR / CUBIC within this of 1 is a tie: neither collapses harder.
TIE = 0.05
#: Used when a point has no measured RTT (only if no stored run recorded one).
FALLBACK_RTT_S = 50e-6


@dataclass(frozen=True)
class Grid:
    """The scenarios validated: every combination of buffer, RTOmin, cc and sender count."""

    link: str = "100Mbps"
    sru: str = "64KB"
    buffers: tuple[str, ...] = ("32KB", "128KB")
    rto_mins: tuple[str, ...] = ("200ms", "1ms")
    ccs: tuple[str, ...] = ("cubic", "bbr")
    senders: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
    blocks: int = 30
    #: Blocks run first and not measured, by the kernel's client and the simulator alike:
    #: the first block's slow-start overshoot belongs to no steady state.
    warmup: int = 1
    repeat: int = 10
    #: The first repetition's seed; repetition k has seed + k.
    seed: int = 1

    def points(self) -> list[Point]:
        return [
            Point(b, r, c, n)
            for b in self.buffers
            for r in self.rto_mins
            for c in self.ccs
            for n in self.senders
        ]


FULL = Grid()
#: A tiny grid to try the study (and for the tests): two points per cc, two repetitions.
QUICK = Grid(buffers=("32KB",), rto_mins=("200ms",), senders=(1, 4), blocks=5, repeat=2)


@dataclass(frozen=True)
class Point:
    buffer: str
    rto_min: str
    cc: str
    senders: int

    @property
    def key(self) -> str:
        """A file-name-safe name: ``32KB-200ms-cubic-N04``."""
        return f"{self.buffer}-{self.rto_min}-{self.cc}-N{self.senders:02d}"

    def overrides(self, grid: Grid) -> dict[str, Any]:
        return {
            "topology.senders": self.senders,
            "topology.link": grid.link,
            "topology.buffer": self.buffer,
            "tcp.rto_min": self.rto_min,
            "tcp.congestion_control": self.cc,
            "workload.sru": grid.sru,
            "workload.blocks": grid.blocks,
        }


def scenario(
    point: Point, grid: Grid, *, seed: int, extra: Mapping[str, Any] | None = None
) -> Scenario:
    """The point's scenario with ``seed`` and ``extra`` overrides (raises ScenarioError)."""
    from incastlab.scenario import apply_overrides, from_dict

    o = {**point.overrides(grid), "seed": seed, **dict(extra or {})}
    return from_dict(apply_overrides({}, o))


def profile_overrides(names: Iterable[str], sets: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """Profiles by name: :data:`PROFILES`' overrides, or ``tcp.profile = <name>``, plus
    ``NAME:KEY=VALUE`` items of ``sets`` (``--profile-set``)."""
    from incastlab.series import parse_assignment

    out = {n: dict(PROFILES.get(n, {"tcp.profile": n})) for n in names}
    for item in sets:
        name, sep, assignment = item.partition(":")
        if not sep or not name:
            raise ValueError(f"--profile-set: expected NAME:KEY=VALUE, got {item!r}")
        key, value = parse_assignment(assignment, "--profile-set")
        out.setdefault(name, {})[key] = value
    if not out:
        raise ValueError("--profiles: name at least one profile (e.g. classic)")
    return out


# --- the real kernel's runs, stored one file per point and repetition ---------------------


def real_file(real_dir: Path, point: Point, rep: int) -> Path:
    return real_dir / f"{point.key}-r{rep}.parquet"


def load_real(real_dir: Path, point: Point, repeat: int) -> list[Result]:
    """The stored repetitions 0 … repeat−1 of ``point`` (those that exist)."""
    from incastlab.result.store import read_results

    out = []
    for rep in range(repeat):
        path = real_file(real_dir, point, rep)
        if path.exists():
            out += read_results(path)
    return out


def run_real(
    grid: Grid,
    real_dir: Path,
    backend: Backend,
    *,
    say: Callable[[str], None] = lambda _m: None,
) -> list[str]:
    """Run every missing repetition of every point on ``backend`` (the emulator), storing
    each as it finishes; returns the failures (one line each), the grid goes on after one."""
    real_dir.mkdir(parents=True, exist_ok=True)
    jobs = [
        (f"{p.key} r{rep}", real_file(real_dir, p, rep), scenario(p, grid, seed=grid.seed + rep))
        for p in grid.points()
        for rep in range(grid.repeat)
    ]

    def summary(r: Result) -> str:
        wall = r.report.get("wall_s", 0)
        return f"{r.goodput_bps / 1e6:.1f} Mbps, {r.timeouts} timeouts, {wall:.1f} s"

    return run_missing(jobs, backend, say, summary)


def run_missing(
    jobs: Sequence[tuple[str, Path, Scenario]],
    backend: Backend,
    say: Callable[[str], None],
    summary: Callable[[Result], str],
) -> list[str]:
    """Run each (name, file, scenario) whose file does not exist yet on ``backend`` and store
    it there as it finishes (written aside, then renamed: an interrupted run leaves no half
    file); returns the failures, one line each: the others go on after one."""
    from incastlab.backends import BackendFailed
    from incastlab.result.store import write_parquet

    todo = [(key, path, sc) for key, path, sc in jobs if not path.exists()]
    failures = []
    for i, (key, path, sc) in enumerate(todo, 1):
        try:
            r = backend.run(sc)
        except BackendFailed as e:
            failures.append(f"{key}: {e}")
            say(f"[{i}/{len(todo)}] {key}: failed: {e}")
            continue
        tmp = path.with_suffix(".tmp")
        write_parquet([r], tmp)
        tmp.replace(path)
        say(f"[{i}/{len(todo)}] {key}: {summary(r)}")
    return failures


def measured_rtt_s(results: Sequence[Result]) -> float | None:
    """The median of the runs' measured base RTTs."""
    rtts = [
        r.report.get("emulated", {}).get("rtt_measured_s")
        for r in results
        if r.report.get("emulated", {}).get("rtt_measured_s")
    ]
    return statistics.median(rtts) if rtts else None


def expected_normal_range(n: int) -> float:
    """d2(n): the expected range of ``n`` draws of a standard normal (the control-chart
    constant; 3.735 for n = 20), integrated numerically: E[R] = ∫ 1 − Φⁿ − (1 − Φ)ⁿ dx."""
    if n < 2:
        raise ValueError("a range needs at least two samples")
    step, total, x = 0.01, 0.0, -8.0
    while x <= 8.0:
        phi = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        total += (1 - phi**n - (1 - phi) ** n) * step
        x += step
    return total


def testbed_jitter_s(results: Sequence[Result]) -> float | None:
    """The testbed's per-link timing noise, as the simulator's ``topology.link_jitter``
    (each crossing uniform in delay ± J/2): an ICMP echo crosses four links, so its RTT's
    standard deviation is J/√3; each run's probe gives a standard deviation from its range
    (max − min over its samples, divided by d2), and the median over runs is taken, since
    the testbed is the same for every point. None without probes."""
    sigmas = []
    for r in results:
        probe = r.report.get("emulated", {}).get("rtt_probe") or {}
        n = int(probe.get("samples", 0))
        if n >= 2 and "max_s" in probe and "min_s" in probe:
            sigmas.append((probe["max_s"] - probe["min_s"]) / expected_normal_range(n))
    return math.sqrt(3) * statistics.median(sigmas) if sigmas else None


#: A stall trace: the point whose single-flow run it comes from, and the client's pause after
#: each block of that run, seconds.
StallTrace = tuple[Point, list[float]]


def testbed_stalls(stored: Mapping[Point, Sequence[Result]]) -> list[StallTrace]:
    """The testbed's client stalls, one trace per single-flow kernel run: per block, how much
    longer it took than the run's median block (never less than 0), plus the run's time
    between blocks shared evenly (its duration less the blocks' sum). With one sender and no
    loss the network takes nearly the same time for every block (tens of µs apart, which the
    trace keeps), so what varies is the machine: a
    2-core machine shared with other work, whose client is not always scheduled when a
    block's last byte arrives. The simulator replays a trace as ``workload.think_times``."""
    out: list[StallTrace] = []
    for point, runs in stored.items():
        if point.senders != 1:
            continue
        for r in runs:
            times = list(r.block_times_s)
            if len(times) < 2:
                continue
            typical = statistics.median(times)
            between = max(0.0, r.duration_s - sum(times)) / len(times)
            out.append((point, [max(0.0, t - typical) + between for t in times]))
    return out


def point_stalls(traces: Sequence[StallTrace], point: Point, seed: int) -> list[float]:
    """The stall trace the simulator replays at ``point`` with ``seed``: one drawn from the
    single-flow runs of the other points (a single-flow point never replays its own runs),
    by a generator seeded with the point and the seed, so every rerun draws the same."""
    pool = [t for p, t in traces if p != point]
    if not pool:
        return []
    return random.Random(zlib.crc32(point.key.encode()) ^ seed).choice(pool)


def unstalled(profile: str) -> str:
    """The name under which a profile's runs without the replayed stalls are kept."""
    return f"{profile}, no stall replay"


def stalls_text(traces: Sequence[StallTrace]) -> str:
    """What the README says of the replayed client stalls, with their figures."""
    pauses = sorted(t for _, trace in traces for t in trace)
    if not pauses:
        return "No single-flow runs are stored, so the simulator's client never pauses."
    per_run = sorted(sum(trace) / len(trace) for _, trace in traces if trace)

    def us(x: float) -> str:
        return f"{x * 1e6:.0f} µs"

    def q(xs: Sequence[float], p: float) -> float:
        return xs[min(len(xs) - 1, int(p * len(xs)))]

    return (
        "And its client's stalls: the testbed is a 2-core machine shared with other work, "
        "and its client is not always scheduled when a block's last byte arrives. In the "
        f"{len(traces)} single-flow runs, where the network takes nearly the same time for "
        "every block (tens of µs apart), a block takes longer than the run's median block by "
        "a pause of median "
        f"{us(q(pauses, 0.5))}, p90 {us(q(pauses, 0.9))}, p99 {us(q(pauses, 0.99))}, max "
        f"{pauses[-1] * 1e3:.1f} ms (the time between blocks, shared evenly, included); "
        f"per run the mean pause is {us(per_run[0])}–{us(per_run[-1])} (median "
        f"{us(q(per_run, 0.5))}). Each seed of the simulator replays one such run's pauses "
        "after its blocks (`workload.think_times`), drawn from the other points' "
        "single-flow runs, so a single-flow point never replays its own. The traces come "
        "from this grid's own runs, so the summary gives each profile without them too (\"no "
        'stall replay"): the share inside owes much to them, most at the points at the '
        "link's rate, where a block's pause is the whole difference."
    )


def testbed_overrides(rtt_s: float, jitter_s: float) -> dict[str, Any]:
    """What the simulator is told about this testbed for a run whose idle RTT was ``rtt_s``:
    that RTT, the veths' timing noise (``jitter_s``, as far as the RTT allows; see
    :func:`testbed_jitter_s`), tbf's framing, the block protocol's messages, and the NICs and
    ports as tbf shapes them."""
    rtt_us = max(1, round(rtt_s * 1e6))
    return {
        "topology.rtt": f"{rtt_us}us",
        **testbed_protocol(),
        **testbed_nic(),
        **testbed_port(),
        "topology.link_jitter": f"{math.floor(point_jitter_s(jitter_s, rtt_us * 1e-6) * 1e9)}ns",
        **TESTBED_FRAMING,
    }


def point_jitter_s(jitter_s: float, rtt_s: float) -> float:
    """``jitter_s`` as a point with ``rtt_s`` can take it: at most twice the star's
    per-link delay (RTT / 4), so no crossing's delay is negative."""
    return min(jitter_s, rtt_s / 2)


def measured_goodput_bps(r: Result, warmup: int) -> float:
    """A simulated run's goodput over its blocks after the first ``warmup``, as the kernel's
    client measures it."""
    times = r.block_times_s
    if warmup <= 0 or len(times) <= warmup:
        return r.goodput_bps
    per_block = float(r.report.get("app_bytes", 0)) / len(times)
    measured = times[warmup:]
    return per_block * 8 * len(measured) / sum(measured) if sum(measured) > 0 else 0.0


# --- the simulator's runs ---------------------------------------------------------------


@dataclass
class SimRuns:
    """One profile's simulator results for a point, or why there are none."""

    results: list[Result] = field(default_factory=list)
    missing: str | None = None


def run_sim(
    point: Point,
    grid: Grid,
    rtt_s: float,
    overrides: Mapping[str, Any],
    jitter_s: float = 0.0,
    seeds: Sequence[int] = SIM_SEEDS,
    simulate: Callable[[Scenario], Result] | None = None,
    stalls: Sequence[StallTrace] = (),
) -> SimRuns:
    """The simulator on ``point`` with the testbed's RTT, timing noise (``jitter_s``, see
    :func:`testbed_jitter_s`) and client stalls (a trace of ``stalls`` per seed, see
    :func:`point_stalls`), the kernel's clock and the profile's ``overrides``, once per
    seed; a refusal or failure is kept as the reason."""
    if simulate is None:
        from incastlab import simulate as simulate_

        simulate = simulate_
    extra = {
        **testbed_overrides(rtt_s, jitter_s),
        # The kernel's client runs the warm-up blocks on top of those it measures.
        "workload.blocks": grid.blocks + grid.warmup,
        **overrides,
    }
    out = SimRuns()
    for seed in seeds:
        try:
            pauses = [f"{round(t * 1e9)}ns" for t in point_stalls(stalls, point, seed)]
            per_seed = {**extra, "workload.think_times": pauses} if pauses else extra
            out.results.append(simulate(scenario(point, grid, seed=seed, extra=per_seed)))
        except Exception as e:  # ScenarioError, SimulationError: one line, kept as missing
            out.results = []
            out.missing = str(e).splitlines()[0] if str(e) else type(e).__name__
            break
    return out


# --- per point, and the summary ---------------------------------------------------------


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
            "real_timeouts": _median_int(self.real_timeouts),
            "real_loss_probes": _median_int(self.real_probes),
        }
        for name in profiles:
            err = self.error(name)
            out[f"sim_{name}_mbps"] = mbps(self.sim_median(name))
            out[f"sim_{name}_vs_real"] = None if err is None else round(err, 3)
            out[f"sim_{name}_inside"] = self.inside(name)
            out[f"sim_{name}_timeouts"] = _median_int(self.sim_timeouts.get(name, []))
            out[f"sim_{name}_missing"] = self.missing.get(name)
        return out


def _median_int(values: Sequence[int]) -> float | None:
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
    #: The testbed's per-link timing noise given to the simulator (:func:`testbed_jitter_s`).
    jitter_s: float = 0.0
    #: Per repetition (over the points): the median share of CPU time the machine was busy
    #: and the median measured base RTT. Runs recorded on another day can differ in both.
    by_repetition: list[tuple[int, float | None, float | None]] = field(default_factory=list)
    #: The testbed's client stalls the simulator replays (:func:`testbed_stalls`).
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
    kernel's grid must have been run, see :func:`run_real`; missing runs are left out)."""
    stored = {p: load_real(real_dir, p, grid.repeat) for p in grid.points()}
    every = measured_rtt_s([r for rs in stored.values() for r in rs])
    jitter = testbed_jitter_s([r for rs in stored.values() for r in rs]) or 0.0
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


def conditions_by_repetition(
    stored: Iterable[Sequence[Result]], repeat: int
) -> list[tuple[int, float | None, float | None]]:
    """(repetition, median CPU busy share, median measured RTT in seconds) over the points:
    how the machine was when each repetition of the grid was recorded. Runs count in the
    order stored (:func:`load_real`): where a point misses a repetition, its later runs count
    one place earlier."""
    busy: list[list[float]] = [[] for _ in range(repeat)]
    rtt: list[list[float]] = [[] for _ in range(repeat)]
    for runs in stored:
        for rep, r in enumerate(runs[:repeat]):
            if (b := r.report.get("machine", {}).get("cpu_busy")) is not None:
                busy[rep].append(float(b))
            if x := r.report.get("emulated", {}).get("rtt_measured_s"):
                rtt[rep].append(float(x))
    return [
        (
            rep,
            statistics.median(busy[rep]) if busy[rep] else None,
            statistics.median(rtt[rep]) if rtt[rep] else None,
        )
        for rep in range(repeat)
        if busy[rep] or rtt[rep]
    ]


# --- what is written -------------------------------------------------------------------


def _mbps(x: float | None, digits: int = 1) -> str:
    return "-" if x is None or math.isnan(x) else f"{x / 1e6:.{digits}f}"


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.0f}%"


def write_csv(v: Validation, path: Path) -> Path:
    records = [r.record(v.names) for r in v.rows]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0]) if records else ["buffer"])
        w.writeheader()
        w.writerows(records)
    return path


def plot(v: Validation, path: Path) -> Path:
    """Goodput against N, facets buffer × RTOmin, hue cc: the kernel's min–max as a band
    (its median as dots), each profile as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from incastlab.plot import COLORS, save_figure

    g = v.grid
    fig, axes = plt.subplots(
        len(g.buffers),
        len(g.rto_mins),
        figsize=(2.5 + 4.2 * len(g.rto_mins), 1.0 + 3.2 * len(g.buffers)),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    styles = ["--", ":", "-.", (0, (5, 1, 1, 1))]
    link = _link_mbps(g.link)
    for i, buffer in enumerate(g.buffers):
        for j, rto in enumerate(g.rto_mins):
            ax = axes[i][j]
            for k, cc in enumerate(g.ccs):
                color = COLORS[k % len(COLORS)]
                rows = sorted(
                    (
                        r
                        for r in v.rows
                        if (r.point.buffer, r.point.rto_min, r.point.cc) == (buffer, rto, cc)
                    ),
                    key=lambda r: r.point.senders,
                )
                real = [r for r in rows if r.real]
                if real:
                    n = [r.point.senders for r in real]
                    lo = [(r.real_min or 0) / 1e6 for r in real]
                    hi = [(r.real_max or 0) / 1e6 for r in real]
                    ax.fill_between(n, lo, hi, color=color, alpha=0.18, lw=0)
                    med = [(r.real_median or 0) / 1e6 for r in real]
                    ax.plot(n, med, "o", color=color, ms=4, label=f"{cc}: Linux (min–max)")
                for m, name in enumerate(v.names):
                    pts = [(r.point.senders, r.sim_median(name)) for r in rows]
                    pts = [(n_, s) for n_, s in pts if s is not None]
                    if pts:
                        xs, ys = zip(*pts, strict=True)
                        ax.plot(
                            xs,
                            [y / 1e6 for y in ys],
                            linestyle=styles[m % len(styles)],
                            color=color,
                            lw=1.5,
                            label=f"{cc}: sim {name}",
                        )
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(g.senders))
            ax.set_xticklabels([str(s) for s in g.senders])
            ax.set_title(f"{buffer} port · RTOmin {rto}", fontsize=10)
            ax.grid(alpha=0.3)
            ax.spines[["top", "right"]].set_visible(False)
            if j == 0:
                ax.set_ylabel("goodput (Mbps)")
            if i == len(g.buffers) - 1:
                ax.set_xlabel("senders")
    for row in axes:
        for ax in row:
            ax.axhline(link, color="0.5", ls="--", lw=0.8)
            ax.set_ylim(0, link * 1.08)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", frameon=False, fontsize=9)
    fig.suptitle(
        f"Simulator vs Linux {v.kernel.get('release', '')}\n{g.link}, SRU {g.sru}, "
        f"{g.blocks} blocks, {g.repeat} kernel runs and {len(SIM_SEEDS)} seeds per point",
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0, 0.8, 1))
    return save_figure(fig, path)


def _link_mbps(link: str) -> float:
    from incastlab.units import parse_rate

    return parse_rate(link) / 1e6


def check_kernel_clock(kernel: Mapping[str, Any]) -> None:
    """Raise ValueError if the runs' kernel ticks at another HZ than :data:`KERNEL_CLOCK`,
    the tick the profiles give the simulator (its RTOmin rounding and timers depend on it)."""
    from incastlab.units import PS_PER_S, parse_time

    hz = kernel.get("hz")
    if hz and parse_time(KERNEL_CLOCK) * int(hz) != PS_PER_S:
        raise ValueError(
            f"the kernel runs ticked at HZ = {hz}, but the simulator is given {KERNEL_CLOCK} "
            "ticks (studies.validation.KERNEL_CLOCK): rerun the kernel's grid on a HZ = "
            f"{PS_PER_S // parse_time(KERNEL_CLOCK)} kernel or change the constant"
        )


def kernel_facts(results: Iterable[Result]) -> dict[str, Any]:
    """The kernel facts the first of ``results`` recorded: release, HZ, sysctls, offloads."""
    for r in results:
        if k := r.report.get("emulated", {}).get("kernel"):
            return dict(k)
    return {}


def command_line(grid: Grid, profiles: Sequence[str], real_dir: str, out: str) -> str:
    """The command that regenerates the study."""
    parts = ["sudo incast validate", f"--real-dir {real_dir}", f"--out {out}"]
    if grid == QUICK:
        parts.append("--quick")
    else:
        if grid.repeat != FULL.repeat:
            parts.append(f"--repeat {grid.repeat}")
        if grid.blocks != FULL.blocks:
            parts.append(f"--blocks {grid.blocks}")
        if grid.warmup != FULL.warmup:
            parts.append(f"--warmup {grid.warmup}")
    parts.append(f"--profiles {','.join(profiles)}")
    return " ".join(parts)


def read_reasons(path: Path) -> dict[tuple[str, str], str]:
    """People's explanations of points outside the kernel's min–max: a CSV with columns
    profile (``*``: every profile), buffer, rto_min, cc, senders and why; keyed by
    (profile, point key)."""
    if not path.exists():
        return {}
    out = {}
    with path.open(encoding="utf-8", newline="") as f:
        for rec in csv.DictReader(f):
            p = Point(rec["buffer"], rec["rto_min"], rec["cc"], int(rec["senders"]))
            out[(rec["profile"], p.key)] = rec["why"].strip()
    return out


def markdown(
    v: Validation, command: str, reasons: Mapping[tuple[str, str], str] | None = None
) -> str:
    g, names, kernel = v.grid, v.names, v.kernel
    reasons = reasons or {}
    half = max((s.half_runs for s in v.summary()), default=0)
    lines = [
        "# Validation: the simulator against real Linux TCP",
        "",
        f"The simulator's goodput against this machine's Linux {kernel.get('release', '?')} "
        f"(HZ = {kernel.get('hz', '?')}) in network namespaces (`incast emulate`): "
        f"{g.link}, SRU {g.sru}, ports of {' and '.join(g.buffers)}, "
        f"N = {', '.join(map(str, g.senders))}, RTOmin {' and '.join(g.rto_mins)}, "
        f"{' and '.join(g.ccs)}, {g.blocks} blocks per run, {g.repeat} kernel runs per point, "
        f"{len(SIM_SEEDS)} simulator seeds per point and profile.",
        "",
        "Regenerate (the kernel's runs are stored under the real directory, one Parquet file "
        "per point and repetition; a rerun runs only what is missing):",
        "",
        "```sh",
        command,
        "```",
        "",
        "The simulator is given the testbed's measured base RTT (the median of 20 ICMP echoes "
        "on the idle testbed, timed by the kernel; `rtt_us` below) and the kernel's "
        f"{KERNEL_CLOCK} timer tick (HZ = {kernel.get('hz', '?')}), as each profile takes it, "
        "and the shaper's "
        "framing: tbf charges each packet the 1514 bytes the veth sends for 1448 bytes of "
        "payload, with no FCS, preamble or gap ("
        + ", ".join(f"`{k} = {v!r}`" for k, v in TESTBED_FRAMING.items())
        + "), and its timing noise: packets cross the testbed's veth pairs through softirqs, "
        "not at fixed delays, so every link's delay varies uniformly by "
        f"±{v.jitter_s * 1e6 / 2:.1f} µs (`topology.link_jitter = "
        f"'{v.jitter_s * 1e6:.1f}us'`, at most RTT / 2 at a point), the spread of the "
        "probes' RTTs (their range over 20 echoes ÷ d2, the median over runs, × √3 for "
        "four crossings). With fixed delays two senders at line rate lock each other out of "
        'the drop-tail port (the phase effect of S. Floyd and V. Jacobson, "On Traffic Phase '
        'Effects in Packet-Switched Gateways", Internetworking: Research and Experience, '
        "1992), which the kernel does not show. The block protocol's requests and response "
        "headers are given too ("
        + ", ".join(f"`{k} = {v!r}`" for k, v in testbed_protocol().items())
        + "): a response's 24-byte header leaves as a segment of its own, so the receiver, "
        "which ACKs every second segment, has not yet ACKed the last full segment when the "
        "short last one is lost, and the probe for two outstanding segments comes after "
        "2·SRTT instead of at the RTO's time. So are its NICs, one segment per GSO packet ("
        + ", ".join(f"`{k} = {v!r}`" for k, v in testbed_nic().items())
        + "), and its switch port towards the receiver, tbf with the same two-frame bucket, "
        "which lets two frames reach the receiver back to back, so a delivery-rate sample over "
        "them (BBR's) reads above the link (the simulator shapes every port towards a host so; "
        "the testbed's ports towards the senders are plain veths, and carry only requests and "
        "ACKs: "
        + ", ".join(f"`{k} = {v!r}`" for k, v in testbed_port().items())
        + "). "
        + stalls_text(v.stalls)
        + " Profiles: "
        + ", ".join(f"`{n}` ({_overrides_text(o)})" for n, o in v.profiles.items())
        + ".",
        "",
        "![validation](validation.png)",
        "",
        "Shaded: the kernel's min–max over runs (dots: its median); lines: the simulator's "
        "median over seeds, one line style per profile.",
        "",
        "## Summary",
        "",
        f"| profile | points | missing | median \\|sim/real − 1\\| | inside the kernel's min–max "
        f"({v.grid.repeat} runs) | inside the first {half} runs' min–max | "
        f"inside or within {100 * NEAR_RANGE:.0f}% of it |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in v.summary():
        lines.append(
            f"| {s.profile} | {s.points} | {s.missing} | "
            f"{'-' if s.median_abs_error is None else f'{100 * s.median_abs_error:.0f}%'} | "
            f"{_share(s.inside_share)} | {_share(s.inside_share_half)} | "
            f"{_share(s.near_share)} |"
        )
    missing = sorted({why for r in v.rows for why in r.missing.values()})
    if missing:
        lines += ["", "Missing: " + "; ".join(f"`{m}`" for m in missing) + "."]
    ords = v.orderings()
    if ords:
        osum = ordering_summary(ords, names)
        lines += [
            "",
            f"## BBR against CUBIC ({ORDERING_RTO} RTOmin, "
            f"N = {', '.join(map(str, ORDERING_SENDERS))})",
            "",
            f"BBR's goodput over CUBIC's (medians); below 1, BBR collapses harder (within "
            f"{100 * TIE:.0f}% of 1: neither). The kernel: "
            f"median ratio {_ratio(osum['real'])} ({harder(osum['real'])} collapses harder).",
            "",
            "| buffer | N | real | " + " | ".join(f"sim {n}" for n in names) + " |",
            "|---|---|---|" + "---|" * len(names),
        ]
        for o in ords:
            sims = " | ".join(_ratio(o.sim[n]) for n in names)
            lines.append(f"| {o.buffer} | {o.senders} | {_ratio(o.real)} | {sims} |")
        for n in names:
            po = osum["profiles"][n]
            if po["points"]:
                lines.append(
                    f"\n`{n}`: median ratio {_ratio(po['median'])}; names the same cc as "
                    f"collapsing harder at {100 * po['same_order']:.0f}% of {po['points']} "
                    "points."
                )
            else:
                lines.append(f"\n`{n}`: no BBR runs (the simulator does not run BBR).")
    lines += [
        "",
        "## Every point",
        "",
        "Goodput in Mbps: the kernel's median [min–max] over runs; each profile's median over "
        "seeds and sim / real − 1 (✓: inside the kernel's min–max).",
        "",
        "| buffer | RTOmin | cc | N | RTT µs | real | " + " | ".join(names) + " |",
        "|---|---|---|---|---|---|" + "---|" * len(names),
    ]
    for r in v.rows:
        cells = []
        for n in names:
            if n in r.missing:
                cells.append("missing")
                continue
            mark = " ✓" if r.inside(n) else ""
            cells.append(f"{_mbps(r.sim_median(n))} ({_pct(r.error(n))}){mark}")
        real = f"{_mbps(r.real_median)} [{_mbps(r.real_min)}–{_mbps(r.real_max)}]"
        rtt = "-" if r.rtt_s is None else f"{r.rtt_s * 1e6:.0f}"
        p = r.point
        lines.append(
            f"| {p.buffer} | {p.rto_min} | {p.cc} | {p.senders} | {rtt} | {real} | "
            + " | ".join(cells)
            + " |"
        )
    for s in summarize(v.rows, v.names):  # the profiles as run, stalls replayed
        if not s.outside:
            continue
        lines += [
            "",
            f"## Points outside the kernel's min–max: `{s.profile}`",
            "",
            "Off the range: how far the simulator's median lies beyond the nearer end of the "
            "kernel's min–max. RTOs per run (medians): the kernel's, with its tail-loss probes "
            "after the slash, and the simulator's. Why: from `reasons.csv` beside this file, "
            "written by people (kept when the study is rerun).",
            "",
            "| buffer | RTOmin | cc | N | real [min–max] | sim | sim / real − 1 | off the range | "
            "RTOs real / TLP | RTOs sim | why |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in s.outside:
            p = r.point
            lines.append(
                f"| {p.buffer} | {p.rto_min} | {p.cc} | {p.senders} | "
                f"{_mbps(r.real_median)} [{_mbps(r.real_min)}–{_mbps(r.real_max)}] | "
                f"{_mbps(r.sim_median(s.profile))} | {_pct(r.error(s.profile))} | "
                f"{_pct_fine(r.beyond_range(s.profile))} | "
                f"{_num(_median_int(r.real_timeouts))} / {_num(_median_int(r.real_probes))} | "
                f"{_num(_median_int(r.sim_timeouts.get(s.profile, [])))} | "
                + (reasons.get((s.profile, p.key)) or reasons.get(("*", p.key)) or "")
                + " |"
            )
    lines += ["", "## Notes on the testbed", "", *NOTES]
    if kernel:
        sysctls = kernel.get("sysctls", {})
        lines += [
            "",
            "## What the kernel ran",
            "",
            "Recorded by every run (`report.emulated.kernel`); the first run's:",
            "",
            "- servers' congestion control read back from their sockets (`ss -tin`): "
            f"`{kernel.get('servers_congestion_control')}` (per point: the point's cc)",
            "- sysctls of the sender namespaces: "
            + ", ".join(f"`{k.removeprefix('net.ipv4.')}={v_}`" for k, v_ in sysctls.items())
            + " (`tcp_congestion_control` and `tcp_rto_min_us` are the namespaces' defaults; "
            "the routes' `congctl` and `rto_min` and the sockets' TCP_CONGESTION override them)",
            "- offloads of a sender's veth: "
            + _offloads_text(kernel.get("offloads", {}).get("sender eth0", {})),
        ]
    if v.by_repetition:
        lines.append(
            "- the machine during each repetition of the grid (medians over the points; "
            "`report.machine.cpu_busy`, `report.emulated.rtt_measured_s`): "
            + "; ".join(
                f"run {rep + 1}: CPUs {_share(b)} busy, RTT "
                + ("-" if t is None else f"{t * 1e6:.0f} µs")
                for rep, b, t in v.by_repetition
            )
        )
    if v.other_load:
        lines.append(
            "- other work on the machine's CPUs during the kernel's runs (`report.machine`, "
            f"niced): median {100 * statistics.median(v.other_load):.0f}%, "
            f"max {100 * max(v.other_load):.0f}% of CPU time"
        )
    return "\n".join(lines) + "\n"


#: What a reader of the table should know about the kernel's runs.
NOTES = [
    "- No netem on this machine: the base RTT is the veths' and the CPUs' (tens of µs), "
    "measured per run and given to the simulator; the shapers are tbf (2-frame bucket) on "
    "every NIC and on the switch port towards the receiver, whose byte limit is the port "
    "buffer. The hosts' NICs take one segment per GSO packet (`gso_max_segs 1`): tbf keeps "
    "a GSO packet within its bucket whole, so two-segment packets crossed the port as one "
    "queue entry, dropped or kept together, as no switch treats a NIC's frames.",
    "- Every socket runs the point's congestion control from its first segment: it is a "
    "route metric (`congctl`) as well as TCP_CONGESTION. A socket that starts with the "
    "host's default (bbr on this machine) and is switched by TCP_CONGESTION keeps the "
    "pacing BBR asked for (the kernel's `tcp_reinit_congestion_control` leaves "
    "`sk_pacing_status` set): such a CUBIC is paced. In an A/B at N = 16, 32 KB, RTOmin "
    "200 ms it dropped about 28% fewer packets and took about 25% fewer RTOs, at the same "
    "goodput.",
    "- The kernel's RTO counter (`TCPTimeouts`) misses stalls of a tail-loss probe: with one "
    "segment outstanding, Linux arms the probe for 2·SRTT + RTOmin, capped at the RTO, so "
    "a lost last segment costs about an RTO's time counted as a probe (`TCPLossProbes`). At "
    "RTOmin 200 ms one such stall costs a 30-block run of a small fan-in up to 40% of its "
    "goodput with no RTO counted.",
    "- An RTOmin of 1 ms is 4 ms on this kernel: a route's `rto_min` is kept in jiffies "
    "(`dst_metric_rtt`), one jiffy at HZ = 250. The simulator keeps RTOmin in whole timer "
    "ticks the same way (`tcp.timer_granularity = '4ms'` here).",
    "- The machine has 2 cores, shared with other work (builds) during the runs; each run "
    "records the share of CPU time that other work took (`report.machine`).",
]


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def _pct_fine(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _overrides_text(o: Mapping[str, Any]) -> str:
    return ", ".join(f"`{k} = {v!r}`" for k, v in o.items()) or "no overrides"


def _offloads_text(o: Mapping[str, Any]) -> str:
    eth = o.get("ethtool", {})
    keys = (
        "tcp-segmentation-offload",
        "generic-segmentation-offload",
        "generic-receive-offload",
        "large-receive-offload",
    )
    parts = [f"{k} {eth[k]}" for k in keys if k in eth]
    parts += [f"{k} {o[k]}" for k in ("gso_max_size", "tso_max_size") if k in o]
    return ", ".join(parts) or "not recorded"


def write(v: Validation, out: Path, command: str) -> list[Path]:
    """README.md, validation.csv and validation.png under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    readme = out / "README.md"
    reasons = read_reasons(out / "reasons.csv")
    readme.write_text(markdown(v, command, reasons), encoding="utf-8")
    return [readme, write_csv(v, out / "validation.csv"), plot(v, out / "validation.png")]
