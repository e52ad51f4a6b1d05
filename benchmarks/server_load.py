"""Load on `incast serve` over loopback: idle, slow-reading and never-reading connections from
other addresses while `incast bench` reads, beside the same bench unloaded.

    python benchmarks/server_load.py [--idle 5000] [--slow 100] [--stalled 100]
    python benchmarks/server_load.py --flood 60 [--per-address 70] [--control] [--nice-flood]
    sudo python benchmarks/server_load.py --flood 60 --link 1Gbps
    python benchmarks/server_load.py --paired 122

Prints connections held by kind, the bench's goodput loaded and unloaded (and their ratio),
the server's peak resident memory and how long SIGTERM took to stop it.

With ``--flood SECONDS``: a lasting flood instead of a single wave. 16 source addresses each
hold idle, never-reading and slow-reading connections (``--per-address`` in all, 1,120 by
default against ``--max-conns 1024``) and reconnect each one as the server evicts or closes
it; the server's stderr is a pipe filled before it starts and never read. A legitimate client
(``incast bench``'s reader, four connections of 256 KB per block) reads blocks back to back for
12 s before the flood, through it, and 12 s after; it prints the client's goodput in every
whole second of the flood as a ratio to the unloaded median (and the unloaded seconds' own
spread: the machine's noise floor), the load average, the CPU the server and the flood's
generator used, the server's peak RSS, and how long SIGTERM took with ``--writers`` (1,000)
never-reading writers blocked. ``--control`` sends the flood to a second server instead (the
same load on the machine, none on the client's server): what the machine costs the client, as
against what the server does; ``--nice-flood`` runs the generator's threads at nice 19, as
hosts elsewhere would not take this machine's CPU. ``--link RATE`` (root) puts the server in a
namespace and the client behind a link of RATE, the flood on a link of its own
(benchmarks/server_netns.py): the client's unloaded rate is the link's, not the CPU's.

With ``--paired SECONDS``: the flood moves between the client's server and a decoy server every
6 s while the client reads; each flooded window is compared with the decoy windows beside it,
so that the machine's slower swings cancel within each pair.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import server_netns
from server_netns import Net


def request(nbytes: int) -> bytes:
    return b"INCB" + bytes([1, 1]) + b"\0\0" + struct.pack("<QQ", 1, nbytes)


def connect(src: str, port: int, dst: str = "127.0.0.1") -> socket.socket:
    s = socket.socket()
    s.bind((src, 0))
    s.connect((dst, port))
    return s


def held_open(s: socket.socket) -> bool:
    """Still open: a peek finds data or would block, not the end of the stream. (No Busy
    answers here: every address stays under the per-peer cap, the total under --max-conns.)"""
    try:
        s.setblocking(False)
        return bool(s.recv(1, socket.MSG_PEEK))
    except BlockingIOError:
        return True
    except OSError:
        return False


def bench(port: int, blocks: int) -> float:
    servers = ",".join([f"127.0.0.1:{port}"] * 4)
    out = subprocess.run(
        [
            "incast",
            "bench",
            "--servers",
            servers,
            "--sru",
            "256KB",
            "--blocks",
            str(blocks),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(json.loads(out)[0]["goodput_bps"])


FLOOD_ADDRESSES = server_netns.LOOPBACK_FLOOD
#: Whether the flood's generator threads run at nice 19 (``--nice-flood``).
NICE_FLOOD = [False]


def flood_address(
    src: str,
    target: list[int],
    n: int,
    done: threading.Event,
    made: list[int],
    dst: str = "127.0.0.1",
) -> None:
    """Hold ``n`` connections from ``src`` to port ``target[0]`` (half idle, a third never
    reading, the rest reading 1 KB every 10 ms), reconnecting each 50 ms after the server
    closes it; when ``target[0]`` changes, every connection moves there."""
    import os
    import select

    if NICE_FLOOD[0]:
        # Nice is per thread on Linux: the generator stands for hosts elsewhere, so on a
        # small machine it yields the CPU to the server and the legitimate client.
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    kinds = ["idle" if k % 6 < 3 else "never" if k % 6 < 5 else "slow" for k in range(n)]
    socks: list[socket.socket | None] = [None] * n
    closed_at = [0.0] * n
    slot: dict[int, int] = {}
    poller = select.poll()
    port = target[0]
    while not done.is_set():
        now = time.monotonic()
        if target[0] != port:
            port = target[0]
            for i, s in enumerate(socks):
                if s is not None:
                    poller.unregister(s)
                    slot.pop(s.fileno(), None)
                    s.close()
                    socks[i] = None
        for i in range(n):
            if socks[i] is None and now - closed_at[i] >= 0.05:
                try:
                    s = connect(src, port, dst)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    if kinds[i] != "idle":
                        s.sendall(request(64 << 20))
                    s.setblocking(False)
                except OSError:
                    closed_at[i] = now
                    continue
                made[0] += 1
                socks[i] = s
                watch = select.POLLRDHUP | select.POLLERR | select.POLLHUP
                poller.register(s, watch | (select.POLLIN if kinds[i] == "idle" else 0))
                slot[s.fileno()] = i
        for fd, _ in poller.poll(10):
            i = slot.pop(fd)
            poller.unregister(fd)
            gone = socks[i]
            if gone is not None:
                gone.close()
            socks[i] = None
            closed_at[i] = time.monotonic()
        for i, s in enumerate(socks):
            if s is not None and kinds[i] == "slow":
                with contextlib.suppress(OSError):
                    s.recv(1024)
    for s in socks:
        if s is not None:
            s.close()


def full_pipe() -> tuple[int, int]:
    """A pipe already full: the server's first log write would block."""
    import os

    r, w = os.pipe()
    os.set_blocking(w, False)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(w, b"x" * 65536)
    os.set_blocking(w, True)
    return r, w


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS")) / 1024


