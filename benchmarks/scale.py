#!/usr/bin/env python3
"""The simulator's scale in one run: events per CPU second and peak resident memory of the
key-value cluster of ``examples/riak-one-switch.toml`` at 20, 160 and 1,024 hosts (R = 3,
100 KB values, 50% utilization, the shared buffer scaled with the hosts: 125 KB a host; 0.5 s
of warm-up then 1 s measured unless ``--warmup``/``--measured``) and the NDP incast of
``scale_transports.py`` (the 8192-host fat tree, 10 Gbps) at 1000 and 8000 senders, with the
ratios between them, so that a regression shows as a ratio rather than as a number that moves
with the machine.

    cargo build --release -p incast-sim --example one --example memory_latency
    python3 benchmarks/scale.py target/release/examples/one
    python3 benchmarks/scale.py ONE --hosts 20,160 --no-ndp --measured 0.2s

Each run is the release ``one`` example as its own process (its CPU time from ``wait4``, its
own peak RSS from GNU time: ``child_usage.py``; the scenario normalized by incastlab). The
per-connection flow list of a cluster's report (a million entries at 1,024 hosts) is skipped
while reading it back. The targets ask the 1,024-host cluster for ≤ 2 GB peak RSS at ≥ 2/3 of
the 20-host cluster's events per CPU second; both are printed as checks. A measurement, not a
test: on a shared machine the CPU time also moves with the other processes' cache pressure, so
each line ends with the load average when its run ended, and a case under 30 s of CPU is run
three times (``--repeat``) and its median kept.

The ratio is one between a cluster whose state stays in the core's caches and one whose state
does not, so it moves with what a read from beyond the core's own caches costs on the machine
of the day. Where the ``memory_latency`` example sits beside ``one``, its figures end the
cluster's lines: a dependent load within 1 MiB and over hundreds of MiB, and eight at once.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from incastlab.scenario import from_dict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from child_usage import run_measured
from scale_transports import scenario as ndp_scenario

# The targets for the largest cluster against the smallest.
MAX_RSS_MB = 2048.0
MIN_SPEED_RATIO = 2 / 3
#: Runs shorter than this (CPU seconds) are repeated and their median kept.
SHORT_CPU_S = 30.0


def kv_scenario(hosts: int, warmup: str, measured_s: float) -> str:
    warm_s = float(warmup.rstrip("s"))
    d = {
        "seed": 1,
        "topology": {
            "senders": hosts,
            "link": "1Gbps",
            "buffer": "unlimited",
            "shared_buffer": f"{125 * hosts}KB",
        },
        "tcp": {"congestion_control": "cubic", "initial_window": 3, "rto_min": "200ms"},
        "workload": {
            "kind": "kv_gets",
            "kv_utilization": 0.5,
            "kv_replicas": 3,
            "value_size": "100KB",
            "kv_warmup": warmup,
            "kv_duration": f"{warm_s + measured_s:g}s",
        },
    }
    return from_dict(d).to_json()


def read_report(path: Path) -> dict[str, Any]:
    """The report without its top-level flow list (one entry per connection)."""
    kept: list[str] = []
    skipping = False
    with path.open() as f:
        for line in f:
            if line.startswith('  "flows": ['):
                skipping = not line.rstrip().endswith("],")
                kept.append('  "flows": [],\n')
                continue
            if skipping:
                skipping = not line.startswith("  ]")
                continue
            kept.append(line)
    return json.loads("".join(kept))


def run(one: Path, senders: int, text: str) -> dict[str, Any]:
    """One child process: its report, CPU seconds, peak RSS (MB) and the machine's load
    average over the minute before it ended (other processes' cache pressure moves CPU
    time)."""
    with tempfile.TemporaryFile("w+") as stdin, tempfile.NamedTemporaryFile("w+b") as out:
        stdin.write(text)
        stdin.seek(0)
        use = run_measured([str(one), str(senders)], stdin=stdin, stdout=out, stderr=None)
        if use.exit_code != 0:
            raise SystemExit(f"{one} {senders} failed with status {use.exit_code}")
        report = read_report(Path(out.name))
    return {
        "report": report,
        "cpu": use.cpu_s,
        "rss_mb": use.peak_mb,
        "load": os.getloadavg()[0],
    }


def run_median(one: Path, senders: int, text: str, repeat: int) -> dict[str, Any]:
    """:func:`run`, and for a run under :data:`SHORT_CPU_S` of CPU, ``repeat`` runs in all: the
    one of median CPU time (the report is the same each time; the peak RSS is the largest).
    A run of a second moves by a fifth with the machine's other work, and the ratios divide by
    the shortest runs."""
    r = run(one, senders, text)
    if r["cpu"] >= SHORT_CPU_S or repeat <= 1:
        return r
    runs = [r] + [run(one, senders, text) for _ in range(repeat - 1)]
    runs.sort(key=lambda x: x["cpu"])
    median = dict(runs[len(runs) // 2])
    median["rss_mb"] = max(x["rss_mb"] for x in runs)
    median["runs"] = len(runs)
    return median


def memory_latency(one: Path) -> str | None:
    """The ``memory_latency`` example's figures beside ``one``, as one line (None without it):
    what a cold line costs the 1,024-host cluster on this machine against a warm one."""
    tool = one.with_name("memory_latency")
    if not tool.exists():
        return None
    out = subprocess.run([str(tool), "--plain"], capture_output=True, text=True, check=True)
    rows = {
        int(kib): (float(one), float(eight))
        for kib, one, eight in map(str.split, out.stdout.splitlines())
    }
    warm, largest = rows[1024], max(rows)
    cold = rows[largest]
    return (
        f"  this machine: a dependent load {warm[0]:.1f} ns within 1 MiB, {cold[0]:.0f} ns over "
        f"{largest // 1024} MiB ({cold[1]:.1f} ns each with eight at once)"
    )


def line(label: str, r: dict[str, Any], base: dict[str, Any] | None) -> str:
    events = r["report"]["events"]
    speed = events / r["cpu"]
    s = (
        f"{label:<14} {events / 1e6:>9.1f} M {r['cpu']:>8.2f} s {speed / 1e6:>7.2f} M/s "
        f"{r['rss_mb']:>9.0f} MB  load {r['load']:>4.1f}"
    )
    if r.get("runs", 1) > 1:
        s += f"  (median of {r['runs']})"
    if base is not None:
        bspeed = base["report"]["events"] / base["cpu"]
        s += f"   speed ×{speed / bspeed:.2f}  RSS ×{r['rss_mb'] / base['rss_mb']:.1f}"
    return s


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("one", type=Path, help="the release `one` example of incast-sim")
    p.add_argument("--hosts", default="20,160,1024", help="cluster sizes, comma-separated")
    p.add_argument("--warmup", default="0.5s", help="cluster warm-up left out of the figures")
    p.add_argument("--measured", default="1s", help="cluster time measured after the warm-up")
    p.add_argument("--ndp", default="1000,8000", help="NDP incast senders, comma-separated")
    p.add_argument("--no-ndp", action="store_true", help="the cluster alone")
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        help=f"runs of each case under {SHORT_CPU_S:g} s of CPU, the median kept (default 3)",
    )
    a = p.parse_args()
    measured_s = float(a.measured.rstrip("s"))
    print(f"{'run':<14} {'events':>11} {'CPU':>10} {'events/CPU s':>11} {'peak RSS':>12}")
    kv: list[tuple[int, dict[str, Any]]] = []
    for h in [int(x) for x in a.hosts.split(",")]:
        r = run_median(a.one, h, kv_scenario(h, a.warmup, measured_s), a.repeat)
        kv.append((h, r))
        print(line(f"kv {h} hosts", r, kv[0][1] if len(kv) > 1 else None), flush=True)
    for h, r in kv:
        k = r["report"]["kv"]
        print(
            f"  kv {h:>5} hosts: {k['gets']:,} gets, utilization {100 * k['utilization']:.1f}%, "
            f"{k['drops_per_s_per_host']:.1f} drops/s per host, get p50 "
            f"{k['latency_p50'] / 1e9:.2f} ms, p99 {k['latency_p99'] / 1e9:.2f} ms"
        )
    if len(kv) > 1:
        (h0, r0), (h1, r1) = kv[0], kv[-1]
        ratio = (r1["report"]["events"] / r1["cpu"]) / (r0["report"]["events"] / r0["cpu"])
        ok_speed = "yes" if ratio >= MIN_SPEED_RATIO else "NO"
        ok_rss = "yes" if r1["rss_mb"] <= MAX_RSS_MB else "NO"
        print(
            f"  {h1} hosts at ≥ 2/3 of {h0} hosts' events per CPU second: {ok_speed} "
            f"(×{ratio:.2f}); peak RSS ≤ 2 GB: {ok_rss} ({r1['rss_mb']:.0f} MB)"
        )
    latency = memory_latency(a.one)
    if latency is not None:
        print(latency, flush=True)
    if a.no_ndp:
        return
    ndp: list[dict[str, Any]] = []
    for n in [int(x) for x in a.ndp.split(",")]:
        r = run_median(a.one, n, ndp_scenario("ndp", {}, "10Gbps", "270000B"), a.repeat)
        ndp.append(r)
        print(line(f"ndp {n}:1", r, ndp[0] if len(ndp) > 1 else None), flush=True)


if __name__ == "__main__":
    main()
