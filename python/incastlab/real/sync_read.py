"""Synchronized reads (``workload.kind = "sync_read"``) on real Linux TCP: one client, N
block servers, the incast of the papers.

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

With ``pcap_dir`` the bottleneck, the receiver and the first senders are captured
(:mod:`incastlab.real.testbed.captures`); with ``monitor_ns`` the receiver's interface is
sampled as `incast monitor` samples it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.real import bench, capacity
from incastlab.real.signals import run_watching_signals
from incastlab.real.testbed import captures, counters, kernel
from incastlab.real.testbed.build import (
    EmulationError,
    Testbed,
    cap_note,
    open_testbed,
    route_rto_min_ms,
)

if TYPE_CHECKING:
    from incastlab.scenario import Scenario

#: Where every sender's block server listens.
BLOCK_PORT = 9000
#: The block servers' deadlines for a connection's first request and between requests.
SERVER_IDLE_S = 60.0


def sru_of(s: dict[str, Any]) -> int:
    """The most bytes one server returns per block in normalized scenario ``s``."""
    w = s["workload"]
    if w.get("sru") is not None:
        return int(w["sru"])
    if w.get("block"):
        return max(_core.block_split(w["block"], s["topology"]["senders"]))
    return 0


def needs(s: dict[str, Any], machine: capacity.Machine | None = None) -> capacity.Needs:
    """What normalized scenario ``s``'s reads need of this machine (refused with a
    :class:`~incastlab.real.capacity.CapacityError` if it cannot hold them)."""
    return capacity.check(s["topology"]["senders"], sru_of(s), machine)


def start_servers(tb: Testbed, cc: str, time_limit_s: float) -> None:
    """The block servers of every sender of ``tb``, running congestion control ``cc``."""
    try:
        # The one client connects to every sender before its first request, which at
        # hundreds of senders takes longer than a public server's 5 s grace. And a flow
        # of a collapsed incast may make no progress for longer than a public server's
        # 30 s write deadline (RTOmin 200 ms backed off 8 times is 25.6 s, and 51 s in
        # all: seen at 256 senders into a 64 KB port): the client's time limit bounds
        # the run instead.
        patience = max(SERVER_IDLE_S, time_limit_s)
        tb.servers = _core.BlockServers(
            [
                (ns, f"{ip}:{BLOCK_PORT}")
                for ns, ip in zip(tb.sender_ns, tb.sender_ips, strict=True)
            ],
            congestion=cc,
            first_request_timeout_s=patience,
            idle_timeout_s=patience,
            write_timeout_s=patience,
        )
    except (ValueError, RuntimeError) as e:
        raise EmulationError(f"the servers did not start: {e}") from None


class Sampler:
    """The bottleneck's backlog (its peak) and the servers' sockets as ss shows them, read
    during the run (back to back at first, until the connections are seen: a short run may
    last a few tens of ms; then twice a second): their congestion control."""

    def __init__(self, tb: Testbed) -> None:
        self.tb = tb
        self.peak_backlog = 0
        self.sockets: list[list[dict[str, Any]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        next_ss = 0.0
        while not self._stop.is_set():
            backlog = counters.bottleneck_qdisc(self.tb).get("backlog", 0)
            self.peak_backlog = max(self.peak_backlog, backlog)
            if time.monotonic() >= next_ss:
                if seen := kernel.server_sockets(self.tb.sender_ns[0], BLOCK_PORT):
                    self.sockets.append(seen)
                next_ss = time.monotonic() + 0.5 if self.sockets else 0.0
            time.sleep(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        # A run too short to be caught: its connections are still open.
        if not self.sockets and (seen := kernel.server_sockets(self.tb.sender_ns[0], BLOCK_PORT)):
            self.sockets.append(seen)


def run(
    sc: Scenario,
    *,
    warmup: int = 1,
    time_limit_s: float = 300.0,
    pcap_dir: str | None = None,
    monitor_ns: int | None = None,
    pcap_senders: int = 0,
    sysctls: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run the scenario's synchronized reads on real TCP in a fresh testbed, with ``sysctls``
    (checked) in every host's namespace; with ``pcap_dir``, capture the bottleneck and the
    receiver there (and read the bottleneck's capture with `incast pcap`), and the first
    ``pcap_senders`` senders too; with ``monitor_ns``, sample the receiver's interface at that
    interval. The report (the caller wraps it in a Result)."""
    s = sc.normalized()
    w, tcp = s["workload"], s["tcp"]
    cc = tcp["congestion_control"]  # the scenario's names are the kernel's
    # A striped block is split by the engine's one rule, so every server sends its own share.
    n = s["topology"]["senders"]
    sizes = [] if w["sru"] is not None else _core.block_split(w["block"], n)
    with open_testbed(sc, needs(s), sysctls) as tb:
        start_servers(tb, cc, time_limit_s)
        # What the kernel runs, read before any traffic: the round trip of the idle testbed,
        # the senders' sysctls, the veths' offloads and the qdiscs.
        rtt = kernel.measure_rtt(tb)
        facts = kernel.kernel_of(tb)
        before = counters.netstats(tb.sender_ns)
        sampler = Sampler(tb)
        servers = [f"{ip}:{BLOCK_PORT}" for ip in tb.sender_ips]
        config = bench.config(
            servers,
            sru=sru_of(s),
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
                captures.start_captures(tb, Path(pcap_dir), label, pcap_senders)
                if pcap_dir
                else None
            )
            mon = captures.start_monitor(tb, monitor_ns) if monitor_ns else None
        except captures.ObserveError as failed:
            raise EmulationError(str(failed)) from None
        cpu0 = counters.cpu_times()
        t0 = time.perf_counter()
        client = run_watching_signals(
            [*kernel.agent_command(tb.receiver), "bench", json.dumps(config)]
        )
        wall = time.perf_counter() - t0
        cpu1 = counters.cpu_times()
        observed: dict[str, Any] = {}
        if mon is not None and monitor_ns is not None:
            rx_link = float(s["topology"]["receiver_link"])
            record = Path(pcap_dir) / f"{label}-monitor.parquet" if pcap_dir else None
            observed["monitor"] = captures.stop_monitor(mon, monitor_ns, rx_link, record)
        if caps is not None:
            observed["captures"] = captures.stop_captures(caps)
        sampler.stop()
        if client.returncode != 0:
            # The servers' logs usually say why (e.g. a congestion control the kernel lacks).
            logs = tb.servers.logs()
            if not logs:  # the log's writer thread may be a moment behind the client
                time.sleep(0.2)
                logs = tb.servers.logs()
            hint = f"; a server said: {logs[0]}" if logs else ""
            raise EmulationError(f"the client failed: {client.stderr.strip()}{hint}")
        after = counters.netstats(tb.sender_ns)
        q = counters.bottleneck_qdisc(tb)
    sockets = sampler.sockets
    in_use = sorted({x["cc"] for seen in sockets for x in seen if x.get("cc")})
    if in_use and in_use != [cc]:
        raise EmulationError(
            f"tcp.congestion_control: the servers' sockets ran {', '.join(in_use)}, not {cc}"
        )
    facts["servers_congestion_control"] = in_use[0] if in_use else None
    facts["servers_sockets"] = sockets[-1] if sockets else []
    measured = bench.to_result(
        json.loads(client.stdout), s, backend="emulate", extra={"servers": servers}
    ).report

    def delta(key: str) -> int:
        return sum(a.get(key, 0) - b.get(key, 0) for a, b in zip(after, before, strict=True))

    if "captures" in observed:
        bottleneck = observed["captures"]["bottleneck"]
        bottleneck["analysis"] = captures.analyze_capture(
            bottleneck["file"], tb.receiver_ip, tcp["rto_min"]
        )
    # The client's own report (exact times, its time-limit flag), plus the kernel's evidence.
    out = dict(measured)
    out.update(observed)
    out.update(probe_stalls(observed, w["blocks"]))
    out.update(
        {
            "timeouts": delta("TcpExt.TCPTimeouts"),
            "retransmitted_segments": delta("Tcp.RetransSegs"),
            # How the senders recovered: RACK-TLP probes, SACK recoveries, spurious RTOs...
            "kernel_counters": {k: delta(f"TcpExt.{k}") for k in counters.RECOVERY_COUNTERS},
            # How busy the machine was meanwhile (other work on its 2 cores shows here).
            "machine": {"loadavg_1min": os.getloadavg()[0], **counters.cpu_busy(cpu0, cpu1)},
            "drops": q.get("drops", 0),
            "bottleneck": {
                "drops": q.get("drops", 0),
                "max_bytes": sampler.peak_backlog,
                "marks": 0,
            },
            "wall_s": wall,
            "emulated": emulated(s, facts, rtt),
        }
    )
    return out


