"""The burst model's first and later blocks beside the simulator's, one row per value of an
axis: where the model's serial RTO waits part from the simulator's, block by block.

    python benchmarks/model_blocks.py --vary topology.senders=200,300,470,700
    python benchmarks/model_blocks.py --set tcp.congestion_control=dctcp \
        --vary topology.buffer=10KB,50KB

A point is a design point (:func:`incastlab.model.design.point_keys`: the receiver's link as
fast as the senders', DCTCP's marking threshold at half the buffer), by default 470 x 10.6 KB
into 98 KB at 88 Gbps, 38 us, RTOmin 1.35 ms (classic Reno), whose later blocks the model
makes three times the simulator's. Per row: the simulator's first block and the mean of the
later ones in RTOs (the scenario's RTO, :func:`incastlab.model.burst.rto_seconds`), its
timeouts per block, and its timeout runs by length over the run (runs of length k: senders
that waited k RTOs in a row, the ones the k-th wave of retransmissions got through), then
the model's first and steady block in RTOs and its timeouts in each.
"""

from __future__ import annotations

import argparse
from typing import Any

from incastlab.backends.model import burst_path
from incastlab.backends.sim import simulate
from incastlab.model import burst, design
from incastlab.scenario import apply_overrides, from_dict

#: The point the rows start from (the later-block RTO waits the model overestimates).
BASE: dict[str, Any] = {
    "topology.senders": 470,
    "workload.sru": "10614B",
    "topology.buffer": "98166B",
    "topology.link": "87655Mbps",
    "topology.rtt": "37812ns",
    "tcp.rto_min": "1346113ns",
    "tcp.initial_window": 4,
    "tcp.profile": "classic",
    "tcp.congestion_control": "reno",
    "tcp.cwnd_restart": "idle",
}
#: Keys whose values are integers.
INTS = ("topology.senders", "tcp.initial_window")


def _value(key: str, v: str) -> Any:
    return int(v) if key in INTS else v


def row(point: dict[str, Any], blocks: int, seed: int) -> str:
    """One line: the simulator's blocks and timeout runs, and the model's, for ``point``."""
    keys = design.point_keys(point)
    keys["workload.blocks"] = blocks
    keys["seed"] = seed
    sc = from_dict(apply_overrides({}, keys))
    p = burst_path(sc.normalized())
    b = burst.predict(p, burst.fitted())
    r = simulate(sc)
    rto = burst.rto_seconds(p)
    times = [t / rto for t in r.block_times_s]
    later = sum(times[1:]) / max(1, len(times) - 1)
    runs = list(r.report["timeout_runs"])
    while runs and runs[-1] == 0:
        runs.pop()
    timeouts = list(r.report["block_timeouts"])
    return (
        f"sim blocks/RTO {times[0]:7.1f} first {later:7.1f} later; timeouts {timeouts}; "
        f"runs {runs} | model {b.first.time_s / rto:7.1f} first {b.steady.time_s / rto:7.1f} "
        f"later; timeouts {b.first.timeouts:.0f} first {b.steady.timeouts:.0f} later"
    )


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--set", action="append", default=[], help="KEY=VALUE on the base point")
    a.add_argument("--vary", default=None, help="KEY=V1,V2,...: one row per value")
    a.add_argument("--blocks", type=int, default=4, help="blocks per run (default 4)")
    a.add_argument("--seed", type=int, default=1, help="the simulator's seed")
    args = a.parse_args()
    point = dict(BASE)
    for kv in args.set:
        k, v = kv.split("=", 1)
        point[k] = _value(k, v)
    values: list[tuple[str, Any]] = [("", None)]
    if args.vary:
        k, vs = args.vary.split("=", 1)
        values = [(k, _value(k, v)) for v in vs.split(",")]
    print(design.label(point))
    for k, v in values:
        pt = dict(point, **({k: v} if k else {}))
        print(f"{k}={v} " if k else "", row(pt, args.blocks, args.seed), sep="")


if __name__ == "__main__":
    main()
