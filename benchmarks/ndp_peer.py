#!/usr/bin/env python3
"""NDP beside Broadcom's htsim (github.com/Broadcom/csg-htsim): the NDP paper's incast
(Handley et al., SIGCOMM 2017, Figure 20; htsim's EXAMPLES/incast_scaling) at 1000 and 8000
senders, per-flow completion percentiles side by side.

Each of N senders sends 270,000 B (30 packets of 9000 B) to host 0 of htsim's 8192-host
3-tier fat tree (k = 32), every link 10 Gbps and 1 µs; the senders are the hosts htsim's own
generator picks (`connection_matrices/gen_incast.py`, seed 13), and incastlab places its
senders on the same hosts (`topology.placement = "listed"`). Both sides run the paper's
settings as htsim's main_ndp takes them: an initial window of 10 packets (`-cwnd 10`), switch
ports that trim data beyond 8 packets' bytes (`-q 8`: 72,000 B, seven frames of 9,064 B, the
one being sent among them) and hold headers up to twice that (144,000 B), per-packet spraying
(`-strat perm`: a permutation of the paths, packet after packet; incastlab: a random path per
packet), 9000 B of payload plus 64 B of headers per data packet, 64 B control packets, no
preamble or gap (`tcp.phy_overhead = 0`). incastlab is set to do what htsim's code does
(docs/htsim.md, "NDP"): its `CompositeQueue` serves headers 100,000:1 (`ndp.header_weight =
100000`), trims the arriving data packet or the one last queued with equal chance (`ndp.trim =
"either"`) and drops the headers it cannot hold (`ndp.return_to_sender = false`); its pull
queue serves the flows round-robin in the order of their ids (`ndp.pull_order = "cyclic"`) and
its pacer runs at 0.99 of the link (`ndp.pull_rate`); its sender times each packet from its own
send (`ndp.timer = "packet"`), 20 ms before its first ACK (`ndp.rto_initial`), then its 50 ms
minimum × 0.75 to 1.25 drawn at each ACK (`ndp.rto = 37.5ms`, `ndp.rto_jitter = 0.6667`), and
resends every packet due at once.

    cargo build --release -p incast-sim --example one
    python3 benchmarks/ndp_peer.py HTSIM/sim/datacenter/htsim_ndp target/release/examples/one
    python3 benchmarks/ndp_peer.py HTSIM_NDP ONE --senders 1000 --repeat 3
    python3 benchmarks/ndp_peer.py HTSIM_NDP ONE --senders 1000,8000 --seeds 6
    python3 benchmarks/ndp_peer.py HTSIM_NDP ONE --reuse   # htsim's saved output, incastlab rerun

The first argument is htsim's NDP binary, in its sim/datacenter build directory (beside the
generator); the second, incast-sim's release `one` example (the simulator alone, one process,
on the scenario `incastlab.scenario` normalizes). htsim's stdout and its cost are kept in
`--work`; `--reuse` reads them back instead of running htsim again (8000 senders: a minute or
more of CPU and about 5 GB).

Two things about htsim's NDP decide whether it completes at all (docs/htsim.md, "NDP"). Its
trimming ports never return headers to their senders (main_ndp never calls
CompositeQueue::setRTS, and `perm`'s per-source copies of the routes carry no reverse route),
so headers beyond 144,000 B are dropped; and its sender's retransmission timeout is compiled
out unless `RESEND_ON_TIMEOUT` is defined (ndp.cpp, `rtx_timer_hook`). A stock build therefore
loses those packets for good: at 1000 senders no flow completes. Build ndp.cpp with
`-DRESEND_ON_TIMEOUT` (htsim's own switch) and its timer resends them. At 8000 senders that
build still leaves two thirds of the flows unfinished: its `retransmit_packet` never times a
resent packet again (the line `_sent_times[seqno] = eventlist().now();` is commented out), so a
resend whose header is dropped too is lost for good; with that line back every flow completes.
incastlab's defaults keep the paper's return to sender; this benchmark sets incastlab's `[ndp]`
to what htsim's code does (above).

Prints, per sender count, the completion percentiles (min, p10, median, p90, max; nearest
rank over the finished flows, in ms from the common start) of both, their ratio and whether it
is within 5%; then each side's whole-process CPU time (user + system) and peak resident memory
(GNU time, see child_usage.py), as medians over `--repeat` alternating runs. A measurement, not a
test: the costs depend on the machine and its load.

With `--seeds K` each side runs K seeds (htsim's `-seed 13` to `13 + K - 1`, its random paths
and timer draws; incastlab's `seed` 1 to K; the senders' hosts stay those of the matrix, seed
13): each percentile is then the mean over the seeds of each run's percentile, beside the range
it spans over the seeds, and the 5% is judged on those means. The fastest of thousands of flows
is one flow's luck: at 8000 senders it moves by 4.5% between two of htsim's seeds.

htsim times a flow when its sender gets the ACK of the last byte, incastlab when the receiver
has every packet (one ACK's latency earlier, µs against ms). htsim's pull pacer spaces pulls
(9000 + 64) B / 0.99 apart at the link rate (`NdpPullPacer`, `pull_rate_modifier` 0.99),
incastlab's one frame apart, so htsim's receiver link runs at 99% and its completions are up
to 1% later.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from child_usage import run_text

from incastlab.scenario import from_dict

HERE = Path(__file__).resolve().parent
HOSTS, K, SIZE, GBPS, IW, QUEUE = 8192, 32, 270_000, 10, 10, 8
TOLERANCE = 0.05
#: htsim's own default seed (main_ndp's `-seed`, and gen_incast's placement seed here).
HTSIM_SEED = 13
POINTS = (("min", 0.0), ("p10", 0.10), ("median", 0.50), ("p90", 0.90), ("max", 1.0))


def matrix(dc: Path, work: Path, senders: int) -> Path:
    """htsim's incast matrix (destination host 0), made by htsim's own generator, seed 13."""
    out = work / f"incast_{HOSTS}_{senders}_{SIZE}.cm"
    if not out.exists():
        gen = dc / "connection_matrices" / "gen_incast.py"
        if not gen.exists():
            raise SystemExit(f"{gen} not found: give htsim_ndp inside its sim/datacenter")
        args = [str(out), str(HOSTS), str(senders), str(SIZE), "0", str(HTSIM_SEED)]
        subprocess.run([sys.executable, str(gen), *args], check=True, capture_output=True)
    return out


def sources(cm: Path) -> list[int]:
    """The source hosts of an incast matrix ("SRC->DST id …" lines, destination host 0)."""
    out = []
    for line in cm.read_text().splitlines():
        head = line.split()[0] if line.split() else ""
        if "->" in head:
            src, dst = head.split("->")
            if int(dst) != 0:
                raise SystemExit(f"{cm}: expected every flow to go to host 0: {line}")
            out.append(int(src))
    return out


def scenario(hosts: list[int], ndp: dict[str, Any] | None = None) -> str:
    """incastlab's side of the case, normalized (JSON for the `one` example); `ndp` keys
    override the ndp section's."""
    d: dict[str, Any] = {
        "transport": "ndp",
        "seed": 1,
        "topology": {
            "kind": "fat_tree",
            "fat_tree_k": K,
            "senders": len(hosts),
            "placement": "listed",
            "listed_hosts": [0, *hosts],
            "link": f"{GBPS}Gbps",
            "receiver_link": f"{GBPS}Gbps",
            "link_delay": "1us",
        },
        "tcp": {"phy_overhead": "0B"},
        "ndp": {
            "mtu": "9000B",
            "header_bytes": "64B",
            "initial_window": IW,
            # htsim's -q 8 is 8 × 9000 B: seven frames of 9,064 B fit, the one on the wire
            # among them (CompositeQueue takes a packet off its queue when its serialization
            # ends); incastlab's data_queue counts the packets waiting behind the wire's.
            "data_queue": QUEUE * 9000 // 9064 - 1,
            # htsim's CompositeQueue holds headers up to twice its data queue's bytes (the one
            # on the wire again among them), serves them 100,000:1 and drops those it cannot
            # hold (main_ndp never sets its RTS).
            "header_queue": f"{2 * QUEUE * 9000 - 64}B",
            "header_weight": 100_000,
            "return_to_sender": False,
            "trim": "either",
            # FairPullQueue: a map from flow id to its pulls, walked round-robin in id order
            # (a flow coming to owe a pull is served when the walk reaches it); incastlab's
            # flows are numbered in the matrix's order, as htsim's ids.
            "pull_order": "cyclic",
            # NdpPullPacer: pulls (9000 + 64) B / 0.99 apart at the link rate.
            "pull_rate": 0.99,
            # NdpSrc: each packet timed from its send; 20 ms before an RTT sample, then
            # setMinRTO(50000) × 0.75 to 1.25, drawn on each RTT sample; every packet due sent
            # again at once. (incastlab's 1 ms default fires while 8000 senders' first windows'
            # NACKs queue at the receiver's NIC: a storm of resends.)
            "timer": "packet",
            "rto_initial": "20ms",
            "rto": "37.5ms",
            "rto_jitter": 0.6667,
            **(ndp or {}),
        },
        "workload": {"kind": "incast", "flow_size": f"{SIZE}B"},
    }
    return from_dict(d).to_json()


