#!/usr/bin/env python3
"""incastlab side by side with Broadcom's htsim (github.com/Broadcom/csg-htsim) on RDMA incasts.

RoCE over PFC without congestion control, and HPCC, on htsim's 3-tier fat tree at 100 Gbps:
a 32:1 incast of 1 MB on 128 hosts (k = 8) and a 256:1 incast of 1 MB on 432 hosts (k = 12);
and RoCE on a 1000:1 incast of 270,000 B on 8192 hosts (k = 32), where the whole process's time
and memory are compared too. Both sides run the same incast: htsim's own generator
(`connection_matrices/gen_incast.py`, seed 13) picks the source hosts, destination host 0, and
incastlab places its senders on the same hosts (`topology.placement = "listed"`).

    python3 benchmarks/htsim_peer.py PATH/TO/csg-htsim/sim/datacenter
    python3 benchmarks/htsim_peer.py DC --cases roce_128_32,hpcc_128_32 --pad
    python3 benchmarks/htsim_peer.py --write-scenarios benchmarks/htsim_peer   # no htsim run

The argument is the directory of an htsim build (`make` in sim/, then in sim/datacenter: it
holds htsim_roce and htsim_hpcc). incastlab runs as `python3 -m incastlab.cli` (``--incast``
names another command, e.g. ``incast``). Parameters both sides share (htsim's defaults, read
from its source): MTU 9000 B of payload plus 64 B of headers per data packet, 64 B ACKs, no
preamble or gap; 1 µs per link, 100 Gbps everywhere; PFC per ingress port, no shared buffer,
pause above 135,000 B held and resume below 108,000 B (htsim's 15 and 12 packets of 9000 B);
per-flow ECMP; no ECN; RoCE without a retransmission timer (nothing is lost); HPCC with
T = 12 µs, η = 0.95, maxStage 5, W_AI = 9000 B, starting at the window T × 100 Gbps = 150 KB,
a new packet only if it fits whole in the window.

htsim prints each flow's completion ("Flow … finished at T"); its peak switch queue and PFC
pause count are printed only by a build with a small measurement patch (a "PEERSTATS" line:
the largest byte occupancy of any switch egress queue at enqueue, of the ToR port towards
host 0, and the XOFF frames the ingress ports sent); without it those columns say "-".
htsim's RoCE and HPCC draw every flow's ECMP path id after `srand(time(NULL))`, so their path
choice depends on the wall clock; HTSIM_PIN_TIME=1 is set for builds patched to read the
"clock" from it (an unpatched build ignores it).

Tolerances: last and mean completion time within 10%, peak switch queue within 25%;
1000:1 whole process at least 10x faster and 10x smaller in memory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import htsim_peer_eqds as eqds_peer
from child_usage import run_measured, run_text

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Case:
    cc: str  # "none" (RoCE) or "hpcc"
    hosts: int
    k: int
    senders: int
    size: int  # bytes per flow
    end_us: int  # htsim's -end
    timed: bool = False  # compare the whole process's time and memory
    q: int = 0  # Swift: switch queues in packets of SWIFT_MTU (htsim's -q)
    gbps: int = 100  # every link's rate (htsim's -linkspeed)
    cwnd: int = 15  # Swift: initial window in packets (htsim's -cwnd)


CASES = {
    "roce_128_32": Case("none", 128, 8, 32, 1_000_000, 100_000),
    "hpcc_128_32": Case("hpcc", 128, 8, 32, 1_000_000, 100_000),
    "roce_432_256": Case("none", 432, 12, 256, 1_000_000, 100_000),
    "hpcc_432_256": Case("hpcc", 432, 12, 256, 1_000_000, 100_000),
    "roce_8192_1000": Case("none", 8192, 32, 1000, 270_000, 1_000_000, timed=True),
    # Swift at the smallest queues where htsim's Swift completes every flow (390 and 3253
    # packets; below, a flow that takes a timeout never completes in htsim).
    "swift_128_32": Case("swift", 128, 8, 32, 1_000_000, 100_000, q=512),
    "swift_432_256": Case("swift", 432, 12, 256, 1_000_000, 100_000, q=4096),
    # 1000:1 at 10 Gbps: with W0 15 htsim's Swift leaves 11 flows unfinished (spurious timeouts
    # of its 1 ms initial RTO); with W0 1 it completes them all.
    "swift_8192_100": Case("swift", 8192, 32, 100, 270_000, 1_000_000, q=2048, gbps=10),
    "swift_8192_1000": Case(
        "swift", 8192, 32, 1000, 270_000, 400_000, timed=True, q=16384, gbps=10, cwnd=1
    ),
    # EQDS (htsim_eqds): see htsim_peer_eqds.py for the parameters.
    "eqds_128_32": Case("eqds", 128, 8, 32, 1_000_000, 100_000),
    "eqds_432_256": Case("eqds", 432, 12, 256, 1_000_000, 100_000),
    "eqds_8192_100": Case("eqds", 8192, 32, 100, 270_000, 2_000_000, gbps=10),
    "eqds_8192_1000": Case("eqds", 8192, 32, 1000, 270_000, 2_000_000, timed=True, gbps=10),
}

SWIFT_MTU = 4000  # htsim's Swift: bytes per data packet on the wire, payload and all

MTU = 9000  # htsim's -mtu default: payload bytes per data packet


def padded(size: int) -> int:
    """htsim sends whole packets: the last one carries a full MTU of payload too."""
    return -(-size // MTU) * MTU


def matrix(dc: Path, work: Path, case: Case) -> Path:
    """htsim's incast matrix for the case, made by htsim's own generator (seed 13)."""
    out = work / f"incast_{case.hosts}_{case.senders}_{case.size}.cm"
    if not out.exists():
        gen = dc / "connection_matrices" / "gen_incast.py"
        args = [str(out), str(case.hosts), str(case.senders), str(case.size), "0", "13"]
        subprocess.run([sys.executable, str(gen), *args], check=True, capture_output=True)
    return out


def sources(cm: Path) -> list[int]:
    """The source hosts of an incast matrix ("SRC->DST id …" lines), destination host 0."""
    out = []
    for line in cm.read_text().splitlines():
        m = re.match(r"\s*(\d+)->(\d+)\s", line)
        if m:
            if int(m.group(2)) != 0:
                raise SystemExit(f"{cm}: expected every flow to go to host 0: {line}")
            out.append(int(m.group(1)))
    return out


def swift_packets(size: int) -> int:
    """Packets an htsim Swift flow of `size` bytes carries: `-flowsize` whole packets, and one
    more, since SwiftSrc::set_flowsize adds an MSS to the size it is given."""
    return -(-size // SWIFT_MTU) + 1


def swift_scenario(name: str, case: Case, hosts: list[int]) -> str:
    """The incastlab scenario of a Swift case, as TOML: htsim's main_swift set-up."""
    return "\n".join(
        [
            f"# {name}: Swift, {case.senders}:1 incast of {case.size:,} B on htsim's",
            f"# {case.hosts}-host 3-tier fat tree (k = {case.k}) at {case.gbps} Gbps, as htsim's",
            f"# main_swift runs it with -q {case.q} (benchmarks/htsim_peer.py). The receiver",
            "# is host 0, the senders the hosts htsim's gen_incast.py (seed 13) picks.",
            "# htsim's Swift: 4000 B packets (no header), 40 B ACKs, its initial window, drop-tail",
            "# queues of q packets (random drops only in the top 3, never reached here); the",
            "# swift section's defaults are htsim's constants. Its flows carry one packet more",
            "# than -flowsize (set_flowsize adds an MSS), and below one packet its pacer sends",
            "# by the clock alone (swift.timed_pacing).",
            f"#   incast sim benchmarks/htsim_peer/{name}.toml",
            "seed = 1",
            'transport = "swift"',
            "",
            "[topology]",
            'kind = "fat_tree"',
            f"fat_tree_k = {case.k}",
            f"senders = {case.senders}",
            'placement = "listed"',
            f"listed_hosts = {json.dumps([0, *hosts])}",
            f'link = "{case.gbps}Gbps"',
            f'receiver_link = "{case.gbps}Gbps"',
            'link_delay = "1us"',
            f'buffer = "{case.q * SWIFT_MTU}B"',
            "",
            "[tcp]",
            'phy_overhead = "0B"',
            "",
            "[swift]",
            f'mtu = "{SWIFT_MTU}B"',
            'header_bytes = "0B"',
            'ack_bytes = "40B"',
            f"initial_window = {case.cwnd:.1f}",
            "timed_pacing = true",
            "# htsim checks its Swift timers every 10 ms (SwiftRtxTimerScanner): no timeout",
            "# fires sooner, which keeps its drop-free runs free of spurious timeouts. Its own",
            "# initial 1 ms and minimum 100 µs (the swift defaults) would fire while the first",
            "# round trip's queue drains (13 MB, 1 ms at 256:1; 4 MB, 3.2 ms at 1000:1).",
            'rto_initial = "10ms"',
            'rto_min = "10ms"',
            "",
            "[workload]",
            'kind = "incast"',
            f'flow_size = "{swift_packets(case.size) * SWIFT_MTU}B"',
            "",
        ]
    )