#: The legitimate client: ``incast bench``'s own reader (the Rust client), four connections
#: reading 256 KB each per block, blocks back to back for as long as asked; its raw result
#: (each block's start and duration) on standard output.
LEGIT = (
    "import json, sys\n"
    "from incastlab.real.bench import bench\n"
    "raw = bench(sys.argv[1].split(','), sru=256_000, blocks=10**9, "
    "time_limit_s=float(sys.argv[2]))\n"
    "print(json.dumps({k: raw[k] for k in ('bytes', 'block_starts_us', 'block_times_us')}))\n"
)


def per_second(port: int, seconds: int, net: Net | None = None) -> list[float]:
    """The legitimate client's goodput (bit/s) in each whole second of a run of ``seconds``
    (its first second and its last, partial one left out)."""
    net = net or Net()
    servers = ",".join([f"{net.client_dst}:{port}"] * 4)
    out = subprocess.run(
        [*net.client_exec, sys.executable, "-c", LEGIT, servers, str(seconds)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    raw = json.loads(out)
    starts, times = raw["block_starts_us"], raw["block_times_us"]
    each = raw["bytes"] * 8 / len(times)
    t0 = starts[0]
    bins = [0.0] * (seconds + 1)
    for start, dur in zip(starts, times, strict=True):
        bins[min(int((start + dur - t0) / 1e6), seconds)] += each
    return bins[1 : seconds - 1]


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quantile(xs: list[float], q: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * len(ys)))]


def blocked_writers(port: int, n: int, net: Net) -> list[socket.socket]:
    """``n`` connections from the flood's addresses that ask for 64 MB and never read."""
    socks = []
    for k in range(n):
        s = connect(net.flood_sources[k % len(net.flood_sources)], port, net.flood_dst)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(request(64 << 20))
        socks.append(s)
    return socks


