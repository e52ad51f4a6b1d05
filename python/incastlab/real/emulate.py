"""The emulation backend: a scenario run by the real Linux TCP of this machine.

N sender namespaces and one receiver namespace hang off a switch namespace (a Linux bridge)
through veth pairs, built over netlink by iproute2's batch mode (pyroute2 0.9's namespace
handling raced in our tests; `ip -batch` is one netlink session per namespace):

- the switch port towards the receiver is shaped to the link rate by a token bucket (tbf)
  whose queue limit is the scenario's port buffer in bytes: the incast bottleneck;
- each sender's NIC is shaped to the link rate;
- RTOmin is set on every route (`rto_min`); the congestion control on every route (`congctl`,
  so accepted sockets start with it) and per socket (TCP_CONGESTION);
- the Rust block server listens in every sender namespace, all of them sockets of this one
  process served by one thread (a listening socket opened inside each namespace, see
  ``_core.BlockServers``): a sender costs kilobytes of this process and no process of its own
  (a Python server per namespace took 12.8 MB each); the Rust client runs in the receiver's
  namespace through the small :mod:`incastlab.real.agent` entry point (not the whole CLI);
- the result carries the kernel's evidence: TcpExt timeouts and retransmitted segments of the
  senders, and the bottleneck qdisc's drops and peak backlog (sampled);
- and what the kernel ran (``report["emulated"]["kernel"]``): the congestion control read back
  from a server's socket during the run (``ss -tin``), the senders' TCP sysctls (RACK/TLP,
  early retransmit, SACK, F-RTO, ECN, pacing ratios...), the release and HZ, the veths'
  offloads and the qdiscs; and the testbed's base round trip measured with small ICMP echoes
  on the idle testbed (``report["emulated"]["rtt_measured_s"]``), the RTT a simulation of the
  same scenario should be given.

Before anything is built, :mod:`incastlab.real.capacity` refuses (one line) a sender count
this machine's memory, file descriptors, namespaces, bridge or neighbour table cannot hold.

Everything made is named `il<pid>-…`. It is removed on the way out, on error, Ctrl-C and
SIGTERM; a run killed outright (SIGKILL) takes its servers with it (they are its sockets),
and its guard (:mod:`incastlab.real.guard`, started before the build) removes its
namespaces within seconds. Should the guard die too, the next run removes namespaces whose
pid is dead (only those: other runs' and other tools' namespaces are left alone).

This machine has no netem, so no delay is added: the RTT is what the veths and the CPUs give
(tens of µs). The result says what was and was not emulated.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.backends import BackendFailed, BackendUnavailable, ProgressFn, off_defaults
from incastlab.real import bench, capacity
from incastlab.real.netns import ours as ours
from incastlab.real.netns import remove_leftovers, remove_testbed
from incastlab.real.signals import sigterm_as_interrupt
from incastlab.result import Result

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


#: Above this rate the testbed on a 2-core machine stops behaving like a network: one shaped
#: flow reached 91% of 200 Mbps but 67% of 500 Mbps and 29% of 1 Gbps (README: envelope).
RATE_ENVELOPE_BPS = 200_000_000


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


def _ip(i: int) -> str:
    # Senders 10.77.0.1 upwards, the receiver 10.77.255.254.
    return f"10.77.{(i + 1) // 250}.{(i + 1) % 250 + 1}"


def _batch(commands: list[str], netns: str | None = None) -> None:
    """Run `ip` commands through one netlink session (`ip -batch`), in `netns` if given."""
    argv = ["ip", "-batch", "-"] if netns is None else ["ip", "-n", netns, "-batch", "-"]
    p = subprocess.run(argv, input="\n".join(commands) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        raise EmulationError(f"ip: {p.stderr.strip() or p.stdout.strip()}")


def _tc(netns: str, dev: str, rate_bps: int, limit: int, burst: int) -> None:
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
        # And those the user asks for (--sysctl, checked by run: none of the above).
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
        sender_ips=[_ip(i) for i in range(n)],
        receiver_ip="10.77.255.254",
        mesh=s["workload"]["kind"] in MESH_WORKLOADS,
        asked=tuple(extra_sysctls or {}),
    )
    hosts = [*tb.sender_ns] if tb.mesh else [*tb.sender_ns, tb.receiver]
    ips = [*tb.sender_ips] if tb.mesh else [*tb.sender_ips, tb.receiver_ip]
    _batch([f"netns add {name}" for name in [tb.switch, *hosts]])
    root = []
    for i, name in enumerate(hosts):
        a, b = f"il{pid}a{i}", f"il{pid}b{i}"
        root += [
            f"link add {a} type veth peer name {b}",
            f"link set {a} netns {name}",
            f"link set {b} netns {tb.switch}",
        ]
    _batch(root)
    sw = ["link add br0 type bridge", "link set br0 up"]
    for i, (name, addr) in enumerate(zip(hosts, ips, strict=True)):
        receiver = name == tb.receiver
        port = "pr" if receiver else f"p{i}"
        _batch(
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
        _tc(name, "eth0", rate, 1000 * MTU_FRAME, burst)
        sw += [f"link set il{pid}b{i} name {port}", f"link set {port} master br0 up"]
    _batch(sw, tb.switch)
    if tb.mesh:
        # In a store or a shuffle every host receives fan-in: every port is limited to the buffer.
        per_port = t["buffer"]
        limit = per_port["bytes"] or (per_port["packets"] or 44) * MTU_FRAME
        for i in range(n):
            _tc(tb.switch, f"p{i}", link, limit, TBF_BURST)
        return tb
    # The incast bottleneck: the switch port towards the receiver, limited to the buffer.
    _tc(tb.switch, "pr", rx_link, buf, TBF_BURST)
    return tb


#: The sender namespaces' TCP sysctls recorded with every run (those this kernel has).
SYSCTLS = (
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_autocorking",
    "net.ipv4.tcp_min_tso_segs",
    "net.ipv4.tcp_pacing_ss_ratio",
    "net.ipv4.tcp_pacing_ca_ratio",
    "net.ipv4.tcp_comp_sack_nr",
    "net.ipv4.tcp_comp_sack_delay_ns",
    "net.ipv4.tcp_comp_sack_slack_ns",
    "net.ipv4.tcp_rto_min_us",
    "net.ipv4.tcp_rto_max_ms",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_thin_linear_timeouts",
    "net.ipv4.tcp_retries2",
    "net.core.default_qdisc",
)

#: The block servers' deadlines for a connection's first request and between requests.
SERVER_IDLE_S = 60.0

#: Echo requests of the base-RTT probe, 10 ms apart.
RTT_PROBES = 20


def check_congestion_control(cc: str) -> None:
    """Raise EmulationError naming ``tcp.congestion_control`` if the kernel lacks ``cc``
    (after trying to load its module, ``tcp_<cc>``, where modprobe exists)."""
    path = "/proc/sys/net/ipv4/tcp_available_congestion_control"

    def available() -> list[str]:
        try:
            with open(path, encoding="ascii") as f:
                return f.read().split()
        except OSError:
            return []

    if cc in available():
        return
    if shutil.which("modprobe"):
        subprocess.run(["modprobe", "-q", f"tcp_{cc}"], capture_output=True)
        if cc in available():
            return
    have = " ".join(available()) or "unknown"
    raise EmulationError(
        f"tcp.congestion_control: this kernel has no {cc!r} (available: {have}; "
        f"the module tcp_{cc} could not be loaded)"
    )


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def kernel_hz() -> int | None:
    """CONFIG_HZ from the kernel's configuration (/proc/config.gz or /boot), if readable."""
    import gzip

    release = os.uname().release
    texts = []
    with contextlib.suppress(OSError), gzip.open("/proc/config.gz", "rt", encoding="utf-8") as f:
        texts.append(f.read())
    if (boot := _read(f"/boot/config-{release}")) is not None:
        texts.append(boot)
    for text in texts:
        if m := re.search(r"^CONFIG_HZ=(\d+)$", text, re.M):
            return int(m[1])
    return None