def scenario(name: str, case: Case, hosts: list[int], pad: bool) -> str:
    """The incastlab scenario of a case, as TOML."""
    if case.cc == "swift":
        return swift_scenario(name, case, hosts)
    if case.cc == "eqds":
        return eqds_peer.scenario(
            name, case.hosts, case.k, case.senders, case.size, case.gbps, hosts
        )
    size = padded(case.size) if pad else case.size
    hpcc = case.cc == "hpcc"
    what = "HPCC" if hpcc else "RoCE without congestion control"
    lines = [
        f"# {name}: {what}, {case.senders}:1 incast of {case.size:,} B on htsim's",
        f"# {case.hosts}-host 3-tier fat tree (k = {case.k}) at 100 Gbps, as htsim's "
        f"main_{'hpcc' if hpcc else 'roce'} runs it (benchmarks/htsim_peer.py).",
        "# The receiver is host 0, the senders the hosts htsim's gen_incast.py (seed 13) picks.",
        f"#   incast sim benchmarks/htsim_peer/{name}.toml",
        "seed = 1",
        'transport = "roce"',
        "",
        "[topology]",
        'kind = "fat_tree"',
        f"fat_tree_k = {case.k}",
        f"senders = {case.senders}",
        'placement = "listed"',
        f"listed_hosts = {json.dumps([0, *hosts])}",
        'link = "100Gbps"',
        'receiver_link = "100Gbps"',
        'link_delay = "1us"',
        "# PFC per ingress, no shared buffer: pause when an ingress holds more than 135,000 B,",
        "# resume below 108,000 B (htsim: above its high mark, below its low one); the buffer",
        "# per ingress is too large to fill, as htsim's is unbounded.",
        "pfc = true",
        'pfc_xoff = "135001B"',
        'pfc_xon = "107999B"',
        'buffer = "10MB"',
        *(["int = true"] if hpcc else []),
        "",
        "[tcp]",
        'phy_overhead = "0B"',
        "",
        "[roce]",
        'mtu = "9000B"',
        'header_bytes = "64B"',
        'control_bytes = "64B"',
        'int_hop_bytes = "0B"',
        'rto = "off"',
        f'cc = "{case.cc}"',
    ]
    if hpcc:
        # htsim's HPCC sends a new packet only if it fits whole in its window.
        lines.insert(lines.index('rto = "off"'), "window_whole_packets = true")
        lines += ["", "[roce.hpcc]", 'base_rtt = "12us"', 'w_ai = "9000B"', "eta = 0.95"]
        lines += ["max_stage = 5"]
    lines += ["", "[workload]", 'kind = "incast"', f'flow_size = "{size}B"', ""]
    return "\n".join(lines)


