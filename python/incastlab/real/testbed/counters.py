"""The testbed's counters, read at a run's start and end: every namespace's TCP counters
(TcpExt and Tcp of /proc/net/netstat and /proc/net/snmp), the switch ports' and NICs' qdiscs
(bytes sent, drops, backlog) and the machine's CPU time, so a driver reports what moved."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from typing import Any

from incastlab import _core
from incastlab.real.testbed.build import EmulationError, Testbed
from incastlab.real.testbed.kernel import read_text

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


def cpu_times() -> list[int]:
    """The machine's CPU time in jiffies (/proc/stat's first line): user, nice, system,
    idle, iowait, irq, softirq, steal."""
    text = read_text("/proc/stat") or "cpu"
    return [int(x) for x in text.splitlines()[0].split()[1:9]]


def cpu_busy(before: list[int], after: list[int]) -> dict[str, float]:
    """Shares of the CPUs' time between two :func:`cpu_times`: busy, and of it niced work
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


def netstats(namespaces: list[str]) -> list[dict[str, int]]:
    """TcpExt and Tcp counters of each namespace (read in one pass, by entering each)."""
    try:
        texts = _core.netns_read(namespaces, ["netstat", "snmp"])
    except RuntimeError as e:
        raise EmulationError(f"cannot read the senders' TCP counters: {e}") from None
    return [parse_counters(pair) for pair in texts]


def parse_counters(texts: list[str]) -> dict[str, int]:
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


def bottleneck_qdisc(tb: Testbed) -> dict[str, int]:
    """The drops and the backlog (bytes) of the switch port towards the receiver, now."""
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


def qdisc_bytes_drops(ns: str, dev: str | None = None) -> dict[str, tuple[int, int]]:
    """Per device of namespace ``ns`` (or only ``dev``): its root qdisc's (bytes sent,
    drops)."""
    argv = ["tc", "-n", ns, "-s", "-j", "qdisc", "show"] + (["dev", dev] if dev else [])
    text = subprocess.run(argv, capture_output=True, text=True).stdout
    try:
        got = json.loads(text or "[]")
    except ValueError:
        return {}
    # Shown for one device, a qdisc does not name it.
    return {
        q.get("dev", dev): (int(q.get("bytes", 0)), int(q.get("drops", 0)))
        for q in got
        if q.get("root") and q.get("dev", dev)
    }


def mesh_snapshot(tb: Testbed) -> dict[str, Any]:
    """Every counter a mesh workload's figures are made of, read now: the switch ports' and
    the NICs' qdiscs (bytes sent, drops), and every namespace's TCP counters."""
    ports = qdisc_bytes_drops(tb.switch)
    nics = [qdisc_bytes_drops(ns, "eth0").get("eth0", (0, 0)) for ns in tb.sender_ns]
    return {
        "ports": [ports.get(f"p{i}", (0, 0)) for i in range(len(tb.sender_ns))],
        "nics": nics,
        "tcp": netstats(tb.sender_ns),
        "at": time.monotonic(),
    }