def _exec(ns: str, *argv: str) -> str:
    """stdout of ``argv`` run in namespace ``ns`` ("" if it failed)."""
    p = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else ""


def read_sysctls(ns: str, more: tuple[str, ...] = ()) -> dict[str, str]:
    """The :data:`SYSCTLS` (and ``more``) this kernel has, as namespace ``ns`` sees them."""
    out = {}
    keys = dict.fromkeys((*SYSCTLS, *more))
    for line in _exec(ns, "sysctl", "-e", *keys).splitlines():
        key, sep, value = line.partition(" = ")
        if sep:
            out[key.strip()] = " ".join(value.split())
    return out


def offloads(ns: str, dev: str = "eth0") -> dict[str, Any]:
    """A veth's offloads: ``ethtool -k``'s top-level features when ethtool is installed, and
    the GSO/TSO/GRO sizes of ``ip -d link`` always."""
    out: dict[str, Any] = {}
    if shutil.which("ethtool"):
        features = {}
        for line in _exec(ns, "ethtool", "-k", dev).splitlines():
            if line and not line[0].isspace() and ": " in line:
                name, _, value = line.partition(": ")
                if "[fixed]" not in value or value.startswith("on"):
                    features[name.strip()] = value.split()[0]
        out["ethtool"] = features
    with contextlib.suppress(ValueError, IndexError):
        link = json.loads(_exec(ns, "ip", "-d", "-j", "link", "show", dev))[0]
        sizes = ("mtu", "gso_max_size", "gso_max_segs", "tso_max_size", "tso_max_segs")
        out.update({k: link[k] for k in (*sizes, "gro_max_size") if k in link})
    return out


