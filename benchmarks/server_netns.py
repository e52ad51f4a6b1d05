"""Where `benchmarks/server_load.py --flood` runs its server, its legitimate client and its flood.

On loopback (the default) all three share one host and the client's reads are bound by the
CPU that copies their bytes: whatever else the machine does slows them, flood or not. With
``--link RATE`` (root) the server gets a network namespace of its own, as a storage server
would: the legitimate client reads from another namespace through a link of RATE (a token
bucket on the server's port towards it, as a NIC's line rate), and the flood comes from 16
addresses in the root namespace through a link of its own, as other hosts' traffic would.
The client's unloaded rate is then the link's, and a loss under the flood is what the server
lets the flood take from it, not what the machine's CPU costs.

The namespaces and veths are named as `incast emulate`'s are (``il<pid>-…``), so that
`incast emulate --cleanup` and the next run remove them if this process dies without doing so.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field

from incastlab.real import netns
from incastlab.units import parse_rate

#: The flood's source addresses on loopback.
LOOPBACK_FLOOD = [f"127.0.40.{i}" for i in range(1, 17)]
#: The queue at the client's link, bytes.
LINK_QUEUE_BYTES = 2 * 4 * 256_000


@dataclass
class Net:
    """How to reach the server from the legitimate client and from the flood."""

    #: Prepended to the server's and the legitimate client's commands (``ip netns exec …``).
    server_exec: list[str] = field(default_factory=list)
    client_exec: list[str] = field(default_factory=list)
    #: What `incast serve --listen` is given.
    listen: str = "127.0.0.1:0"
    #: The server's address as the legitimate client and the flood dial it.
    client_dst: str = "127.0.0.1"
    flood_dst: str = "127.0.0.1"
    flood_sources: list[str] = field(default_factory=lambda: list(LOOPBACK_FLOOD))
    #: What the legitimate client reads through, for the printout.
    describe: str = "loopback (the client's reads bound by the machine's CPU)"


def _ip(*args: str) -> None:
    p = subprocess.run(["ip", *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"server_load --link: ip {' '.join(args)}: {p.stderr.strip()}")


@contextlib.contextmanager
def loopback() -> Iterator[Net]:
    yield Net()


@contextlib.contextmanager
def namespaces(link: str) -> Iterator[Net]:
    """The server in a namespace, the legitimate client in another behind a link of ``link``
    (e.g. "1Gbps"), the flood from 16 root-namespace addresses on a second, unshaped link."""
    if os.geteuid() != 0:
        raise SystemExit("server_load --link: network namespaces need root")
    rate = int(parse_rate(link))
    # A killed earlier run's veths would still route the flood's subnet in this namespace.
    netns.remove_leftovers()
    pid = os.getpid()
    srv, cli = f"il{pid}-srv", f"il{pid}-cli"
    try:
        _ip("netns", "add", srv)
        _ip("netns", "add", cli)
        # The flood's link: root il<pid>a0 (16 sources) <-> the server's eth0.
        _ip("link", "add", f"il{pid}a0", "type", "veth", "peer", "name", f"il{pid}b0")
        _ip("link", "set", f"il{pid}b0", "netns", srv, "name", "eth0")
        sources = [f"10.231.0.{i}" for i in range(1, 17)]
        for a in sources:
            _ip("addr", "add", f"{a}/24", "dev", f"il{pid}a0")
        _ip("link", "set", f"il{pid}a0", "up")
        # The client's link: its eth0 <-> the server's eth1, shaped at the server's port.
        _ip("link", "add", f"il{pid}a1", "type", "veth", "peer", "name", f"il{pid}b1")
        _ip("link", "set", f"il{pid}a1", "netns", cli, "name", "eth0")
        _ip("link", "set", f"il{pid}b1", "netns", srv, "name", "eth1")
        for ns, dev, addr in (
            (srv, "eth0", "10.231.0.254/24"),
            (srv, "eth1", "10.232.0.254/24"),
            (cli, "eth0", "10.232.0.1/24"),
        ):
            _ip("-n", ns, "addr", "add", addr, "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
        for ns in (srv, cli):
            _ip("-n", ns, "link", "set", "lo", "up")
        # A NIC's line rate: a token bucket with 1 ms of burst, and a queue that holds the
        # client's whole fan-in (4 answers of 256 KB) twice over, so that its own incast
        # never loses a packet here and its rate is the link's.
        burst = max(rate // 8 // 1000, 16_000)
        p = subprocess.run(
            [
                *("tc", "-n", srv, "qdisc", "add", "dev", "eth1", "root", "tbf"),
                *("rate", f"{rate}bit", "burst", str(burst), "limit", str(LINK_QUEUE_BYTES)),
            ],
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            raise SystemExit(f"server_load --link: tc: {p.stderr.strip()}")
        yield Net(
            server_exec=["ip", "netns", "exec", srv],
            client_exec=["ip", "netns", "exec", cli],
            listen="0.0.0.0:0",
            client_dst="10.232.0.254",
            flood_dst="10.231.0.254",
            flood_sources=sources,
            describe=f"a {link} link from a namespace of its own (the flood on another link)",
        )
    finally:
        netns.remove_testbed(pid)
