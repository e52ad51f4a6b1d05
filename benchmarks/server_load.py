"""Load on `incast serve` over loopback: idle, slow-reading and never-reading connections from
other addresses while `incast bench` reads, beside the same bench unloaded.

    python benchmarks/server_load.py [--idle 5000] [--slow 100] [--stalled 100]
    python benchmarks/server_load.py --flood 60 [--per-address 70]

Prints connections held by kind, the bench's goodput loaded and unloaded (and their ratio),
the server's peak resident memory and how long SIGTERM took to stop it.

With ``--flood SECONDS``: a lasting flood instead of a single wave. 16 source addresses each
hold idle, never-reading and slow-reading connections (``--per-address`` in all, 1,120 by
default against ``--max-conns 1024``) and reconnect each one as the server evicts or closes
it; the server's stderr is a pipe filled before it starts and never read. Benches run back to
back through the flood; it prints each one's ratio to the unloaded goodput (median of three
before the flood), the lowest and the median, the connections made, the server's peak RSS
sampled each second, and how long SIGTERM took with the writers still blocked.
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


def request(nbytes: int) -> bytes:
    return b"INCB" + bytes([1, 1]) + b"\0\0" + struct.pack("<QQ", 1, nbytes)


def connect(src: str, port: int) -> socket.socket:
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def held(s: socket.socket) -> bool:
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


FLOOD_ADDRESSES = [f"127.0.40.{i}" for i in range(1, 17)]


def flood_address(src: str, port: int, n: int, done: threading.Event, made: list[int]) -> None:
    """Hold ``n`` connections from ``src`` (half idle, a third never reading, the rest reading
    1 KB every 10 ms), reconnecting each 50 ms after the server closes it."""
    import select

    kinds = ["idle" if k % 6 < 3 else "never" if k % 6 < 5 else "slow" for k in range(n)]
    socks: list[socket.socket | None] = [None] * n
    closed_at = [0.0] * n
    slot: dict[int, int] = {}
    poller = select.poll()
    while not done.is_set():
        now = time.monotonic()
        for i in range(n):
            if socks[i] is None and now - closed_at[i] >= 0.05:
                try:
                    s = connect(src, port)
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


def flood(seconds: float, per_address: int, blocks: int) -> None:
    import statistics

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    r, w = full_pipe()
    srv = subprocess.Popen(
        ["incast", "serve", "--listen", "127.0.0.1:0", "--max-conns", "1024"],
        stdout=subprocess.PIPE,
        stderr=w,
        text=True,
    )
    assert srv.stdout is not None
    port = int(srv.stdout.readline().rsplit(":", 1)[1])
    unloaded = statistics.median(bench(port, blocks) for _ in range(3))
    done = threading.Event()
    made = [0]
    threads = [
        threading.Thread(target=flood_address, args=(a, port, per_address, done, made))
        for a in FLOOD_ADDRESSES
    ]
    for t in threads:
        t.start()
    time.sleep(2.0)
    ratios, peak = [], rss_mb(srv.pid)
    t_end = time.monotonic() + seconds
    while time.monotonic() < t_end:
        ratios.append(bench(port, blocks) / unloaded)  # fails loudly if a block fails
        peak = max(peak, rss_mb(srv.pid))
        print(
            f"  t={seconds - (t_end - time.monotonic()):5.1f}s ratio {ratios[-1]:.2f}", flush=True
        )
    t0 = time.monotonic()
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=30)
    stop_s = time.monotonic() - t0
    done.set()
    for t in threads:
        t.join()
    print(
        f"flood: {len(FLOOD_ADDRESSES)} addresses x {per_address} connections, "
        f"{made[0]} connections made in {seconds:.0f} s"
    )
    print(
        f"bench: unloaded {unloaded / 1e9:.2f} Gbps; {len(ratios)} benches under the flood, "
        f"every block completed; ratio lowest {min(ratios):.2f}, "
        f"median {statistics.median(ratios):.2f}"
    )
    print(
        f"server: peak RSS {peak:.1f} MB; stopped by SIGTERM in {stop_s:.2f} s "
        "(stderr a full pipe nobody reads, never-reading writers still connected)"
    )
    import os

    os.close(r)
    os.close(w)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle", type=int, default=5000)
    ap.add_argument("--slow", type=int, default=100)
    ap.add_argument("--stalled", type=int, default=100)
    ap.add_argument("--blocks", type=int, default=200)
    ap.add_argument("--flood", type=float, metavar="SECONDS", help="a lasting flood instead")
    ap.add_argument("--per-address", type=int, default=70)
    a = ap.parse_args()
    if a.flood:
        flood(a.flood, a.per_address, a.blocks)
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
        k: sum(map(held, v)) for k, v in (("idle", idle), ("slow", slow), ("stalled", stalled))
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