def qdiscs(ns: str) -> list[dict[str, Any]]:
    """The qdiscs of namespace ``ns`` (device, kind, options), statistics left out."""
    try:
        got = json.loads(_exec(ns, "tc", "-j", "qdisc", "show") or "[]")
    except ValueError:
        return []
    keep = ("dev", "kind", "handle", "root", "options")
    return [{k: q[k] for k in keep if k in q} for q in got if q.get("kind") != "noqueue"]


#: ``ss -tin`` fields of a socket: its congestion control and timers.
SS_RE = {
    "rto_ms": re.compile(r"\brto:([\d.]+)"),
    "rtt_ms": re.compile(r"\brtt:([\d.]+)/"),
    "min_rtt_ms": re.compile(r"\bminrtt:([\d.]+)"),
    "mss": re.compile(r"\bmss:(\d+)"),
    "cwnd": re.compile(r"\bcwnd:(\d+)"),
}
SS_CC = ("cubic", "reno", "bbr", "dctcp", "bic", "htcp", "vegas", "westwood", "illinois")


def server_sockets(ns: str, port: int = 9000) -> list[dict[str, Any]]:
    """The established sockets of the block server of namespace ``ns`` as ``ss -tin`` shows
    them: the congestion control each runs, its RTO and RTTs (ms), MSS and cwnd."""
    text = _exec(ns, "ss", "-tinH", "state", "established", f"( sport = :{port} )")
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line[:1].isspace():  # a socket's address line; its details follow, indented
            continue
        info: dict[str, Any] = {"cc": next((w for w in line.split() if w in SS_CC), None)}
        for key, rx in SS_RE.items():
            if m := rx.search(line):
                info[key] = float(m[1]) if "." in m[1] or key.endswith("ms") else int(m[1])
        out.append(info)
    return out


def measure_rtt(
    tb: Testbed, src: str | None = None, dst: str | None = None, count: int = RTT_PROBES
) -> dict[str, Any]:
    """The idle testbed's round trip: ICMP echoes (56-byte payload) from namespace ``src``
    (default: the receiver) to address ``dst`` (default: the first sender), through the
    switch and both shapers; min, median and max in seconds."""
    src = tb.receiver if src is None else src
    dst = tb.sender_ips[0] if dst is None else dst
    p = subprocess.run(
        [*_agent(src), "ping", dst, str(count)],
        capture_output=True,
        text=True,
    )
    try:
        samples = sorted(json.loads(p.stdout)) if p.returncode == 0 else []
    except ValueError:
        samples = []
    if not samples:
        return {"method": "ICMP echo", "samples": 0, "error": p.stderr.strip()[-200:]}
    return {
        "method": f"ICMP echo, 56-byte payload, {src} to {dst}, idle testbed, "
        "the kernel's software timestamps of request and reply",
        "samples": len(samples),
        "min_s": samples[0],
        "median_s": statistics.median(samples),
        "max_s": samples[-1],
    }


#: TcpExt counters of the senders reported per run: how losses were recovered.
RECOVERY_COUNTERS = (
    "TCPLossProbes",
    "TCPLossProbeRecovery",
    "TCPSackRecovery",
    "TCPLostRetransmit",
    "TCPSpuriousRTOs",
    "TCPDSACKRecv",
    "TCPSACKReorder",
)


