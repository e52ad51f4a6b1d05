"""What the testbed's kernel runs, read back rather than assumed: its release and HZ, the
hosts' TCP sysctls, the veths' offloads, the qdiscs, the congestion control a server's
sockets run (``ss -tin``), and the idle testbed's base round trip (ICMP echoes), the RTT a
simulation of the same scenario should be given."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from typing import Any

from incastlab.real.testbed.build import EmulationError, Testbed

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


def read_text(path: str) -> str | None:
    """The stripped text of file ``path``, None if it cannot be read."""
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
    if (boot := read_text(f"/boot/config-{release}")) is not None:
        texts.append(boot)
    for text in texts:
        if m := re.search(r"^CONFIG_HZ=(\d+)$", text, re.M):
            return int(m[1])
    return None


def run_in(ns: str, *argv: str) -> str:
    """stdout of ``argv`` run in namespace ``ns`` ("" if it failed)."""
    p = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else ""


def read_sysctls(ns: str, more: tuple[str, ...] = ()) -> dict[str, str]:
    """The :data:`SYSCTLS` (and ``more``) this kernel has, as namespace ``ns`` sees them."""
    out = {}
    keys = dict.fromkeys((*SYSCTLS, *more))
    for line in run_in(ns, "sysctl", "-e", *keys).splitlines():
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
        for line in run_in(ns, "ethtool", "-k", dev).splitlines():
            if line and not line[0].isspace() and ": " in line:
                name, _, value = line.partition(": ")
                if "[fixed]" not in value or value.startswith("on"):
                    features[name.strip()] = value.split()[0]
        out["ethtool"] = features
    with contextlib.suppress(ValueError, IndexError):
        link = json.loads(run_in(ns, "ip", "-d", "-j", "link", "show", dev))[0]
        sizes = ("mtu", "gso_max_size", "gso_max_segs", "tso_max_size", "tso_max_segs")
        out.update({k: link[k] for k in (*sizes, "gro_max_size") if k in link})
    return out


def qdiscs(ns: str) -> list[dict[str, Any]]:
    """The qdiscs of namespace ``ns`` (device, kind, options), statistics left out."""
    try:
        got = json.loads(run_in(ns, "tc", "-j", "qdisc", "show") or "[]")
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
    text = run_in(ns, "ss", "-tinH", "state", "established", f"( sport = :{port} )")
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
        [*agent_command(src), "ping", dst, str(count)],
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


def agent_command(netns: str) -> list[str]:
    """The command line of the namespace agent run in ``netns``."""
    return ["ip", "netns", "exec", netns, sys.executable, "-m", "incastlab.real.agent"]


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