def htsim_command(binary: Path, cm: Path, senders: int, seed: int = HTSIM_SEED) -> list[str]:
    """htsim's NDP run: the paper's incast settings, spelled out (`-seed`: its random
    stream, 13 by default)."""
    # htsim runs to -end whatever finishes (its timer scan ticks every 9 µs over every
    # sender), which its CPU time counts: 15% over the line-rate bound and 20 ms, room for
    # its 99% pull rate and the 1000:1 incast's last completion (1.8% over the bound).
    end_us = int(senders * SIZE * 8 / (GBPS * 1e3) * 1.15) + 20_000
    return [
        str(binary),
        "-o",
        "htsim_ndp.dat",
        "-nodes",
        str(HOSTS),
        "-tm",
        str(cm),
        "-cwnd",
        str(IW),
        "-q",
        str(QUEUE),
        "-strat",
        "perm",
        "-linkspeed",
        str(GBPS * 1000),
        "-end",
        str(end_us),
        *(["-seed", str(seed)] if seed != HTSIM_SEED else []),
    ]


def timed(cmd: list[str], stdin_text: str | None, cwd: Path) -> tuple[str, float, float, float]:
    """Run `cmd`: its stdout, wall s, CPU s (user + system) and its own peak RSS MB
    (child_usage: not the Python parent's)."""
    text, use = run_text(cmd, stdin_text=stdin_text, cwd=cwd)
    return text, use.wall_s, use.cpu_s, use.peak_mb


