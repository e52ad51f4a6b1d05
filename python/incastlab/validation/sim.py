"""The simulator's side of the validation grid: each point simulated once per seed with the
testbed's description (:func:`incastlab.real.testbed.simulator.simulator_overrides`), the
kernel's client stalls and a profile's overrides."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from incastlab.real.testbed.simulator import simulator_overrides
from incastlab.validation.grid import SIM_SEEDS, Grid, Point, scenario
from incastlab.validation.runs import StallTrace, point_stalls

if TYPE_CHECKING:
    from incastlab.result import Result
    from incastlab.scenario import Scenario


def measured_goodput_bps(r: Result, warmup: int) -> float:
    """A simulated run's goodput over its blocks after the first ``warmup``, as the kernel's
    client measures it."""
    times = r.block_times_s
    if warmup <= 0 or len(times) <= warmup:
        return r.goodput_bps
    per_block = float(r.report.get("app_bytes", 0)) / len(times)
    measured = times[warmup:]
    return per_block * 8 * len(measured) / sum(measured) if sum(measured) > 0 else 0.0


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
    :func:`incastlab.real.testbed.simulator.jitter_from_probes`) and client stalls (a trace
    of ``stalls`` per seed, see :func:`.runs.point_stalls`), the kernel's clock and the
    profile's ``overrides``, once per seed; a refusal or failure is kept as the reason."""
    if simulate is None:
        from incastlab import simulate as simulate_

        simulate = simulate_
    extra = {
        **simulator_overrides(rtt_s, jitter_s),
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
