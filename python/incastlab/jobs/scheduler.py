"""Jobs sharing the cluster's task slots: the JobTracker's scheduling, event by event.

The cluster has ``workers · map_slots`` map slots and ``workers · reduce_slots`` reduce slots.
A job's map tasks may start once it is submitted (after its start-up), its reduce tasks once all
its maps are done (no early shuffle: mapred.reduce.slowstart is not modelled, so the shuffle is
all on the critical path). A free slot goes, under ``"fifo"`` (Hadoop 0.18's only scheduler), to
the earliest job with a task waiting; under ``"fair"`` (the fair scheduler of 0.20, which the
article's replay needs so small jobs do not wait behind huge ones), to the waiting job with the
fewest running tasks of that kind, earliest first on ties.

Jobs interact only through slots: the network time of each task is the fan-in time of its own
job's shape (other jobs' traffic on the same ports is not simulated).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from incastlab.jobs.hadoop import MACHINES, Machines
from incastlab.jobs.job import Plan

Policy = Literal["fifo", "fair"]


@dataclass(frozen=True)
class Outcome:
    """When one job started and ended, and how much of it was network."""

    name: str
    submit_ps: int
    end_ps: int
    #: Network time summed over all its tasks (not only the critical path).
    network_ps: int

    @property
    def completion_ps(self) -> int:
        return self.end_ps - self.submit_ps


class _State:
    __slots__ = ("left", "maps_left", "next_map", "next_reduce", "plan", "ready_ps", "running")

    def __init__(self, plan: Plan):
        self.plan = plan
        self.ready_ps = plan.job.submit_ps + plan.before_ps
        self.next_map = 0
        self.next_reduce = 0
        self.running = {"map": 0, "reduce": 0}
        self.maps_left = len(plan.maps)
        self.left = len(plan.maps) + len(plan.reduces)

    def waiting(self, kind: str) -> bool:
        if kind == "map":
            return self.next_map < len(self.plan.maps)
        return self.maps_left == 0 and self.next_reduce < len(self.plan.reduces)


def run(plans: Sequence[Plan], policy: Policy = "fair", m: Machines = MACHINES) -> list[Outcome]:
    """Replay ``plans`` on the shared slots; one :class:`Outcome` per plan, in order."""
    free = {"map": m.workers * m.map_slots, "reduce": m.workers * m.reduce_slots}
    states = [_State(p) for p in plans]
    ends: list[int | None] = [None] * len(plans)
    # Events: (time, order, kind, job index). kind "ready" lets a job's tasks start; "map" or
    # "reduce" frees a slot of that kind when a task of the job ends.
    events: list[tuple[int, int, str, int]] = []
    seq = 0
    for i, s in enumerate(states):
        heapq.heappush(events, (s.ready_ps, seq, "ready", i))
        seq += 1
    active: list[int] = []  # jobs ready with tasks not yet started, in submission order

    def pick(kind: str) -> int | None:
        best = None
        for i in active:
            s = states[i]
            if not s.waiting(kind):
                continue
            if policy == "fifo":
                return i
            if best is None or s.running[kind] < states[best].running[kind]:
                best = i
        return best

    while events:
        now, _, kind, i = heapq.heappop(events)
        s = states[i]
        if kind == "ready":
            if s.left == 0:
                ends[i] = now + s.plan.after_ps
            else:
                active.append(i)
        else:
            free[kind] += 1
            s.running[kind] -= 1
            s.left -= 1
            if kind == "map":
                s.maps_left -= 1
            if s.left == 0:
                ends[i] = now + s.plan.after_ps
                active.remove(i)
        # Hand out every free slot that has a taker.
        for k in ("map", "reduce"):
            while free[k]:
                j = pick(k)
                if j is None:
                    break
                t = states[j]
                if k == "map":
                    task = t.plan.maps[t.next_map]
                    t.next_map += 1
                else:
                    task = t.plan.reduces[t.next_reduce]
                    t.next_reduce += 1
                free[k] -= 1
                t.running[k] += 1
                heapq.heappush(events, (now + task.duration_ps, seq, k, j))
                seq += 1
    out = []
    for s, end in zip(states, ends, strict=True):
        assert end is not None
        net = sum(t.network_ps for t in s.plan.maps) + sum(t.network_ps for t in s.plan.reduces)
        out.append(Outcome(s.plan.job.name, s.plan.job.submit_ps, end, net))
    return out