def serve(stderr: int, net: Net | None = None) -> tuple[subprocess.Popen[str], int]:
    net = net or Net()
    srv = subprocess.Popen(
        [*net.server_exec, "incast", "serve", "--listen", net.listen, "--max-conns", "1024"],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    assert srv.stdout is not None
    return srv, int(srv.stdout.readline().rsplit(":", 1)[1])


def flood(seconds: float, per_address: int, writers: int, control: bool, net: Net) -> None:
    """Unloaded, flooded and unloaded again, the legitimate client's goodput per second; then
    ``writers`` blocked writers and SIGTERM. With ``control`` the flood goes to a second
    server: the same load on the machine, none on the legitimate client's server. ``net``
    says where the server, the client and the flood are (:mod:`server_netns`)."""
    import os
    import statistics

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    r, w = full_pipe()
    srv, port = serve(w, net)
    other, flood_port = serve(subprocess.DEVNULL, net) if control else (srv, port)
    before = per_second(port, 12, net)
    done = threading.Event()
    made = [0]
    threads = [
        threading.Thread(
            target=flood_address, args=(a, [flood_port], per_address, done, made, net.flood_dst)
        )
        for a in net.flood_sources
    ]
    for t in threads:
        t.start()
    time.sleep(2.0)  # the table full, the flood evicting itself
    load0, own0 = os.getloadavg()[0], time.process_time()
    srv0 = cpu_s(srv.pid) + (cpu_s(other.pid) if control else 0.0)
    peak = [rss_mb(srv.pid)]
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(1.0):
            peak[0] = max(peak[0], rss_mb(srv.pid))

    sampler = threading.Thread(target=sample)
    sampler.start()
    t_flood = time.monotonic()
    loaded = per_second(port, int(seconds), net)
    wall = time.monotonic() - t_flood
    srv_cpu = cpu_s(srv.pid) + (cpu_s(other.pid) if control else 0.0) - srv0
    own_cpu = time.process_time() - own0
    load1 = os.getloadavg()[0]
    sampling.set()
    sampler.join()
    done.set()
    for t in threads:
        t.join()
    if control:
        other.terminate()
        other.wait()
    after = per_second(port, 12, net)
    unloaded = statistics.median(before + after)
    ratios = [x / unloaded for x in loaded]
    held = blocked_writers(port, writers, net)
    time.sleep(2.0)
    still = sum(map(held_open, held))
    t0 = time.monotonic()
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=30)
    stop_s = time.monotonic() - t0
    for s in held:
        s.close()
    if control:
        print("CONTROL: the flood went to another server on this machine")
    print(
        f"legit client: {net.describe}\n"
        f"flood: {len(net.flood_sources)} addresses x {per_address} connections (idle, "
        f"never-reading, slow-reading; --max-conns 1024), {made[0]} connections made in "
        f"{seconds:.0f} s"
    )
    print(
        f"legit bench unloaded: {unloaded / 1e9:.2f} Gbps (median of {len(before + after)} "
        f"seconds before and after; those seconds' own ratios to it: lowest "
        f"{min(before + after) / unloaded:.2f}, p10 {quantile(before + after, 0.1) / unloaded:.2f})"
    )
    print(
        f"legit bench under the flood, {len(ratios)} whole seconds, every block completed: "
        f"ratio median {statistics.median(ratios):.2f}, p10 {quantile(ratios, 0.1):.2f}, "
        f"lowest {min(ratios):.2f}; seconds below 0.80: {sum(x < 0.8 for x in ratios)}"
    )
    print("  per second: " + " ".join(f"{x:.2f}" for x in ratios))
    print(
        f"machine: load average {load0:.1f} -> {load1:.1f} on {os.cpu_count()} CPUs; "
        f"server CPU {srv_cpu / wall:.0%} of one, flood generator CPU {own_cpu / wall:.0%}"
        + (" (niced)" if NICE_FLOOD[0] else "")
    )
    print(
        f"server: peak RSS {peak[0]:.1f} MB; stopped by SIGTERM in {stop_s:.2f} s with "
        f"{still} of {writers} never-reading writers blocked and stderr a full pipe nobody reads"
    )
    os.close(r)
    os.close(w)


