"""Jobs on the shared cluster under two RTOmin values: completion times, side by side.

:func:`replay` is the one runner behind the stand-alone jobs (one job alone on the cluster) and
the trace replay (thousands of jobs sharing its slots): it collects every fan-in the jobs' tasks
need, simulates the distinct ones at packet level (``workers`` at once), then runs the scheduler
once per RTOmin.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from incastlab.jobs.hadoop import MACHINES, HadoopConfig, Machines
from incastlab.jobs.job import Job, Plan, plan
from incastlab.jobs.network import IDLE, Fabric, Load, Network, Transfer
from incastlab.jobs.scheduler import Outcome, Policy, run

#: The article's two TCPs: Linux's default RTOmin and its 1 ms-min-RTO kernel.
RTO_MINS = ("200ms", "1ms")


class _Unloaded:
    """A network that moves bytes and messages in no time: what a job takes without its
    transfers."""

    def time_ps(self, f: Transfer) -> int:
        return 0

    def message_sums_ps(
        self, load: Load, counts: Sequence[int], key: str, busy: float = 1.0
    ) -> list[int]:
        return [0] * len(counts)

    def line_rate_ps(self, nbytes: int) -> int:
        return 0


class _Recorder(_Unloaded):
    """A stand-in network that notes the transfers and message loads a plan asks for."""

    def __init__(self) -> None:
        self.seen: set[Transfer] = set()
        self.loads: set[Load] = set()

    def time_ps(self, f: Transfer) -> int:
        self.seen.add(f)
        return 0

    def message_sums_ps(
        self, load: Load, counts: Sequence[int], key: str, busy: float = 1.0
    ) -> list[int]:
        self.loads.add(load)
        if busy < 1:
            self.loads.add(IDLE)
        return [0] * len(counts)


@dataclass
class Replay:
    """Every job's outcome under each RTOmin, and what the run cost."""

    jobs: list[Job]
    config: HadoopConfig
    fabric: Fabric
    policy: Policy
    #: RTOmin -> one outcome per job, in order.
    outcomes: dict[str, list[Outcome]]
    #: Each job alone with a network that takes no time (Amdahl's non-network part).
    unloaded: list[Outcome]
    simulated: int = 0
    wall_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    def completion_s(self, rto_min: str) -> list[float]:
        return [o.completion_ps / 1e12 for o in self.outcomes[rto_min]]


def replay(
    jobs: Sequence[Job],
    config: HadoopConfig,
    *,
    fabric: Fabric | None = None,
    rto_mins: Sequence[str] = RTO_MINS,
    policy: Policy = "fair",
    machines: Machines = MACHINES,
    cache: Path | None = None,
    workers: int = 1,
    progress: Callable[[str, int, int], None] | None = None,
    alone: bool = False,
) -> Replay:
    """Run ``jobs`` under each RTOmin. With ``alone``, each job runs by itself on the cluster
    (the stand-alone experiments); otherwise they share it from their submit times."""
    fabric = fabric or Fabric()
    t0 = time.perf_counter()
    rec = _Recorder()
    for j in jobs:
        plan(j, config, rec, machines)
    outcomes: dict[str, list[Outcome]] = {}
    simulated = 0
    for rto in rto_mins:
        net = Network(rto, fabric, cache)
        simulated += net.prepare(
            rec.seen, rec.loads, workers=workers, progress=_for_rto(progress, rto)
        )
        outcomes[rto] = _schedule([plan(j, config, net, machines) for j in jobs], policy, alone)
    unloaded = _schedule([plan(j, config, _Unloaded(), machines) for j in jobs], policy, True)
    return Replay(
        list(jobs),
        config,
        fabric,
        policy,
        outcomes,
        unloaded,
        simulated,
        time.perf_counter() - t0,
    )


def _for_rto(
    progress: Callable[[str, int, int], None] | None, rto: str
) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    report = progress
    return lambda done, total: report(rto, done, total)


def _schedule(plans: list[Plan], policy: Policy, alone: bool) -> list[Outcome]:
    if alone:
        return [run([p], policy)[0] for p in plans]
    return run(plans, policy)