def htsim_fcts_ms(text: str) -> list[float]:
    """Each flow's first "Flow ndp_S_D flow_id I finished at T" (µs since the common start)."""
    fcts: dict[str, float] = {}
    # htsim's progress dots share lines with these, so match anywhere in the line.
    for m in re.finditer(r"Flow (\S+) flow_id \d+ finished at ([0-9.e+]+)", text):
        fcts.setdefault(m.group(1), float(m.group(2)) / 1e3)
    return list(fcts.values())


def peerstats(text: str) -> str:
    """Where trimmed headers went, from a build with a local measurement patch that prints a
    PEERSTATS line (none upstream: then nothing)."""
    for line in text.splitlines():
        if line.startswith("PEERSTATS"):
            w = line.split()
            return " ".join(f"{k} {w[w.index(k) + 1]}" for k in ("bounces", "hdr_drops"))
    return ""


def run_htsim(
    binary: Path, cm: Path, senders: int, work: Path, reuse: bool, seed: int = HTSIM_SEED
) -> dict[str, Any]:
    saved = work / (
        f"htsim_ndp_{senders}.json" if seed == HTSIM_SEED else f"htsim_ndp_{senders}_s{seed}.json"
    )
    if reuse and saved.exists():
        return dict(json.loads(saved.read_text()))
    cmd = htsim_command(binary, cm, senders, seed)
    print("  htsim:", " ".join(cmd), file=sys.stderr)
    text, wall, cpu, rss = timed(cmd, None, work)
    (work / saved.with_suffix(".out").name).write_text(text)
    r = {"fcts": htsim_fcts_ms(text), "wall": wall, "cpu": cpu, "rss": rss}
    r["stats"] = peerstats(text)
    saved.write_text(json.dumps({**r, "command": cmd}))
    return r


def run_incastlab(one: Path, text: str, senders: int, work: Path) -> dict[str, Any]:
    out, wall, cpu, rss = timed([str(one), str(senders)], text, work)
    report = json.loads(out)
    fcts = [f["fct"] / 1e9 for f in report["flows"] if f.get("fct") is not None]
    return {"fcts": fcts, "wall": wall, "cpu": cpu, "rss": rss, "events": report["events"]}


