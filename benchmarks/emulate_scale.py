"""`incast emulate` by sender count: wall time, memory per sender and goodput against the link.

    sudo flock LOCK python benchmarks/emulate_scale.py [--senders 16,64,256] [--links 100Mbps]
        [--sru 256KB] [--blocks 5] [--buffer 16MB]
    sudo flock LOCK python benchmarks/emulate_scale.py --testbed-only --senders 64,256

Runs one `incast emulate --json` per (sender count, link rate) and samples, every 0.1 s, the
run's process tree (the command and every process it started, with their children) and the
processes living in its namespaces:

- servers: processes serving blocks (an `agent serve` per namespace in older versions; none
  now, the servers being sockets of the emulating process), their summed RSS, per sender;
- tree RSS: the peak of the summed resident memory of every process of the run;
- kernel+user: the peak drop of MemAvailable from before the run, per sender (namespaces,
  veths, qdiscs and socket buffers are kernel memory that no RSS shows; other work on the
  machine moves it too), and the kernel's own parts: the slab's peak growth per sender and
  the peak memory of all TCP sockets' buffers (/proc/net/sockstat);
- the run's wall time and the goodput the client measured, as a fraction of the link.

Needs root and the namespace lock (only one emulation at a time on a machine). Other work on
the CPUs lowers the goodput at high rates: the load average is printed beside each run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def mem_available_kb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def kernel_kb() -> tuple[int, int]:
    """The slab (kB) and the memory of every TCP socket's buffers, all namespaces (kB)."""
    slab = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Slab:"):
            slab = int(line.split()[1])
    tcp = 0
    for line in Path("/proc/net/sockstat").read_text().splitlines():
        if line.startswith("TCP:"):
            words = line.split()
            tcp = int(words[words.index("mem") + 1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    return slab, tcp


def processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, RSS kB, command line) of every process."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            status = (d / "status").read_text()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        rss = int(fields.get("VmRSS", "0 kB").split()[0])
        out[int(d.name)] = (int(fields["PPid"]), rss, cmd)
    return out


def tree(root: int, procs: dict[int, tuple[int, int, str]]) -> set[int]:
    """`root` and its descendants."""
    mine = {root}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _, _) in procs.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                grew = True
    return mine


class Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.stop = threading.Event()
        self.base_kb = mem_available_kb()
        self.peak_drop_kb = 0
        self.peak_tree_kb = 0
        self.peak_servers = 0
        self.peak_server_kb = 0
        self.base_slab_kb = kernel_kb()[0]
        self.peak_slab_kb = 0
        self.peak_tcp_kb = 0

    def run(self) -> None:
        while not self.stop.is_set():
            procs = processes()
            mine = tree(self.pid, procs) & procs.keys()  # the run may have just ended
            self.peak_tree_kb = max(self.peak_tree_kb, sum(procs[p][1] for p in mine if p in procs))
            servers = [p for p in mine if "agent serve" in procs[p][2]]
            self.peak_servers = max(self.peak_servers, len(servers))
            self.peak_server_kb = max(self.peak_server_kb, sum(procs[p][1] for p in servers))
            self.peak_drop_kb = max(self.peak_drop_kb, self.base_kb - mem_available_kb())
            slab, tcp = kernel_kb()
            self.peak_slab_kb = max(self.peak_slab_kb, slab - self.base_slab_kb)
            self.peak_tcp_kb = max(self.peak_tcp_kb, tcp)
            time.sleep(0.1)


def one(senders: int, link: str, sru: str, blocks: int, extra: list[str]) -> dict[str, object]:
    argv = ["incast", "emulate", "--senders", str(senders), "--link", link, "--sru", sru]
    argv += ["--blocks", str(blocks), "--json", "-q", *extra]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(proc.pid)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    row: dict[str, object] = {
        "senders": senders,
        "link": link,
        "wall_s": round(wall, 1),
        "load_before": round(load, 2),
        "server_procs": sampler.peak_servers,
        "server_rss_mb_per_sender": round(sampler.peak_server_kb / 1024 / senders, 2),
        "tree_rss_peak_mb": round(sampler.peak_tree_kb / 1024, 1),
        "mem_drop_peak_mb": round(sampler.peak_drop_kb / 1024, 1),
        "mem_drop_mb_per_sender": round(sampler.peak_drop_kb / 1024 / senders, 2),
        "slab_mb_per_sender": round(sampler.peak_slab_kb / 1024 / senders, 2),
        "tcp_buffers_peak_mb": round(sampler.peak_tcp_kb / 1024, 1),
    }
    if proc.returncode != 0:
        row["error"] = err.strip().splitlines()[-1] if err.strip() else f"exit {proc.returncode}"
        return row
    record = json.loads(out)[0]
    report = record["report"]
    row["goodput_mbps"] = round(record["goodput_bps"] / 1e6, 1)
    row["goodput_fraction"] = round(record["goodput_fraction"], 3)
    row["timeouts"] = record["timeouts"]
    row["cpu_busy"] = report["machine"].get("cpu_busy")
    row["cpu_nice"] = report["machine"].get("cpu_nice")
    return row


