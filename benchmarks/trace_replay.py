"""A SWIM trace replayed under RTOmin 200 ms and 1 ms, cold (nothing memoized): wall time
against the 15-minute budget for the FB-2009 day, and where it goes.

    python benchmarks/trace_replay.py TRACE.tsv [--workers 2]

Prints the jobs, the distinct fan-ins simulated, the wall time, its ratio to the budget, and the
machine's load average (the machine is shared: its neighbours' load shows in the wall time).
"""

from __future__ import annotations

import argparse
import os
import time

from incastlab.jobs import hadoop, swim
from incastlab.jobs.replay import replay

BUDGET_S = 15 * 60


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", default=str(swim.SMALL_TRACE))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    cfg = hadoop.DEFAULT.with_version("0.20.2")
    t0 = time.perf_counter()
    jobs = swim.scale(
        swim.load(a.trace), cluster=hadoop.MACHINES.workers, block_bytes=cfg.block_bytes
    )
    r = replay(jobs, cfg, workers=a.workers)
    wall = time.perf_counter() - t0
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{len(jobs)} jobs, {r.simulated} fan-ins simulated, {wall:.1f} s wall with "
        f"{a.workers} threads: {wall / BUDGET_S:.2f} of the 15-minute budget (load {load})"
    )


if __name__ == "__main__":
    main()
