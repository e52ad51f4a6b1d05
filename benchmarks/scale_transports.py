#!/usr/bin/env python3
"""Swift, EQDS and Homa beside NDP at scale: an 8000:1 incast on the
8192-host 3-tier fat tree (k = 32, 1 µs links), every link at 10 Gbps and then at 100 Gbps,
each of the 8000 senders sending one block (270,000 B unless ``--size``). Each run is the Rust
simulator alone as its own process (the release `one` example of incast-sim, on the scenario
incastlab normalizes), so its wall time and peak resident memory are its own; every transport
runs with its defaults. Homa at 8000:1 is in NDP's class only with its incast optimization
(the ``homa`` run, ``homa.incast_threshold = 8``: the paper's answer to incast, §3.6, off by
default because neither the paper nor the authors' code gives a threshold). Without it
(``homa-plain``, the defaults) 8000 responses each send RTTbytes unscheduled into one 64 KB
port at once and every message still missing them asks again after each resend timeout (the
paper's RESEND, §3.7), into the same port: several times the events, CPU and simulated time of
the optimized run (docs/speed.md has the numbers); it is in the default list so that cost
stays measured.

    cargo build --release -p incast-sim --example one
    python3 benchmarks/scale_transports.py target/release/examples/one
    python3 benchmarks/scale_transports.py ONE --size 64KB --rates 100Gbps --transports ndp,homa

Prints per run: wall seconds, peak MB, events, the last flow's completion (simulated ms) and
its ratio to the line-rate bound (all bytes through the receiver's link), and CPU time and memory
as ratios to NDP's at the same rate. A measurement, not a test: the numbers depend on the
machine and its load (docs/speed.md has dated ones).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from child_usage import run_text

from incastlab.scenario import from_dict
from incastlab.units import parse_rate, parse_size

SENDERS = 8000
# (label, transport, overrides)
RUNS = {
    "ndp": ("ndp", {}),
    "swift": ("swift", {}),
    # Swift with randomized retransmission timers (exact ones lock the flows that lost their
    # first windows together into timing out at the same instants: docs/speed.md).
    "swift-jitter": ("swift", {"swift": {"rto_jitter": 0.5}}),
    "eqds": ("eqds", {}),
    "homa": ("homa", {"homa": {"incast_threshold": 8}}),
    "homa-plain": ("homa", {}),
}


def scenario(transport: str, extra: dict[str, Any], rate: str, size: str) -> str:
    d = {
        "transport": transport,
        "seed": 1,
        "topology": {
            "kind": "fat_tree",
            "hosts": 8192,
            "senders": SENDERS,
            "link": rate,
            "receiver_link": rate,
            "link_delay": "1us",
        },
        "workload": {"kind": "incast", "flow_size": size},
        **extra,
    }
    return from_dict(d).to_json()


def run(one: Path, text: str, timeout: float) -> dict[str, Any] | None:
    """One child process: its report, wall seconds and peak RSS (MB), or None on timeout."""
    out, use = run_text([str(one), str(SENDERS)], stdin_text=text, timeout=timeout)
    if use.timed_out:
        return None
    report: dict[str, Any] = json.loads(out)
    report["_wall"] = use.wall_s
    report["_peak_mb"] = use.peak_mb
    # CPU seconds too: on a shared machine the wall time follows the load.
    report["_cpu"] = use.cpu_s
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("one", type=Path, help="the release `one` example of incast-sim")
    ap.add_argument("--size", default="270000B", help="bytes per sender (default 270000B)")
    ap.add_argument("--rates", default="10Gbps,100Gbps")
    ap.add_argument("--transports", default="ndp,swift,eqds,homa,homa-plain")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    a = ap.parse_args()
    names = a.transports.split(",")
    if names[0] != "ndp":
        names.insert(0, "ndp")  # the reference the ratios need
    print(
        f"{'run':<11} {'rate':>8} {'wall s':>8} {'cpu s':>7} {'peak MB':>8} {'events':>11} "
        f"{'last ms':>9} {'/bound':>7} {'cpu/NDP':>8} {'MB/NDP':>7}"
    )
    for rate in a.rates.split(","):
        bound_ms = SENDERS * parse_size(a.size) * 8 / parse_rate(rate) * 1e3
        ref: dict[str, Any] | None = None
        for name in names:
            transport, extra = RUNS[name]
            r = run(a.one, scenario(transport, extra, rate, a.size), a.timeout)
            if r is None:
                print(f"{name:<11} {rate:>8} did not finish in {a.timeout:.0f} s")
                continue
            ref = ref or r
            last_ms = r["duration"] / 1e9
            print(
                f"{name:<11} {rate:>8} {r['_wall']:>8.2f} {r['_cpu']:>7.2f} {r['_peak_mb']:>8.0f} "
                f"{r['events']:>11,} {last_ms:>9.2f} {last_ms / bound_ms:>7.3f} "
                f"{r['_cpu'] / ref['_cpu']:>8.2f} {r['_peak_mb'] / ref['_peak_mb']:>7.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
