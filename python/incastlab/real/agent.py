"""What runs inside the receiver's namespace of an emulation: the Rust client printing its raw
JSON result, or the base-RTT probe. Nothing else is imported (no CLI, no scenario parsing, no
rich), so it starts in the time the extension module takes to load.

    python -m incastlab.real.agent bench CONFIG_JSON      # see incastlab.real.bench.config
    python -m incastlab.real.agent ping HOST COUNT        # ICMP echo round trips, JSON seconds

The senders' block servers are not processes: they are sockets of the emulating process,
opened inside each sender namespace (``_core.BlockServers``).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import struct
import sys
import time

from incastlab import _core


def bench(config_json: str) -> int:
    """Run the client once and print its raw JSON result on stdout."""
    try:
        print(_core.bench(config_json))
    except (ValueError, RuntimeError) as e:
        print(f"incast bench: {e}", file=sys.stderr)
        return 1
    return 0


#: SO_TIMESTAMPING on Linux and its flags (Python does not name them): software timestamps
#: of sent and received packets, taken by the kernel at the device.
SO_TIMESTAMPING = 37
TIMESTAMPING = (1 << 1) | (1 << 3) | (1 << 4) | (1 << 11)  # TX, RX, software, TX without data


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(int(x) for x in struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def _stamp(ancillary: list[tuple[int, int, bytes]]) -> int | None:
    for level, kind, value in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING and len(value) >= 16:
            sec, nsec = struct.unpack("qq", value[:16])
            return int(sec) * 1_000_000_000 + int(nsec)
    return None


def _echo(s: socket.socket, host: str, ident: int, seq: int, timeout_s: float) -> float | None:
    """One echo's round trip in seconds, between the kernel's timestamps of the request
    leaving and the reply arriving (this process's time if the kernel gave none)."""
    body = bytes(56)
    header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    packet = struct.pack("!BBHHH", 8, 0, _checksum(header + body), ident, seq) + body
    sent = time.clock_gettime_ns(time.CLOCK_REALTIME)
    s.sendto(packet, (host, 0))
    tx = rx = None
    deadline = time.monotonic() + timeout_s
    while rx is None or tx is None:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        readable, _, _ = select.select([s], [], [s], min(left, 0.05))
        with contextlib.suppress(BlockingIOError):
            _, anc, _, _ = s.recvmsg(2048, 1024, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT)
            tx = _stamp(anc) or tx
            continue
        if not readable:
            if rx is not None:  # the reply came but no send timestamp: use our own clock
                break
            continue
        data, anc, _, _ = s.recvmsg(2048, 1024)
        ihl = (data[0] & 0x0F) * 4
        kind, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl : ihl + 8])
        if kind == 0 and rid == ident and rseq == seq:
            rx = _stamp(anc) or time.clock_gettime_ns(time.CLOCK_REALTIME)
    if rx is None:
        return None
    return (rx - (tx or sent)) / 1e9


def ping(host: str, count: int, interval_s: float = 0.01, timeout_s: float = 0.5) -> list[float]:
    """Round trips of ``count`` ICMP echo requests (56-byte payload, as ping sends) to
    ``host``, in seconds, from the kernel's software timestamps (so neither this process's
    send path nor its wake-up is counted). Needs a raw socket (root); lost echoes are left
    out."""
    ident = os.getpid() & 0xFFFF
    out: list[float] = []
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as s:
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, TIMESTAMPING)
        for seq in range(count):
            if (rtt := _echo(s, host, ident, seq, timeout_s)) is not None:
                out.append(rtt)
            time.sleep(interval_s)
    return out


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "bench":
        return bench(argv[1])
    if len(argv) == 3 and argv[0] == "ping":
        try:
            print(json.dumps(ping(argv[1], int(argv[2]))))
        except (OSError, ValueError) as e:
            print(f"incast ping: {e}", file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