def paired(seconds: int, per_address: int, window: int = 6) -> None:
    """The flood moved between the legitimate client's server and a decoy server on the same
    machine every ``window`` seconds while the client reads: each flooded window against the
    mean of the decoy windows beside it, so that the machine's own swings (other work) cancel
    in each pair and what remains is what the server does under the flood."""
    import statistics

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    srv, port = serve(subprocess.DEVNULL)
    decoy, decoy_port = serve(subprocess.DEVNULL)
    target = [decoy_port]
    done = threading.Event()
    made = [0]
    threads = [
        threading.Thread(target=flood_address, args=(a, target, per_address, done, made))
        for a in FLOOD_ADDRESSES
    ]
    for t in threads:
        t.start()
    time.sleep(2.0)

    def switch() -> None:  # window 0 on the decoy, 1 on the client's server, ...
        k = 0
        while not done.wait(window):
            k += 1
            target[0] = port if k % 2 else decoy_port

    switcher = threading.Thread(target=switch)
    switcher.start()
    bins = per_second(port, seconds)  # bins[i]: second i + 1 of the client's run
    done.set()
    switcher.join()
    for t in threads:
        t.join()
    srv.terminate()
    decoy.terminate()
    # Each window's inner seconds (its first and last left out: the move and the alignment of
    # the client's clock with the switcher's, within a few hundred ms).
    windows = [
        statistics.mean(bins[i - 1] for i in range(w * window + 1, (w + 1) * window - 1))
        for w in range(1, (len(bins) + 1) // window)
    ]
    first = 1  # windows[0] is window 1, flooded; odd windows flooded
    ratios = [
        windows[j] / statistics.mean([windows[j - 1], windows[j + 1]])
        for j in range(first + 1, len(windows) - 1, 2)
    ]
    print(
        f"paired: {len(ratios)} flooded {window} s windows against the decoy windows beside "
        f"them ({made[0]} flood connections made): ratio median {statistics.median(ratios):.2f}, "
        f"lowest {min(ratios):.2f}: " + " ".join(f"{r:.2f}" for r in ratios)
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle", type=int, default=5000)
    ap.add_argument("--slow", type=int, default=100)
    ap.add_argument("--stalled", type=int, default=100)
    ap.add_argument("--blocks", type=int, default=200)
    ap.add_argument("--flood", type=float, metavar="SECONDS", help="a lasting flood instead")
    ap.add_argument("--per-address", type=int, default=70)
    ap.add_argument("--writers", type=int, default=1000, help="blocked writers at SIGTERM")
    ap.add_argument("--control", action="store_true", help="flood another server instead")
    ap.add_argument("--nice-flood", action="store_true", help="the flood's threads at nice 19")
    ap.add_argument("--paired", type=int, metavar="SECONDS", help="flood moved to a decoy and back")
    ap.add_argument(
        "--link",
        metavar="RATE",
        help='with --flood: the server in a namespace, the client behind a link of RATE ("1Gbps")',
    )
    a = ap.parse_args()
    if a.paired:
        paired(a.paired, a.per_address)
        return
    if a.flood:
        NICE_FLOOD[0] = a.nice_flood
        with server_netns.namespaces(a.link) if a.link else server_netns.loopback() as net:
            flood(a.flood, a.per_address, a.writers, a.control, net)
        return
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    srv = subprocess.Popen(
        [
            *("incast", "serve", "--listen", "127.0.0.1:0", "--max-conns", "8192"),
            *("--first-request-timeout", "120s", "--write-timeout", "120s"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert srv.stdout is not None
    port = int(srv.stdout.readline().rsplit(":", 1)[1])
    unloaded = bench(port, a.blocks)
    idle = [connect(f"127.0.10.{1 + i // 100}", port) for i in range(a.idle)]
    stalled = []
    for i in range(a.stalled):
        s = connect(f"127.0.20.{1 + i}", port)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(request(64 << 20))
        stalled.append(s)
    slow = []
    for i in range(a.slow):
        s = connect(f"127.0.30.{1 + i}", port)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(request(64 << 20))
        s.setblocking(False)
        slow.append(s)
    stop = threading.Event()

    def read_slowly() -> None:  # 1 KB per connection every 10 ms: about 100 KB/s each
        while not stop.is_set():
            for s in slow:
                with contextlib.suppress(BlockingIOError):
                    s.recv(1024)
            time.sleep(0.01)

    reader = threading.Thread(target=read_slowly)
    reader.start()
    time.sleep(1.0)
    loaded = bench(port, a.blocks)
    counts = {
        k: sum(map(held_open, v)) for k, v in (("idle", idle), ("slow", slow), ("stalled", stalled))
    }
    stop.set()
    reader.join()
    status = Path(f"/proc/{srv.pid}/status").read_text()
    hwm = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM"))
    threads = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("Threads"))
    t0 = time.monotonic()
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=30)
    stop_s = time.monotonic() - t0
    for s in idle + slow + stalled:
        s.close()
    print(
        f"connections held: idle {counts['idle']}/{a.idle}, "
        f"slow-reading {counts['slow']}/{a.slow}, "
        f"never-reading {counts['stalled']}/{a.stalled}"
    )
    print(
        f"bench goodput: unloaded {unloaded / 1e9:.2f} Gbps, loaded {loaded / 1e9:.2f} Gbps "
        f"(ratio {loaded / unloaded:.2f})"
    )
    print(
        f"server: peak RSS {hwm / 1024:.1f} MB, {threads} threads, "
        f"stopped by SIGTERM in {stop_s:.2f} s"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
