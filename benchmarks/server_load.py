"""Load on `incast serve` over loopback: idle, slow-reading and never-reading connections from
other addresses while `incast bench` reads, beside the same bench unloaded.

    python benchmarks/server_load.py [--idle 5000] [--slow 100] [--stalled 100]

Prints connections held by kind, the bench's goodput loaded and unloaded (and their ratio),
the server's peak resident memory and how long SIGTERM took to stop it.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle", type=int, default=5000)
    ap.add_argument("--slow", type=int, default=100)
    ap.add_argument("--stalled", type=int, default=100)
    ap.add_argument("--blocks", type=int, default=200)
    a = ap.parse_args()
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
