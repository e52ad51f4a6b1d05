"""The kernel's runs of a validation study, stored one Parquet file per run as each finishes (a
rerun runs only what is missing), and what the studies read from them: the measured base RTT,
the kernel's facts, the machine's conditions and the client's stalls."""

from __future__ import annotations

import random
import statistics
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.validation.grid import Grid, Point, scenario

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.result import Result
    from incastlab.scenario import Scenario


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


def kernel_facts(results: Iterable[Result]) -> dict[str, Any]:
    """The kernel facts the first of ``results`` recorded: release, HZ, sysctls, offloads."""
    for r in results:
        if k := r.report.get("emulated", {}).get("kernel"):
            return dict(k)
    return {}


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
        "And its client's stalls: the testbed has two cores shared with other work, "
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