def _cpu_times() -> list[int]:
    """The machine's CPU time in jiffies (/proc/stat's first line): user, nice, system,
    idle, iowait, irq, softirq, steal."""
    text = _read("/proc/stat") or "cpu"
    return [int(x) for x in text.splitlines()[0].split()[1:9]]


def _cpu_busy(before: list[int], after: list[int]) -> dict[str, float]:
    """Shares of the CPUs' time between two :func:`_cpu_times`: busy, and of it niced work
    (other jobs, e.g. a build) and softirq (the network)."""
    d = [b - a for a, b in zip(before, after, strict=False)]
    total = sum(d) or 1
    if len(d) < 8:
        return {}
    return {
        "cpu_busy": round(1 - (d[3] + d[4]) / total, 3),
        "cpu_nice": round(d[1] / total, 3),
        "cpu_softirq": round(d[6] / total, 3),
    }


def _netstats(namespaces: list[str]) -> list[dict[str, int]]:
    """TcpExt and Tcp counters of each namespace (read in one pass, by entering each)."""
    try:
        texts = _core.netns_read(namespaces, ["netstat", "snmp"])
    except RuntimeError as e:
        raise EmulationError(f"cannot read the senders' TCP counters: {e}") from None
    return [_counters(pair) for pair in texts]


def _counters(texts: list[str]) -> dict[str, int]:
    """TcpExt and Tcp counters from /proc/net/netstat and /proc/net/snmp texts."""
    out: dict[str, int] = {}
    for whole in texts:
        text = whole.splitlines()
        for head, vals in zip(text[::2], text[1::2], strict=False):
            keys, nums = head.split()[1:], vals.split()[1:]
            prefix = head.split(":")[0]
            for k, v in zip(keys, nums, strict=False):
                with contextlib.suppress(ValueError):
                    out[f"{prefix}.{k}"] = int(v)
    return out


def _qdisc(tb: Testbed) -> dict[str, int]:
    text = subprocess.run(
        ["ip", "netns", "exec", tb.switch, "tc", "-s", "-j", "qdisc", "show", "dev", "pr"],
        capture_output=True,
        text=True,
    ).stdout
    try:
        q = json.loads(text)[0]
    except (ValueError, IndexError):
        return {}
    return {"drops": int(q.get("drops", 0)), "backlog": int(q.get("backlog", 0))}


def sru_of(s: dict[str, Any]) -> int:
    """The most bytes one server returns per block in normalized scenario ``s``."""
    w = s["workload"]
    if w.get("sru") is not None:
        return int(w["sru"])
    if w.get("block"):
        return max(_core.block_split(w["block"], s["topology"]["senders"]))
    return 0


def check_capacity(sc: Scenario, machine: capacity.Machine | None = None) -> capacity.Needs:
    """Refuse (:class:`~incastlab.real.capacity.CapacityError`, one line) a scenario this
    machine cannot hold; what it needs otherwise."""
    s = sc.normalized()
    w, hosts = s["workload"], s["topology"]["senders"]
    if w["kind"] == "kv_gets":
        return capacity.check(hosts, kv_value_most(s), machine, mesh=True)
    if w["kind"] == "shuffle":
        from incastlab.real import shuffle

        opened = shuffle.layout(s)["connections"]
        return capacity.check(hosts, sru_of(s), machine, mesh=True, connections=opened)
    return capacity.check(hosts, sru_of(s), machine)


def kv_value_most(s: dict[str, Any]) -> int:
    """The largest value a key-value store of normalized scenario ``s`` returns."""
    cdf = s["workload"]["query_size_cdf"]
    return max((int(size) for size, _ in cdf), default=int(s["workload"]["value_size"]))


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
def testbed(sc: Scenario, sysctls: Mapping[str, str] | None = None) -> Iterator[Testbed]:
    """Build a testbed for `sc`, with ``sysctls`` (already through :func:`check_sysctls`) in
    every host's namespace, and remove it afterwards, whatever happens (a guard process
    removes it should this process be killed)."""
    check_can_emulate()
    need = check_capacity(sc)
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