def probe_stalls(observed: dict[str, Any], blocks: int) -> dict[str, Any]:
    """The measured blocks' stalls without a timeout (a block silent for RTOmin/2 or more
    with no RTO: a loss probe the kernel caps at the RTO, a delayed ACK), as `incast pcap`
    reads them on the bottleneck's capture; the kernel's counters cannot tell them apart
    from timeouts per block, so without ``--pcap`` they are not reported. The capture holds
    the warm-up blocks first: the run's are its last ``blocks``."""
    analysis = observed.get("captures", {}).get("bottleneck", {}).get("analysis", {})
    per_block = analysis.get("block_probe_stalls")
    if not per_block or len(per_block) < blocks:
        return {}
    mine = per_block[-blocks:]
    if not any(mine):
        return {}
    return {"probe_stalls": sum(mine), "block_probe_stalls": mine}


def emulated(s: dict[str, Any], facts: dict[str, Any], rtt: dict[str, Any]) -> dict[str, Any]:
    """How the testbed emulated normalized scenario ``s``'s reads, and what was measured: the
    kernel's ``facts`` and the RTT probe ``rtt``."""
    tcp = s["tcp"]
    cc = tcp["congestion_control"]
    return {
        "link": "tbf at the rate on every NIC and on the bottleneck port",
        "buffer": "tbf limit in bytes on the bottleneck port",
        "host_rate_cap": cap_note(s),
        "rto_min": f"route metric rto_min {route_rto_min_ms(tcp['rto_min'])}ms "
        "(Linux timers tick at HZ)",
        "congestion_control": f"{cc}: route metric congctl and TCP_CONGESTION on every socket",
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
        "kernel": facts,
        "rtt_probe": rtt,
        "rtt_measured_s": rtt.get("median_s"),
    }
