"""`incast pcap` speed on a capture of at least 1 GB, against tshark's field extraction on
the same file when tshark is installed.

    python benchmarks/pcap_throughput.py [--blocks 2000] [--keep FILE.pcap]

Writes the simulator's receiver-side capture of a collapsing 16-sender run (as many blocks as
it takes to pass 1 GB), reads it with the Rust analyzer (one core), then has tshark extract
the fields such an analysis needs (time, addresses, ports, seq/ack, length, its
retransmission flag). Prints packets per second of each and their ratio. The file is read
from the page cache (it was just written) by both.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import incastlab
from incastlab.trace import TraceOptions, analyze

TSHARK_FIELDS = [
    "frame.time_epoch",
    "ip.src",
    "ip.dst",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.len",
    "tcp.analysis.retransmission",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=2000)
    ap.add_argument("--keep", metavar="FILE.pcap", help="keep the capture here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = Path(a.keep) if a.keep else Path(d) / "bench.pcap"
        t0 = time.perf_counter()
        scenario = {"topology": {"senders": 16}, "workload": {"sru": "256KB", "blocks": a.blocks}}
        incastlab.simulate(scenario, pcap=path)
        size = path.stat().st_size
        print(f"capture: {size / 1e9:.2f} GB, written in {time.perf_counter() - t0:.1f} s")
        if size < 1e9:
            print("(below 1 GB: raise --blocks)")
        t0 = time.perf_counter()
        rep = analyze(path, TraceOptions())
        wall = time.perf_counter() - t0
        frames = rep.report["frames"]
        ours = frames / wall
        print(
            f"incast pcap: {frames:,} packets in {wall:.2f} s = {ours / 1e6:.2f} M packets/s "
            f"({size / wall / 1e9:.2f} GB/s); {rep.report['rtos']} timeouts found"
        )
        tshark = shutil.which("tshark")
        if tshark is None:
            print("tshark: not installed here (apt-get install tshark), no comparison")
            return
        argv = [tshark, "-n", "-r", str(path), "-T", "fields"]
        for f in TSHARK_FIELDS:
            argv += ["-e", f]
        t0 = time.perf_counter()
        with open(os.devnull, "w") as null:
            subprocess.run(argv, stdout=null, stderr=subprocess.DEVNULL, check=True)
        twall = time.perf_counter() - t0
        theirs = frames / twall
        print(
            f"tshark -T fields: {twall:.2f} s = {theirs / 1e6:.2f} M packets/s; "
            f"incast pcap is {ours / theirs:.1f}x faster"
        )


if __name__ == "__main__":
    main()