def percentile(xs: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q of the flows at or below it."""
    s = sorted(xs)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def by_seed(runs: list[dict[str, Any]]) -> list[list[float]]:
    """Each seed's completions, once: the first run of each seed (repeats of a seed are the
    same simulation, run again only for its cost)."""
    seen: dict[int, list[float]] = {}
    for r in runs:
        seen.setdefault(r["seed"], r["fcts"])
    return list(seen.values())


def spread(xs: list[float]) -> str:
    """A mean over seeds, with the range it spans when there is more than one."""
    mean = statistics.mean(xs)
    return f"{mean:.3f}" if len(xs) == 1 else f"{mean:.3f} [{min(xs):.1f}-{max(xs):.1f}]"


def table(senders: int, inc: list[dict[str, Any]], ht: list[dict[str, Any]]) -> list[str]:
    hs, cs = by_seed(ht), by_seed(inc)
    h, c = hs[0], cs[0]
    lines = [
        f"{senders} senders × {SIZE:,} B, IW {IW}, q {QUEUE}, {GBPS} Gbps, k = {K} fat tree",
        f"flows finished: htsim {len(h)} of {senders}, incastlab {len(c)} of {senders}"
        + (f"; htsim {ht[0]['stats']}" if ht[0].get("stats") else "")
        + (f" (the first seed; {len(hs)} / {len(cs)} seeds)" if len(hs) + len(cs) > 2 else ""),
    ]
    if not all(hs) or not all(cs):
        return lines
    if any(len(x) < senders for x in hs + cs):
        lines.append("(percentiles over the finished flows only)")
    if len(hs) + len(cs) > 2:
        lines.append("(each percentile the mean over the seeds of each seed's, [its range])")
    width = 10 if len(hs) == 1 else 25
    lines.append(f"{'':<8} {'htsim ms':>{width}} {'incastlab ms':>{width}} {'ratio':>7}  within 5%")
    misses = 0
    for name, q in POINTS:
        a_seeds, b_seeds = [percentile(x, q) for x in hs], [percentile(x, q) for x in cs]
        a, b = statistics.mean(a_seeds), statistics.mean(b_seeds)
        ok = abs(b / a - 1) <= TOLERANCE
        misses += not ok
        lines.append(
            f"{name:<8} {spread(a_seeds):>{width}} {spread(b_seeds):>{width}} {b / a:>7.3f}  "
            f"{'yes' if ok else 'NO'}"
        )
    means = [statistics.mean(x) for x in hs], [statistics.mean(x) for x in cs]
    lines.append(f"{'mean':<8} {spread(means[0]):>{width}} {spread(means[1]):>{width}}")
    med = statistics.median
    for label, key in (("CPU s", "cpu"), ("peak RSS MB", "rss"), ("wall s", "wall")):
        a, b = med(r[key] for r in ht), med(r[key] for r in inc)
        lines.append(
            f"{label:<12} htsim {a:>9.2f}  incastlab {b:>8.2f}  htsim / incastlab "
            f"{a / b:>6.1f}×  (medians of {len(ht)} / {len(inc)} runs)"
        )
    lines.append(f"percentiles within 5%: {len(POINTS) - misses} of {len(POINTS)}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("htsim", type=Path, help="htsim's NDP binary (htsim_ndp in sim/datacenter)")
    ap.add_argument("one", type=Path, help="incast-sim's release `one` example")
    ap.add_argument("--senders", default="1000,8000")
    ap.add_argument("--repeat", type=int, default=1, help="alternating runs of each side")
    ap.add_argument("--work", type=Path, default=Path("ndp_peer_work"))
    ap.add_argument("--reuse", action="store_true", help="htsim's saved output, not a new run")
    ap.add_argument(
        "--seeds", type=int, default=1, help="seeds of each side (htsim 13.., incastlab 1..)"
    )
    a = ap.parse_args()
    if a.seeds < 1:
        ap.error("--seeds: at least 1")
    a.work.mkdir(parents=True, exist_ok=True)
    work, binary, one = a.work.resolve(), a.htsim.resolve(), a.one.resolve()
    for n in (int(s) for s in a.senders.split(",")):
        cm = matrix(binary.parent, work, n)
        text = scenario(sources(cm))
        inc: list[dict[str, Any]] = []
        ht: list[dict[str, Any]] = []
        for i in range(a.seeds):
            seeded = json.dumps({**json.loads(text), "seed": 1 + i})
            for r in range(a.repeat):
                inc.append({**run_incastlab(one, seeded, n, work), "seed": 1 + i})
                if not (a.reuse and r):  # a saved htsim run is one run
                    seed = HTSIM_SEED + i
                    ht.append({**run_htsim(binary, cm, n, work, a.reuse, seed), "seed": seed})
        print("\n".join(table(n, inc, ht)))
        print(f"incastlab events {inc[0]['events']:,}\n")
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"load average at the end (1, 5, 15 min): {load} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
