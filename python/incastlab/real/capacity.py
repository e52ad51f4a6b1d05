"""Whether this machine can hold an emulation of N senders, decided before anything is built.

A sender costs the kernel a network namespace, a veth pair, a bridge port, two tbf qdiscs,
two neighbour entries and its sockets' buffers, and costs the emulating process two file
descriptors (the listening and the accepted socket of its block server); the client in the
receiver's namespace holds one connection per sender. Each limit that would be crossed is
refused with one line naming ``topology.senders``, what is needed, what the machine has and
what to do. A key-value store (``mesh``) connects every host to every other, so its
descriptors, neighbour entries and socket buffers grow with the square of its hosts. The
soft descriptor limit is raised here, up to the hard limit, when that is all
it takes.

Every reading of the machine is a field of :class:`Machine`, so the rule is tested with
made-up machines, not by exhausting this one.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from incastlab.backends import BackendUnavailable
from incastlab.real.netns import NETNS_DIR

#: The kernel's memory per sender, bytes: namespace, veth pair, bridge port, qdiscs, routes,
#: listening and connected sockets without their data. Measured on an idle testbed of 256
#: senders with its servers listening (benchmarks/emulate_scale.py --testbed-only, Linux
#: 6.18): the slab grew 0.29 MB per sender and MemAvailable fell by up to 0.67 MB per sender
#: (other work on the machine moves it by as much); rounded up to 1 MB.
KERNEL_BYTES_PER_SENDER = 1_000_000
#: Socket buffers a sender's SRU may fill at once: the server's send buffer and the
#: client's receive buffer (the kernel's tcp_mem caps the sum, so this is an upper bound).
BUFFERS_PER_SRU = 2
#: The emulating process, the client, the guard and the probes, bytes.
BASE_BYTES = 400_000_000
#: What is left to the rest of the machine: the run must fit in this share of MemAvailable.
MEMORY_SHARE = 0.8
#: File descriptors besides the servers' sockets: pipes, captures, the extension's own.
BASE_FDS = 256
#: A Linux bridge takes at most this many ports (BR_MAX_PORTS); one is the receiver's.
BRIDGE_PORTS = 1024
GC_THRESH3 = "net.ipv4.neigh.default.gc_thresh3"


class CapacityError(BackendUnavailable):
    """This machine cannot hold the emulation asked for; the message says what to change."""


@dataclass(frozen=True)
class Machine:
    """What limits an emulation here."""

    mem_available: int
    nofile_soft: int
    nofile_hard: int
    #: user.max_net_namespaces and the network namespaces that exist now.
    netns_max: int
    netns_in_use: int
    #: The neighbour (ARP) table is one for all namespaces: its hard limit and its entries.
    neigh_gc_thresh3: int
    neigh_entries: int

    @classmethod
    def here(cls) -> Machine:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        infinite = resource.RLIM_INFINITY
        return cls(
            mem_available=_meminfo("MemAvailable"),
            nofile_soft=2**62 if soft == infinite else soft,
            nofile_hard=2**62 if hard == infinite else hard,
            netns_max=_int_file("/proc/sys/user/max_net_namespaces", 2**62),
            netns_in_use=_netns_in_use(),
            neigh_gc_thresh3=_int_file("/proc/sys/net/ipv4/neigh/default/gc_thresh3", 2**62),
            neigh_entries=_neigh_entries(),
        )


@dataclass(frozen=True)
class Needs:
    """What an emulation of ``senders`` takes."""

    senders: int
    memory: int
    fds: int
    netns: int
    bridge_ports: int
    neigh_entries: int


def needs(senders: int, sru: int, mesh: bool = False, connections: int | None = None) -> Needs:
    """What ``senders`` senders returning ``sru`` bytes each take; with ``mesh``, a
    key-value store of ``senders`` hosts with values of ``sru`` bytes, every host connected
    to every other (no receiver), or a shuffle's ``connections`` (one per reducer and map
    host) carrying map outputs of ``sru`` bytes."""
    if mesh:
        pairs = senders * max(0, senders - 1) if connections is None else connections
        return Needs(
            senders=senders,
            # A connection's two ends may each buffer a value.
            memory=BASE_BYTES + senders * KERNEL_BYTES_PER_SENDER + pairs * BUFFERS_PER_SRU * sru,
            # Both ends of every connection and a listening socket per host, in this process.
            fds=2 * pairs + senders + BASE_FDS,
            netns=senders + 1,
            bridge_ports=senders,
            # Every host learns every other.
            neigh_entries=pairs,
        )
    return Needs(
        senders=senders,
        memory=BASE_BYTES + senders * _per_sender(sru),
        # A listening and an accepted socket each in this process; the client (which
        # inherits this process's limit) holds one per sender.
        fds=2 * senders + BASE_FDS,
        netns=senders + 2,  # the senders, the receiver and the switch
        bridge_ports=senders + 1,
        # Each sender learns the receiver and the receiver learns each sender.
        neigh_entries=2 * senders,
    )


def _most_hosts(fits: Callable[[Needs], bool], sru: int) -> int:
    """The most hosts of a key-value store (``mesh``) whose needs ``fits`` accepts."""
    n = 2
    while n < BRIDGE_PORTS and fits(needs(n + 1, sru, mesh=True)):
        n += 1
    return n if fits(needs(n, sru, mesh=True)) else 0


def check(
    senders: int,
    sru: int,
    machine: Machine | None = None,
    mesh: bool = False,
    connections: int | None = None,
) -> Needs:
    """Raise :class:`CapacityError` (one line) if ``machine`` (default: this one) cannot
    hold the emulation (``mesh``: a key-value store or a shuffle, see :func:`needs`);
    otherwise what it needs."""
    m = Machine.here() if machine is None else machine
    n = needs(senders, sru, mesh, connections)
    needs_ = f"topology.senders = {senders}: the testbed needs"
    if mesh:
        _check_mesh(senders, sru, m, n, needs_, connections)
        return n
    if n.bridge_ports > BRIDGE_PORTS:
        raise CapacityError(
            f"{needs_} {n.bridge_ports} ports on its Linux bridge, more "
            f"than the {BRIDGE_PORTS} a bridge takes: emulate at most {BRIDGE_PORTS - 1} senders"
        )
    usable = int(m.mem_available * MEMORY_SHARE)
    if n.memory > usable:
        most = max(0, (usable - BASE_BYTES) // _per_sender(sru))
        raise CapacityError(
            f"{needs_} about {_mb(n.memory)} of memory ({_mb(n.memory - BASE_BYTES)} for "
            f"namespaces and socket buffers), more than {int(MEMORY_SHARE * 100)}% of the "
            f"{_mb(m.mem_available)} available here: emulate at most {most} senders at this "
            "SRU, or free memory"
        )
    if n.fds > m.nofile_hard:
        raise CapacityError(
            f"{needs_} {n.fds} open files (2 per sender and {BASE_FDS}), above this "
            f"process's hard limit of {m.nofile_hard} (ulimit -Hn): raise it or emulate at "
            f"most {max(0, (m.nofile_hard - BASE_FDS) // 2)} senders"
        )
    free_ns = m.netns_max - m.netns_in_use
    if n.netns > free_ns:
        raise CapacityError(
            f"{needs_} {n.netns} network namespaces, and user.max_net_namespaces = "
            f"{m.netns_max} leaves {max(0, free_ns)} (with {m.netns_in_use} in use): raise it "
            f"or emulate at most {max(0, free_ns - 2)} senders"
        )
    if n.neigh_entries + m.neigh_entries > m.neigh_gc_thresh3:
        want = 1 << (n.neigh_entries + m.neigh_entries).bit_length()
        raise CapacityError(
            f"{needs_} {n.neigh_entries} neighbour (ARP) entries beside the "
            f"{m.neigh_entries} the kernel holds, above {GC_THRESH3} = {m.neigh_gc_thresh3} "
            f"(one table for all namespaces): raise it (sysctl -w {GC_THRESH3}={want}) or "
            f"emulate at most {max(0, (m.neigh_gc_thresh3 - m.neigh_entries) // 2)} senders"
        )
    return n


def _check_mesh(
    senders: int, sru: int, m: Machine, n: Needs, needs_: str, connections: int | None
) -> None:
    """:func:`check` for a key-value store (every host holds a connection to every other, so
    descriptors, memory and neighbour entries grow with the square of the hosts) or a
    shuffle's ``connections``."""
    store = connections is None
    opened = senders * (senders - 1) if connections is None else connections
    usable = int(m.mem_available * MEMORY_SHARE)
    free_ns = m.netns_max - m.netns_in_use
    limits = (
        (
            n.memory <= usable,
            lambda x: x.memory <= usable,
            f"about {_mb(n.memory)} of memory (namespaces, and socket buffers of "
            f"{opened} connections), more than {int(MEMORY_SHARE * 100)}% of "
            f"the {_mb(m.mem_available)} available here",
        ),
        (
            n.fds <= m.nofile_hard,
            lambda x: x.fds <= m.nofile_hard,
            f"{n.fds} open files (both ends of every connection and {BASE_FDS}), above this "
            f"process's hard limit of {m.nofile_hard} (ulimit -Hn)",
        ),
        (
            n.netns <= free_ns,
            lambda x: x.netns <= free_ns,
            f"{n.netns} network namespaces, and user.max_net_namespaces = {m.netns_max} "
            f"leaves {max(0, free_ns)}",
        ),
        (
            n.neigh_entries + m.neigh_entries <= m.neigh_gc_thresh3,
            lambda x: x.neigh_entries + m.neigh_entries <= m.neigh_gc_thresh3,
            f"{n.neigh_entries} neighbour (ARP) entries beside the {m.neigh_entries} the "
            f"kernel holds, above {GC_THRESH3} = {m.neigh_gc_thresh3} (sysctl -w "
            f"{GC_THRESH3}={1 << (n.neigh_entries + m.neigh_entries).bit_length()})",
        ),
    )
    for ok, fits, what in limits:
        if not ok:
            fewer = (
                f"a store of at most {_most_hosts(fits, sru)} hosts"
                if store
                else "fewer hosts or reducers"
            )
            raise CapacityError(f"{needs_} {what}: raise the limit or emulate {fewer}")


