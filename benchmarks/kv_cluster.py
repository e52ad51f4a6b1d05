"""How long the simulator takes for the Riak cluster of `incast reproduce riak-utilization`:
20 hosts on one 1 Gbps switch with a 2.5 MB shared buffer, every host coordinating gets of
100 KB values from R = 3 replicas at 50% average utilization, for 10 s of traffic.

    python benchmarks/kv_cluster.py            # the 10 s the target is stated for
    python benchmarks/kv_cluster.py --seconds 2

Prints the wall and CPU time of the run (the simulator is single-threaded: its CPU time is
what one core needs), the events per second, and the ratio of CPU time to the one-minute
target. On a shared machine the wall time includes waiting for the core; CPU time does not.
"""

from __future__ import annotations

import argparse
import resource
import time

from incastlab.backends.sim import simulate

TARGET_S = 60.0


def cluster(seconds: float) -> dict[str, object]:
    return {
        "topology": {"senders": 20, "buffer": "unlimited", "shared_buffer": "2500KB"},
        "tcp": {"congestion_control": "cubic", "initial_window": 3},
        "workload": {"kind": "kv_gets", "kv_utilization": 0.5, "kv_duration": f"{seconds}s"},
    }


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="simulated seconds of gets")
    a = p.parse_args()
    c0, w0 = cpu_s(), time.perf_counter()
    r = simulate(cluster(a.seconds))
    cpu, wall = cpu_s() - c0, time.perf_counter() - w0
    kv = r.report["kv"]
    print(
        f"{a.seconds:g} s of traffic ({r.duration_s:.2f} s simulated with the drain): "
        f"{kv['gets']:,} gets, {r.events:,} events"
    )
    print(f"wall {wall:.1f} s, CPU {cpu:.1f} s, {r.events / cpu / 1e6:.2f} M events per CPU second")
    print(f"CPU time / {TARGET_S:.0f} s target: {cpu / TARGET_S:.2f}")
    print(
        f"utilization {100 * kv['utilization']:.1f}%, {kv['drops_per_s_per_host']:.0f} drops/s per "
        f"host, get p99 {kv['latency_p99'] / 1e9:.0f} ms"
    )


if __name__ == "__main__":
    main()