@dataclass
class Side:
    fcts_us: list[float]
    peak: int | None = None
    tor_host: int | None = None
    xoff: int | None = None
    trims: int | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    rss_mb: float = 0.0

    @property
    def last(self) -> float:
        return max(self.fcts_us)

    @property
    def mean(self) -> float:
        return statistics.mean(self.fcts_us)


def run_timed(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[str, float, float, float]:
    """Run `cmd` (in `cwd`): its stdout, wall s, CPU s and its own peak RSS MB
    (child_usage: not the Python parent's)."""
    text, use = run_text(cmd, env=env, cwd=cwd)
    return text, use.wall_s, use.cpu_s, use.peak_mb


def run_one(one: Path, rec: dict, work: Path) -> Side:
    """The Rust simulator alone as a process (the release `one` example of incast-sim) on the
    scenario `incast sim` normalized: no Python start-up and no JSON record to write."""
    normalized = work / "normalized.json"
    normalized.write_text(json.dumps(rec["scenario"]))
    senders = str(rec["scenario"]["topology"]["senders"])
    with normalized.open("rb") as stdin:
        use = run_measured([str(one), senders], stdin=stdin)
    if use.exit_code:
        raise SystemExit(f"{one} failed with status {use.exit_code}")
    return Side([], wall_s=use.wall_s, cpu_s=use.cpu_s, rss_mb=use.peak_mb)


def run_incastlab(incast: list[str], toml: Path) -> tuple[Side, dict]:
    out, wall, cpu, rss = run_timed([*incast, "sim", str(toml), "--json"])
    rec = json.loads(out)[0]
    report = rec["report"]
    queues = {q["name"]: q["max_bytes"] for q in report["queues"]}
    switch = [v for n, v in queues.items() if n != "nics"]
    eqds = report.get("eqds")
    tor_host = report["bottleneck"]["max_bytes"]
    if eqds:  # a trimming port's max_bytes is its header queue's: take EQDS's own peak
        at_rx = eqds["queue_peak_at"] == report["bottleneck"]["name"]
        tor_host = eqds["queue_peak_bytes"] if at_rx else None
    return Side(
        fcts_us=[f["fct"] / 1e6 for f in report["flows"]],
        peak=eqds["queue_peak_bytes"] if eqds else max(switch),
        trims=eqds["trimmed"] if eqds else None,
        tor_host=tor_host,
        xoff=rec["pfc_pauses"],
        wall_s=wall,
        cpu_s=cpu,
        rss_mb=rss,
    ), rec


def run_htsim(dc: Path, case: Case, cm: Path, work: Path) -> Side:
    binary = dc / {"hpcc": "htsim_hpcc", "swift": "htsim_swift", "eqds": "htsim_eqds"}.get(
        case.cc, "htsim_roce"
    )
    cmd = [str(binary), "-o", str(work / "htsim.dat"), "-nodes", str(case.hosts), "-tm", str(cm)]
    if case.cc == "swift":  # flow size in packets, queues in packets of its MTU
        cmd += ["-flowsize", str(-(-case.size // SWIFT_MTU)), "-q", str(case.q)]
        cmd += ["-linkspeed", str(case.gbps * 1000), "-cwnd", str(case.cwnd)]
    else:
        cmd += ["-strat", "ecmp_host", "-paths", "256", "-q", "10000", "-linkspeed", "100000"]
    cmd += ["-end", str(case.end_us)]
    if case.cc == "eqds":
        args = (str(binary), str(work / "htsim.dat"), case.hosts, str(cm), case.gbps, case.end_us)
        cmd = eqds_peer.htsim_command(*args)
    print("  htsim:", "HTSIM_PIN_TIME=1", " ".join(cmd), file=sys.stderr)
    env = {**os.environ, "HTSIM_PIN_TIME": "1"}
    # htsim writes its id map (idmap.txt) into the working directory: keep it in the work dir.
    out, wall, cpu, rss = run_timed(cmd, env, cwd=work)
    fcts: dict[str, float] = {}
    side = Side(fcts_us=[], wall_s=wall, cpu_s=cpu, rss_mb=rss)
    for line in out.splitlines():
        m = re.search(r"Flow (\S+) .*?finished at ([0-9.e+]+)", line)
        if m:
            fcts.setdefault(m.group(1), float(m.group(2)))
        m = re.search(r"PEERSTATS peak_switch_queue_bytes (\d+) .*tor_to_host_bytes (\d+)", line)
        if m:
            side.peak, side.tor_host = int(m.group(1)), int(m.group(2))
            side.xoff = int(re.search(r" xoff (\d+)", line).group(1))  # type: ignore[union-attr]
        m = re.search(r"Rtx: (\d+)", line)  # EQDS: its retransmissions, one per trim
        if m:
            side.trims = int(m.group(1))
    if len(fcts) != case.senders:
        raise SystemExit(f"htsim finished {len(fcts)} of {case.senders} flows (raise -end?)")
    side.fcts_us = list(fcts.values())
    return side


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or not b else f"{a / b:.3f}"


def verdict(a: float | None, b: float | None, tol: float) -> str:
    if a is None or b is None or not b:
        return "-"
    return "ok" if abs(a / b - 1) <= tol else "FAIL"


def fmt(v: float | None, digits: int = 1) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def table(rows: list[tuple[str, Side, Side]]) -> str:
    out = [
        "| case | metric | incastlab | htsim | ratio | tolerance |",
        "|---|---|---|---|---|---|",
    ]
    for name, inc, ht in rows:
        figures = [
            ("last FCT µs", inc.last, ht.last, 0.10, 1),
            ("mean FCT µs", inc.mean, ht.mean, 0.10, 1),
            ("peak switch queue B", inc.peak, ht.peak, 0.25, 0),
            ("ToR→receiver peak B", inc.tor_host, ht.tor_host, None, 0),
            ("PFC pause frames", inc.xoff, ht.xoff, None, 0),
            *([("trims", inc.trims, ht.trims, 0.30, 0)] if ht.trims is not None else []),
        ]
        for metric, a, b, tol, d in figures:
            v = verdict(a, b, tol) if tol is not None else "(shown)"
            tol_s = f"±{tol:.0%} {v}" if tol is not None else v
            cells = [name, metric, fmt(a, d), fmt(b, d), ratio(a, b), tol_s]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def spread(values: list[float], digits: int = 2) -> str:
    """Median [min–max] of the runs, as the cost table quotes every figure."""
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} [{min(values):.{digits}f}–{max(values):.{digits}f}]"


def cost_table(rows: list[tuple[str, list[Side], list[Side]]]) -> str:
    """Whole-process cost, run pair by pair (incastlab, then htsim, alternating): every figure
    as median [min–max] over the runs, and htsim ÷ incastlab as the median of the pairs'
    ratios (pairing keeps a ratio meaningful while other work on the machine changes its
    speed). CPU = user + system of the process: on a shared machine the steadier figure."""
    out = [
        "| case (incastlab as) | | runs | incastlab | htsim | htsim / incastlab | need |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, inc, ht in rows:
        for metric, attr in [("wall s", "wall_s"), ("CPU s", "cpu_s"), ("peak RSS MB", "rss_mb")]:
            a = [getattr(r, attr) for r in inc]
            b = [getattr(r, attr) for r in ht]
            x = [hb / ia if ia else float("inf") for ia, hb in zip(a, b, strict=True)]
            need = "≥ 10× " + ("ok" if statistics.median(x) >= 10 else "FAIL")
            cells = [name, metric, str(len(x)), spread(a), spread(b), spread(x, 1) + "×", need]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datacenter", nargs="?", type=Path, help="htsim's sim/datacenter build dir")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated; default: all")
    ap.add_argument("--pad", action="store_true", help="incastlab flows padded to whole packets")
    ap.add_argument("--incast", default=f"{sys.executable} -m incastlab.cli")
    ap.add_argument("--work", type=Path, default=Path("htsim_peer_work"))
    ap.add_argument(
        "--one",
        type=Path,
        help="incast-sim's release `one` example (cargo build --release -p incast-sim "
        "--example one): also time the simulator alone on the timed case",
    )
    ap.add_argument("--write-scenarios", type=Path, metavar="DIR")
    ap.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="whole-process runs of each side on a timed case, alternating (default 5; "
        "the cost table quotes medians)",
    )
    a = ap.parse_args()
    names = a.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown case {unknown[0]}; cases: {', '.join(CASES)}")
    if a.datacenter is None:
        ap.error("give htsim's sim/datacenter directory (it holds gen_incast.py and the binaries)")
    a.work.mkdir(parents=True, exist_ok=True)
    incast = a.incast.split()
    rows, costs = [], []
    for name in names:
        case = CASES[name]
        cm = matrix(a.datacenter, a.work, case)
        text = scenario(name, case, sources(cm), a.pad)
        if a.write_scenarios:
            a.write_scenarios.mkdir(parents=True, exist_ok=True)
            (a.write_scenarios / f"{name}.toml").write_text(text)
            continue
        toml = a.work / f"{name}.toml"
        toml.write_text(text)
        print(f"{name}: {' '.join(incast)} sim {toml} --json", file=sys.stderr)
        inc, rec = run_incastlab(incast, toml)
        ht = run_htsim(a.datacenter, case, cm, a.work)
        rows.append((name, inc, ht))
        if case.timed:
            incs, hts, ones = [inc], [ht], [run_one(a.one, rec, a.work)] if a.one else []
            for _ in range(a.repeat - 1):
                incs.append(run_incastlab(incast, toml)[0])
                hts.append(run_htsim(a.datacenter, case, cm, a.work))
                if a.one:
                    ones.append(run_one(a.one, rec, a.work))
            costs.append((f"{name} (incast sim)", incs, hts))
            if ones:
                costs.append((f"{name} (one example)", ones, hts))
    if rows:
        print(table(rows))
    if costs:
        load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
        print(f"\nload average at the end (1, 5, 15 min): {load} on {os.cpu_count()} cores")
        print(cost_table(costs))


if __name__ == "__main__":
    main()