def raise_nofile(fds: int) -> None:
    """Raise this process's soft descriptor limit to ``fds`` (not above the hard limit);
    the client and captures started from here inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < fds:
        target = fds if hard == resource.RLIM_INFINITY else min(fds, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def _per_sender(sru: int) -> int:
    return KERNEL_BYTES_PER_SENDER + BUFFERS_PER_SRU * sru


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


def _meminfo(key: str) -> int:
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name == key:
                return int(value.split()[0]) * 1024
    return 2**62


def _int_file(path: str, default: int) -> int:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return default


def _neigh_entries() -> int:
    """Entries of the IPv4 neighbour table, all namespaces (/proc/net/stat/arp_cache)."""
    try:
        lines = Path("/proc/net/stat/arp_cache").read_text().splitlines()
        return int(lines[1].split()[0], 16)
    except (OSError, ValueError, IndexError):
        return 0


def _netns_in_use() -> int:
    """Network namespaces that exist: those of processes and those `ip netns` names."""
    seen: set[str] = set()
    with contextlib.suppress(OSError):
        for d in os.scandir("/proc"):
            if d.name.isdigit():
                with contextlib.suppress(OSError):
                    seen.add(os.readlink(f"/proc/{d.name}/ns/net"))
    with contextlib.suppress(OSError):
        for f in os.scandir(NETNS_DIR):
            with contextlib.suppress(OSError):
                st = os.stat(f.path)
                seen.add(f"net:[{st.st_ino}]")
    return len(seen)
