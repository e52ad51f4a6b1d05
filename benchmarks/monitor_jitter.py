"""`incast monitor`'s sampler: how late its samples come (median, p99, max) and what CPU it
costs, at 1 ms and 100 µs, on loopback.

    python benchmarks/monitor_jitter.py [--seconds 5] [--iface lo]

Prints one line per interval and the machine's load average (the machine is shared: its
neighbours' load shows in the tail).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from incastlab import _core


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--iface", default="lo")
    a = ap.parse_args()
    for label, interval in (("1 ms", 1_000_000), ("100 us", 100_000)):
        m = _core.Monitor(a.iface, interval, duration_ns=int(a.seconds * 1e9))
        time.sleep(a.seconds + 0.3)
        b = json.loads(m.stop())
        late = np.asarray(b["samples"]["late_ns"], dtype=float) / 1e3
        n, expected = len(late), int(a.seconds * 1e9 / interval)
        cpu = b["cpu_ns"] / (a.seconds * 1e9)
        print(
            f"{label:>6}: {n:,} of {expected:,} deadlines sampled; lateness median "
            f"{np.median(late):.1f} us, p99 {np.percentile(late, 99):.1f} us, max "
            f"{late.max():.0f} us; sampler CPU {100 * cpu:.1f}% of a core"
            f"{', SCHED_FIFO' if b['realtime'] else ''}"
        )
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