def meminfo_kb(*keys: str) -> dict[str, int]:
    out = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in keys:
            out[name] = int(value.split()[0])
    return out


def testbed_cost(senders: int) -> dict[str, object]:
    """The kernel's memory for an idle testbed of ``senders`` with its servers listening:
    MemAvailable, slab and per-CPU memory before and after, per sender."""
    from incastlab import _core
    from incastlab.real import netns
    from incastlab.real.testbed import build
    from incastlab.scenario import from_dict

    keys = ("MemAvailable", "Slab", "Percpu", "VmallocUsed")
    sc = from_dict({"topology": {"senders": senders, "link": "100Mbps"}})
    netns.remove_leftovers()
    before = meminfo_kb(*keys)
    t0 = time.perf_counter()
    tb = build.build(sc)
    try:
        listen = [(ns, f"{ip}:9000") for ns, ip in zip(tb.sender_ns, tb.sender_ips, strict=True)]
        servers = _core.BlockServers(listen)
        built = time.perf_counter() - t0
        time.sleep(1.0)
        after = meminfo_kb(*keys)
        servers.stop()
    finally:
        t1 = time.perf_counter()
        netns.remove_testbed(tb.pid)
        removed = time.perf_counter() - t1
    row: dict[str, object] = {"senders": senders, "build_s": round(built, 1)}
    row["remove_s"] = round(removed, 1)
    row["mem_drop_mb_per_sender"] = round(
        (before["MemAvailable"] - after["MemAvailable"]) / 1024 / senders, 3
    )
    for k in ("Slab", "Percpu", "VmallocUsed"):
        if k in before and k in after:
            row[f"{k.lower()}_mb_per_sender"] = round((after[k] - before[k]) / 1024 / senders, 3)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--senders", default="16,64,256", help="sender counts, e.g. 16,64,256")
    ap.add_argument("--links", default="100Mbps", help="link rates, e.g. 100Mbps,1Gbps")
    ap.add_argument("--sru", default="256KB")
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument(
        "--buffer",
        help="the port buffer, e.g. 16MB: no drops, so the goodput "
        "shows what the CPUs sustain rather than incast",
    )
    ap.add_argument("--json", action="store_true", help="one JSON object per run")
    ap.add_argument(
        "--testbed-only",
        action="store_true",
        help="build each testbed with its servers listening, idle, and print the kernel's "
        "memory per sender and the build and removal times (no traffic)",
    )
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("emulate_scale: needs root (it builds network namespaces)", file=sys.stderr)
        return 1
    if a.testbed_only:
        for n in (int(x) for x in a.senders.split(",")):
            print(json.dumps(testbed_cost(n)), flush=True)
        return 0
    head = ("senders", "link", "wall_s", "server_procs", "server_rss_mb_per_sender")
    head += ("tree_rss_peak_mb", "mem_drop_mb_per_sender", "slab_mb_per_sender")
    head += ("tcp_buffers_peak_mb", "goodput_mbps", "goodput_fraction")
    head += ("timeouts", "cpu_busy", "cpu_nice", "load_before")
    if not a.json:
        print(" ".join(f"{h:>14}" for h in head))
    for link in a.links.split(","):
        for n in (int(x) for x in a.senders.split(",")):
            row = one(n, link, a.sru, a.blocks, ["--buffer", a.buffer] if a.buffer else [])
            if a.json:
                print(json.dumps(row), flush=True)
            else:
                print(" ".join(f"{row.get(h, '-')!s:>14}" for h in head), flush=True)
                if "error" in row:
                    print(f"  error: {row['error']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
