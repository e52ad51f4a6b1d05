"""Per-point overhead of the sweep machinery: 200 short simulations called directly, one after
the other, against the same 200 points through `incast sweep`'s runner (process pool of one
worker, then of every core), each point stored as its own Parquet file.

    python benchmarks/sweep_overhead.py [--points 200]

Prints wall times, the per-point overhead and the ratios.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import incastlab
from incastlab.sweep.run import run_points
from incastlab.sweep.spec import parse_spec
from incastlab.sweep.store import SweepStore


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=200)
    a = ap.parse_args()
    spec = parse_spec(
        {
            "sweep": {"seeds": a.points // 8},
            "topology": {"senders": [1, 2, 4, 8, 12, 16, 24, 32]},
            "workload": {"sru": "32KB", "blocks": 2},
        }
    )
    points = spec.points()
    t0 = time.perf_counter()
    for p in points:
        incastlab.simulate(p.scenario)
    direct = time.perf_counter() - t0
    print(f"{len(points)} points, called directly:        {direct:7.2f} s")
    for workers in sorted({1, os.cpu_count() or 1}):
        with tempfile.TemporaryDirectory() as d:
            store = SweepStore(d)
            store.create({"name": "overhead"})
            t0 = time.perf_counter()
            res = run_points(points, store, workers=workers)
            wall = time.perf_counter() - t0
            assert res.ran == len(points), res
        per_point = (wall * workers - direct) / len(points) * 1e3
        print(
            f"{len(points)} points, sweep, {workers} worker(s):    {wall:7.2f} s   "
            f"{wall / direct:5.2f}× direct, ~{per_point:.1f} ms per point of overhead per worker"
        )


if __name__ == "__main__":
    main()
