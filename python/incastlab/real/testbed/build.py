"""The testbed itself: a star of network namespaces on a Linux bridge, its shapers, routes and
TCP sysctls, built for a scenario and removed afterwards, whatever happens.

N host namespaces (the senders) and, for synchronized reads, one receiver namespace hang off
a switch namespace (a Linux bridge) through veth pairs, built over netlink by iproute2's batch
mode (pyroute2 0.9's namespace handling raced in our tests; `ip -batch` is one netlink
session per namespace):

- the switch port towards the receiver (every switch port, in a mesh) is shaped to the link
  rate by a token bucket (tbf) whose queue limit is the scenario's port buffer in bytes: the
  incast bottleneck;
- each host's NIC is shaped to the link rate (or its ``topology.host_rate_cap``);
- RTOmin is set on every route (`rto_min`), the congestion control too (`congctl`, so
  accepted sockets start with it), and so is the initial window (`initcwnd`);
- the scenario's TCP switches (SACK, F-RTO, ECN) and those asked for (``--sysctl``) are set
  in every host's namespace.

Before anything is built, :mod:`incastlab.real.capacity` refuses (one line) a sender count
this machine's memory, file descriptors, namespaces, bridge or neighbour table cannot hold.

Everything made is named `il<pid>-…`. It is removed on the way out, on error, Ctrl-C and
SIGTERM; a run killed outright (SIGKILL) takes its servers with it (they are its sockets),
and its guard (:mod:`incastlab.real.guard`, started before the build) removes its
namespaces within seconds. Should the guard die too, the next run removes namespaces whose
pid is dead (only those: other runs' and other tools' namespaces are left alone).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.backends import BackendFailed
from incastlab.real import capacity
from incastlab.real.netns import remove_leftovers, remove_testbed
from incastlab.real.signals import sigterm_as_interrupt

if TYPE_CHECKING:
    from incastlab.scenario import Scenario

MTU_FRAME = 1514
#: Every shaper's token bucket: two frames. One frame would split every GSO packet (tbf
#: splits one larger than its bucket), but the shaper then loses the tokens of every late
#: timer and runs below its rate (a single flow: 77-88 Mbps of 100).
TBF_BURST = 2 * MTU_FRAME
#: GSO segments per packet on the hosts' NICs. tbf keeps a GSO packet no larger than its
#: bucket whole, so the kernel's two-segment GSO packets (slow start's two segments per ACK,
#: a response's last full and short segments) crossed the switch port as one queue entry,
#: dropped or kept together, which no switch does to a NIC's frames (seen in a capture of
#: the switch: 2896- and 1736-byte units). One segment per packet: each frame on its own.
GSO_MAX_SEGS = 1


class EmulationError(BackendFailed):
    """The testbed cannot be built here (not root, a kernel feature missing...)."""

    what = "emulation"


def check_can_emulate() -> None:
    """Raise EmulationError naming what is missing."""
    if sys.platform != "linux":
        raise EmulationError("emulation needs Linux network namespaces")
    if os.geteuid() != 0:
        raise EmulationError(
            "emulation builds network namespaces and qdiscs: run it as root "
            "(e.g. sudo incast emulate ...)"
        )
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise EmulationError(f"emulation needs the '{tool}' command (Debian: iproute2)")


@dataclass
class Testbed:
    """One built testbed: names, addresses and the processes running in it."""

    pid: int
    switch: str
    receiver: str
    sender_ns: list[str]
    sender_ips: list[str]
    receiver_ip: str
    #: The block servers of every sender (``_core.BlockServers``), once started.
    servers: Any = None
    #: Every host talks to every other (a key-value store's gets, a shuffle): every host is a
    #: sender namespace, every switch port a bottleneck, and there is no receiver namespace
    #: (``receiver`` names none).
    mesh: bool = False
    #: TCP sysctls set in every host's namespace on request (``--sysctl``), recorded with the run.
    asked: tuple[str, ...] = ()


#: Workloads in which every host talks to every other (no one receiver).
MESH_WORKLOADS = ("kv_gets", "shuffle")


def mesh_hosts(tb: Testbed, port: int) -> list[tuple[str | None, str]]:
    """Every host of a mesh testbed as ``(namespace, "ip:port")``, in host order."""
    return [(ns, f"{ip}:{port}") for ns, ip in zip(tb.sender_ns, tb.sender_ips, strict=True)]


def mesh_emulated(
    s: dict[str, Any], what: dict[str, str], not_emulated: str, measured: dict[str, Any]
) -> dict[str, Any]:
    """How a mesh testbed (a store's gets, a shuffle) emulated normalized scenario ``s``: what
    every such testbed does, the workload's own notes (``what``, and one more thing it does
    not emulate), and what was measured (kernel, qdiscs, RTT probe)."""
    tcp = s["tcp"]
    cc = tcp["congestion_control"]
    return {
        "link": "tbf at the rate on every NIC and on every switch port",
        "buffer": "tbf limit in bytes on every switch port (a port's own; no shared buffer)",
        "host_rate_cap": cap_note(s),
        "rto_min": f"route metric rto_min {route_rto_min_ms(tcp['rto_min'])}ms "
        "(Linux timers tick at HZ)",
        "congestion_control": f"{cc}: route metric congctl and TCP_CONGESTION on every socket",
        "initial_window": f"route metric initcwnd {tcp['initial_window']}",
        **what,
        "not_emulated": [
            "propagation delay (no netem here: the RTT is the veths' and CPUs')",
            "shared switch buffer (every port has its own tbf limit)",
            not_emulated,
        ],
        **measured,
    }


def route_rto_min_ms(rto_min_ps: int) -> int:
    """RTOmin as a route metric: whole milliseconds, at least 1 (the kernel ticks at HZ)."""
    return max(1, round(rto_min_ps / 1e9))


def host_ip(i: int) -> str:
    """Host ``i``'s address: 10.77.0.1 upwards (the receiver is 10.77.255.254)."""
    return f"10.77.{(i + 1) // 250}.{(i + 1) % 250 + 1}"