def kernel_of(tb: Testbed) -> dict[str, Any]:
    """What the kernel of testbed ``tb`` runs, read before any traffic: its release and HZ,
    a sender's sysctls, the veths' offloads and the qdiscs."""
    port, where = (
        ("p0", "switch port to host 0") if tb.mesh else ("pr", "switch port to the receiver")
    )
    found = {"sender": qdiscs(tb.sender_ns[0]), "switch": qdiscs(tb.switch)}
    if not tb.mesh:
        found["receiver"] = qdiscs(tb.receiver)
    return {
        "release": os.uname().release,
        "hz": kernel_hz(),
        "sysctls": read_sysctls(tb.sender_ns[0], tb.asked),
        "offloads": {"sender eth0": offloads(tb.sender_ns[0]), where: offloads(tb.switch, port)},
        "qdiscs": found,
    }


def _agent(netns: str) -> list[str]:
    """The command line of the namespace agent run in ``netns``."""
    return ["ip", "netns", "exec", netns, sys.executable, "-m", "incastlab.real.agent"]


def run(
    sc: Scenario,
    *,
    warmup: int = 1,
    time_limit_s: float = 300.0,
    pcap_dir: str | None = None,
    monitor_ns: int | None = None,
    pcap_senders: int = 0,
    sysctls: Mapping[str, str] | None = None,
) -> Result:
    """Run the scenario (synchronized reads, a key-value store's gets or a shuffle) on real
    TCP in a fresh testbed, with ``sysctls`` (``--sysctl``) set in every host's namespace; with
    ``pcap_dir``, capture the bottleneck and the receiver there (and read the bottleneck's
    capture with `incast pcap`), and the first ``pcap_senders`` senders too; with
    ``monitor_ns``, sample the receiver's interface at that interval."""
    from pathlib import Path

    from incastlab.real import observe

    s = sc.normalized()
    w, tcp = s["workload"], s["tcp"]
    if w["kind"] not in ("sync_read", *MESH_WORKLOADS):
        raise EmulationError(
            f"workload.kind: emulation runs synchronized reads (sync_read), a key-value "
            f"store's gets (kv_gets) and a MapReduce shuffle (shuffle), not {w['kind']}"
        )
    if s["transport"] != "tcp" or s["topology"]["kind"] != "star":
        raise EmulationError("emulation builds a star of real TCP hosts (topology.kind = star)")
    if w["kind"] == "kv_gets" and w["kv_put_fraction"] > 0:
        raise EmulationError("workload.kv_put_fraction: puts are not emulated yet (allowed: 0)")
    if w["kind"] in MESH_WORKLOADS and (pcap_dir or monitor_ns):
        raise EmulationError(
            "--pcap and --monitor watch one receiver: a key-value store or a shuffle has none "
            f"(workload.kind = {w['kind']})"
        )
    sysctls = check_sysctls(sysctls or {})
    if w["kind"] == "shuffle":
        from incastlab.real import shuffle

        shuffle.check(s)
    cc = tcp["congestion_control"]  # the scenario's names are the kernel's
    check_can_emulate()
    check_congestion_control(cc)
    if w["kind"] == "kv_gets":
        from incastlab.real import kv

        report = kv.run(sc, time_limit_s=time_limit_s, sysctls=sysctls)
        return Result(scenario=s, report=report, version=_core.__version__, backend="emulate")
    if w["kind"] == "shuffle":
        from incastlab.real import shuffle

        report = shuffle.run(sc, time_limit_s=time_limit_s, sysctls=sysctls)
        return Result(scenario=s, report=report, version=_core.__version__, backend="emulate")
    # A striped block is split by the engine's one rule, so every server sends its own share.
    n = s["topology"]["senders"]
    sizes = [] if w["sru"] is not None else _core.block_split(w["block"], n)
    sru = sru_of(s)
    with testbed(sc, sysctls) as tb:
        try:
            # The one client connects to every sender before its first request, which at
            # hundreds of senders takes longer than a public server's 5 s grace. And a flow
            # of a collapsed incast may make no progress for longer than a public server's
            # 30 s write deadline (RTOmin 200 ms backed off 8 times is 25.6 s, and 51 s in
            # all: seen at 256 senders into a 64 KB port): the client's time limit bounds
            # the run instead.
            patience = max(SERVER_IDLE_S, time_limit_s)
            tb.servers = _core.BlockServers(
                [(ns, f"{ip}:9000") for ns, ip in zip(tb.sender_ns, tb.sender_ips, strict=True)],
                congestion=cc,
                first_request_timeout_s=patience,
                idle_timeout_s=patience,
                write_timeout_s=patience,
            )
        except (ValueError, RuntimeError) as e:
            raise EmulationError(f"the servers did not start: {e}") from None
        # What the kernel runs, read before any traffic: the round trip of the idle testbed,
        # the senders' sysctls, the veths' offloads and the qdiscs.
        rtt = measure_rtt(tb)
        kernel = kernel_of(tb)
        before = _netstats(tb.sender_ns)
        peak = {"backlog": 0}
        stop = threading.Event()
        # The servers' sockets as ss shows them, read back during the run (back to back at
        # first, until the connections are seen: a short run may last a few tens of ms;
        # then twice a second): their congestion control.
        sockets: list[list[dict[str, Any]]] = []

        def sample() -> None:
            next_ss = 0.0
            while not stop.is_set():
                peak["backlog"] = max(peak["backlog"], _qdisc(tb).get("backlog", 0))
                if time.monotonic() >= next_ss:
                    if seen := server_sockets(tb.sender_ns[0]):
                        sockets.append(seen)
                    next_ss = time.monotonic() + 0.5 if sockets else 0.0
                time.sleep(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        servers = [f"{ip}:9000" for ip in tb.sender_ips]
        config = bench.config(
            servers,
            sru=sru,
            sizes=sizes,
            blocks=w["blocks"],
            warmup=warmup,
            time_limit_s=time_limit_s,
            fanout_window=w["fanout_window"],
            stagger_s=w["request_stagger"] / 1e12,
            congestion=cc,
        )
        label = f"n{n}-seed{s['seed']}"
        try:
            caps = (
                observe.start_captures(tb, Path(pcap_dir), label, pcap_senders)
                if pcap_dir
                else None
            )
            mon = observe.start_monitor(tb, monitor_ns) if monitor_ns else None
        except observe.ObserveError as failed:
            raise EmulationError(str(failed)) from None
        cpu0 = _cpu_times()
        t0 = time.perf_counter()
        client = subprocess.run(
            [*_agent(tb.receiver), "bench", json.dumps(config)], capture_output=True, text=True
        )
        wall = time.perf_counter() - t0
        cpu1 = _cpu_times()
        observed: dict[str, Any] = {}
        if mon is not None and monitor_ns is not None:
            rx_link = float(s["topology"]["receiver_link"])
            observed["monitor"] = observe.stop_monitor(mon, monitor_ns, rx_link)
        if caps is not None:
            observed["captures"] = observe.stop_captures(caps)
        stop.set()
        sampler.join()
        if client.returncode != 0:
            # The servers' logs usually say why (e.g. a congestion control the kernel lacks).
            logs = tb.servers.logs()
            hint = f"; a server said: {logs[0]}" if logs else ""
            raise EmulationError(f"the client failed: {client.stderr.strip()}{hint}")
        after = _netstats(tb.sender_ns)
        q = _qdisc(tb)
        # A run too short to be caught: its connections are still open.
        if not sockets and (seen := server_sockets(tb.sender_ns[0])):
            sockets.append(seen)
    in_use = sorted({x["cc"] for seen in sockets for x in seen if x.get("cc")})
    if in_use and in_use != [cc]:
        raise EmulationError(
            f"tcp.congestion_control: the servers' sockets ran {', '.join(in_use)}, not {cc}"
        )
    kernel["servers_congestion_control"] = in_use[0] if in_use else None
    kernel["servers_sockets"] = sockets[-1] if sockets else []
    measured = bench.to_result(
        json.loads(client.stdout), s, backend="emulate", extra={"servers": servers}
    ).report

    def delta(key: str) -> int:
        return sum(a.get(key, 0) - b.get(key, 0) for a, b in zip(after, before, strict=True))

    if "captures" in observed:
        bottleneck = observed["captures"]["bottleneck"]
        bottleneck["analysis"] = observe.analyze_capture(
            bottleneck["file"], tb.receiver_ip, tcp["rto_min"]
        )
    # The client's own report (exact times, its time-limit flag), plus the kernel's evidence.
    out = dict(measured)
    out.update(observed)
    out.update(
        {
            "timeouts": delta("TcpExt.TCPTimeouts"),
            "retransmitted_segments": delta("Tcp.RetransSegs"),
            # How the senders recovered: RACK-TLP probes, SACK recoveries, spurious RTOs...
            "kernel_counters": {k: delta(f"TcpExt.{k}") for k in RECOVERY_COUNTERS},
            # How busy the machine was meanwhile (other work on its 2 cores shows here).
            "machine": {"loadavg_1min": os.getloadavg()[0], **_cpu_busy(cpu0, cpu1)},
            "drops": q.get("drops", 0),
            "bottleneck": {"drops": q.get("drops", 0), "max_bytes": peak["backlog"], "marks": 0},
            "wall_s": wall,
            "emulated": {
                "link": "tbf at the rate on every NIC and on the bottleneck port",
                "buffer": "tbf limit in bytes on the bottleneck port",
                "host_rate_cap": cap_note(s),
                "rto_min": f"route metric rto_min {route_rto_min_ms(tcp['rto_min'])}ms "
                "(Linux timers tick at HZ)",
                "congestion_control": f"{cc}: route metric congctl and TCP_CONGESTION on every "
                "socket",
                "initial_window": f"route metric initcwnd {tcp['initial_window']}",
                "sack, frto, ecn": "per-namespace sysctls",
                "protocol": f"requests of {_core.PROTOCOL_HEADER_BYTES} bytes; every "
                f"response's data preceded by a {_core.PROTOCOL_HEADER_BYTES}-byte header, in a "
                "write of its own (the scenario's request_size and response_header are unused)",
                "not_emulated": [
                    "propagation delay (no netem here: the RTT is the veths' and CPUs')",
                    "host_jitter, clock_granularity, rto_formula, recovery_cwnd, delayed_ack, "
                    "cwnd_restart and RTO randomization (the kernel's own behaviour)",
                ],
                "kernel": kernel,
                "rtt_probe": rtt,
                "rtt_measured_s": rtt.get("median_s"),
            },
        }
    )
    return Result(scenario=s, report=out, version=_core.__version__, backend="emulate")


#: Normalized-scenario fields the testbed builds or the kernel is told (the rest is the
#: kernel's own behaviour, or, like propagation delay, missing without netem).
HONOURED = {
    "topology.kind",
    "topology.senders",
    "topology.link",
    "topology.receiver_link",
    "topology.buffer",
    "tcp.rto_min",
    "tcp.congestion_control",
    "tcp.initial_window",
    "tcp.sack",
    "tcp.frto",
    "tcp.ecn",
    "transport",
    "workload.kind",
    "workload.sru",
    "workload.block",
    "workload.blocks",
    "workload.fanout_window",
    "workload.request_stagger",
    # The NICs' tbf at the cap (its bucket at least TBF_BURST).
    "topology.host_rate_cap",
    "topology.host_rate_burst",
    # The key-value store: the simulator's plan of gets, run on real TCP.
    "workload.kv_rate",
    "workload.kv_utilization",
    "workload.kv_replicas",
    "workload.kv_quorum",
    "workload.kv_placement",
    "workload.kv_duration",
    "workload.kv_warmup",
    "workload.value_size",
    "workload.query_size_cdf",
}


@dataclass(frozen=True)
class EmulateBackend:
    """Real Linux TCP in network namespaces as a :class:`~incastlab.backends.Backend`: needs
    root; one point at a time, as its testbed shares this machine's CPUs and kernel."""

    warmup: int = 1
    time_limit_s: float = 300.0
    #: Capture the bottleneck and the receiver with tcpdump into this directory.
    pcap_dir: str | None = None
    #: Sample the receiver's interface at this interval (nanoseconds).
    monitor_ns: int | None = None
    #: With ``pcap_dir``, capture the first this many senders' NICs too.
    pcap_senders: int = 0
    #: TCP sysctls set in every host's namespace beside the scenario's (``--sysctl``).
    sysctls: Mapping[str, str] = field(default_factory=dict)
    name: str = "emulate"
    title: str = "real Linux TCP (namespaces)"
    needs_root: bool = True
    predicts: bool = False
    parallel: bool = False

    def check(self) -> None:
        try:
            check_can_emulate()
        except EmulationError as e:
            raise BackendUnavailable(str(e)) from None

    def unsupported(self, scenario: Scenario) -> list[str]:
        # The RTT is the veths' and CPUs' whatever the scenario says: no netem here.
        return sorted({*off_defaults(scenario, HONOURED), "topology.rtt"})

    def run(self, scenario: Scenario, *, progress: ProgressFn | None = None) -> Result:
        return run(
            scenario,
            warmup=self.warmup,
            time_limit_s=self.time_limit_s,
            pcap_dir=self.pcap_dir,
            monitor_ns=self.monitor_ns,
            pcap_senders=self.pcap_senders,
            sysctls=self.sysctls,
        )