def ip_batch(commands: list[str], netns: str | None = None) -> None:
    """Run `ip` commands through one netlink session (`ip -batch`), in `netns` if given."""
    argv = ["ip", "-batch", "-"] if netns is None else ["ip", "-n", netns, "-batch", "-"]
    p = subprocess.run(argv, input="\n".join(commands) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        raise EmulationError(f"ip: {p.stderr.strip() or p.stdout.strip()}")


def shape(netns: str, dev: str, rate_bps: int, limit: int, burst: int) -> None:
    """A tbf on ``dev`` of namespace ``netns``: ``rate_bps``, a queue of ``limit`` bytes and a
    bucket of ``burst`` bytes."""
    p = subprocess.run(
        [
            "tc",
            "-n",
            netns,
            "qdisc",
            "replace",
            "dev",
            dev,
            "root",
            "tbf",
            "rate",
            f"{rate_bps}bit",
            "burst",
            str(burst),
            "limit",
            str(limit),
        ],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        raise EmulationError(f"tc (tbf) failed on {dev}: {p.stderr.strip()}")


def nic_shaper(s: dict[str, Any], link_bps: int) -> tuple[int, int]:
    """(rate in bit/s, bucket in bytes) of the tbf on a host NIC of ``link_bps`` in
    normalized scenario ``s``: the link rate, or ``topology.host_rate_cap``'s share of it
    (the simulator's rule) with a bucket of ``host_rate_burst``, at least :data:`TBF_BURST`."""
    cap = _core.host_rate_cap_bps(json.dumps(s), link_bps)
    if cap is None:
        return link_bps, TBF_BURST
    return cap, max(TBF_BURST, int(s["topology"]["host_rate_burst"]))


def cap_note(s: dict[str, Any]) -> str:
    """What the testbed made of ``topology.host_rate_cap`` (for the result's record)."""
    t = s["topology"]
    if t["host_rate_cap"] is None:
        return "none: every NIC's tbf at its link rate"
    rate, burst = nic_shaper(s, t["link"])
    return f"tbf at {rate} bit/s with a {burst}-byte bucket on every host's NIC"


#: What ``--sysctl`` may set in the hosts' namespaces: the kernel's per-namespace TCP switches.
SYSCTL_NAME = re.compile(r"net\.ipv4\.tcp_[a-z0-9_]+")


#: Sysctls the scenario sets from its own keys (see :func:`build`): ``--sysctl`` may not
#: contradict the scenario a run stores.
SCENARIO_SYSCTLS = {
    "net.ipv4.tcp_sack": "tcp.sack",
    "net.ipv4.tcp_frto": "tcp.frto",
    "net.ipv4.tcp_ecn": "tcp.ecn",
    "net.ipv4.tcp_congestion_control": "tcp.congestion_control",
    "net.ipv4.tcp_rto_min_us": "tcp.rto_min",
}


def check_sysctls(sysctls: Mapping[str, str]) -> dict[str, str]:
    """``sysctls`` as the emulator sets them in every host's namespace; an
    :class:`EmulationError` (one line) names the first that is not a ``net.ipv4.tcp_*`` key
    with a whole-number value, or that a scenario key owns."""
    out = {}
    for key, value in sysctls.items():
        if not SYSCTL_NAME.fullmatch(key):
            raise EmulationError(
                f"--sysctl {key}: only the hosts' TCP switches may be set "
                "(net.ipv4.tcp_*, e.g. net.ipv4.tcp_recovery=0)"
            )
        if key in SCENARIO_SYSCTLS:
            raise EmulationError(
                f"--sysctl {key}: the scenario sets it; use {SCENARIO_SYSCTLS[key]} instead"
            )
        if not re.fullmatch(r"-?\d+", str(value).strip()):
            raise EmulationError(f"--sysctl {key}={value}: the value must be a whole number")
        out[key] = str(value).strip()
    return out


def build(
    sc: Scenario, pid: int | None = None, extra_sysctls: Mapping[str, str] | None = None
) -> Testbed:
    """Build the star for `sc`: namespaces, veths, bridge, addresses, routes, qdiscs.

    Everything goes through netlink with iproute2's batch mode, one session per namespace.
    (pyroute2 0.9's NetNS raced here: links moved into a namespace intermittently did not
    show up there.)
    """
    pid = os.getpid() if pid is None else pid
    s = sc.normalized()
    t, tcp = s["topology"], s["tcp"]
    n = t["senders"]
    link = t["link"]
    rx_link = t["receiver_link"]
    port = t["receiver_buffer"] or t["buffer"]  # the emulated port is the receiver's
    buf = port["bytes"] or (port["packets"] or 44) * MTU_FRAME
    rto_ms = route_rto_min_ms(tcp["rto_min"])
    iw = tcp["initial_window"]
    # Per-namespace TCP switches the scenario names.
    sysctls: dict[str, int | str] = {
        "net.ipv4.tcp_sack": int(tcp["sack"]),
        "net.ipv4.tcp_frto": 2 if tcp["frto"] else 0,
        "net.ipv4.tcp_ecn": 1 if tcp["ecn"] else 0,
        # And those the user asks for (--sysctl, checked by the backend: none of the above).
        **(extra_sysctls or {}),
    }
    # The congestion control is a route metric too (not locked, so TCP_CONGESTION may still
    # set it): an accepted socket then starts with it instead of the namespace's default.
    # The default is the host's (bbr on some machines) and cannot be set to an unlisted cc
    # in a namespace; a socket switched from bbr by TCP_CONGESTION keeps bbr's pacing.
    cc = tcp["congestion_control"]
    tb = Testbed(
        pid=pid,
        switch=f"il{pid}-sw",
        receiver=f"il{pid}-r",
        sender_ns=[f"il{pid}-s{i}" for i in range(n)],
        sender_ips=[host_ip(i) for i in range(n)],
        receiver_ip="10.77.255.254",
        mesh=s["workload"]["kind"] in MESH_WORKLOADS,
        asked=tuple(extra_sysctls or {}),
    )
    hosts = [*tb.sender_ns] if tb.mesh else [*tb.sender_ns, tb.receiver]
    ips = [*tb.sender_ips] if tb.mesh else [*tb.sender_ips, tb.receiver_ip]
    ip_batch([f"netns add {name}" for name in [tb.switch, *hosts]])
    root = []
    for i, name in enumerate(hosts):
        a, b = f"il{pid}a{i}", f"il{pid}b{i}"
        root += [
            f"link add {a} type veth peer name {b}",
            f"link set {a} netns {name}",
            f"link set {b} netns {tb.switch}",
        ]
    ip_batch(root)
    sw = ["link add br0 type bridge", "link set br0 up"]
    for i, (name, addr) in enumerate(zip(hosts, ips, strict=True)):
        receiver = name == tb.receiver
        port = "pr" if receiver else f"p{i}"
        ip_batch(
            [
                f"link set il{pid}a{i} name eth0",
                f"link set eth0 gso_max_segs {GSO_MAX_SEGS}",
                f"addr add {addr}/16 dev eth0",
                "link set eth0 up",
                "link set lo up",
                f"route replace 10.77.0.0/16 dev eth0 rto_min {rto_ms}ms initcwnd {iw} "
                f"congctl {cc}",
            ],
            name,
        )
        settings = [f"{key}={value}" for key, value in sysctls.items()]
        done = subprocess.run(
            ["ip", "netns", "exec", name, "sysctl", "-q", "-w", *settings],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise EmulationError(
                f"cannot set {', '.join(sysctls)} in a namespace: {done.stderr.strip()}"
            )
        # The host's NIC at its link rate (or its cap), with a deep queue as a host's
        # qdisc has.
        rate, burst = nic_shaper(s, rx_link if receiver else link)
        shape(name, "eth0", rate, 1000 * MTU_FRAME, burst)
        sw += [f"link set il{pid}b{i} name {port}", f"link set {port} master br0 up"]
    ip_batch(sw, tb.switch)
    if tb.mesh:
        # In a store or a shuffle every host receives fan-in: every port is limited to the buffer.
        per_port = t["buffer"]
        limit = per_port["bytes"] or (per_port["packets"] or 44) * MTU_FRAME
        for i in range(n):
            shape(tb.switch, f"p{i}", link, limit, TBF_BURST)
        return tb
    # The incast bottleneck: the switch port towards the receiver, limited to the buffer.
    shape(tb.switch, "pr", rx_link, buf, TBF_BURST)
    return tb


def start_guard(pid: int) -> subprocess.Popen[bytes]:
    """The guard that removes run ``pid``'s testbed if this process dies first."""
    return subprocess.Popen(
        [sys.executable, "-m", "incastlab.real.guard", str(pid)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def release_guard(guard: subprocess.Popen[bytes]) -> None:
    """Tell the guard the testbed is gone (so it does nothing) and let it end."""
    with contextlib.suppress(OSError, ValueError):
        assert guard.stdin is not None
        guard.stdin.write(b"done")
        guard.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        guard.wait(timeout=10)


@contextlib.contextmanager
def open_testbed(
    sc: Scenario, need: capacity.Needs, sysctls: Mapping[str, str] | None = None
) -> Iterator[Testbed]:
    """Build a testbed for `sc`, whose workload needs ``need`` of this machine (its driver's
    :func:`capacity.check`), with ``sysctls`` (already through :func:`check_sysctls`) in
    every host's namespace, and remove it afterwards, whatever happens (a guard process
    removes it should this process be killed)."""
    check_can_emulate()
    capacity.raise_nofile(need.fds)
    remove_leftovers()
    pid = os.getpid()
    previous = signal.getsignal(signal.SIGTERM)
    sigterm_as_interrupt()
    tb = None
    guard = start_guard(pid)
    try:
        try:
            tb = build(sc, pid, sysctls)
        except Exception as e:
            raise EmulationError(f"could not build the testbed: {e}") from e
        yield tb
    finally:
        if tb is not None and tb.servers is not None:
            with contextlib.suppress(Exception):
                tb.servers.stop()
        remove_testbed(pid)
        release_guard(guard)
        signal.signal(signal.SIGTERM, previous)
