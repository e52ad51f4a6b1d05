"""The emulation backend: a scenario run by the real Linux TCP of this machine, in a testbed of
network namespaces (:mod:`incastlab.real.testbed`), by the driver of its workload:
synchronized reads (:mod:`incastlab.real.sync_read`), a key-value store's gets
(:mod:`incastlab.real.kv`) or a MapReduce shuffle (:mod:`incastlab.real.shuffle`).

This module checks what a run asks for before anything is built (the workload, the topology,
``--sysctl``, the congestion control, this machine's capacity), hands the scenario to its
driver and wraps the driver's report in a :class:`~incastlab.result.Result`.

This machine has no netem, so no delay is added: the RTT is what the veths and the CPUs give
(tens of µs). The result says what was and was not emulated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.backends import BackendUnavailable, ProgressFn, off_defaults
from incastlab.real import capacity, kv, shuffle, sync_read
from incastlab.real.testbed.build import (
    MESH_WORKLOADS,
    EmulationError,
    check_can_emulate,
    check_sysctls,
)
from incastlab.real.testbed.kernel import check_congestion_control
from incastlab.result import Result

if TYPE_CHECKING:
    from incastlab.scenario import Scenario

__all__ = ["EmulateBackend", "EmulationError", "check_capacity", "run"]

#: Above this rate the testbed on a 2-core machine stops behaving like a network: one shaped
#: flow reached 91% of 200 Mbps but 67% of 500 Mbps and 29% of 1 Gbps (README: envelope).
RATE_ENVELOPE_BPS = 200_000_000


def check_capacity(sc: Scenario, machine: capacity.Machine | None = None) -> capacity.Needs:
    """Refuse (:class:`~incastlab.real.capacity.CapacityError`, one line) a scenario this
    machine cannot hold; what it needs otherwise."""
    s = sc.normalized()
    kind = s["workload"]["kind"]
    driver = {"kv_gets": kv.needs, "shuffle": shuffle.needs}.get(kind, sync_read.needs)
    return driver(s, machine)


def refuse_rdma(s: dict[str, Any]) -> None:
    """Refuse (:class:`EmulationError`, one line) an RDMA transport: the testbed's hosts are
    network namespaces over veth pairs, with no RDMA NIC to drive."""
    if s["transport"] == "roce":
        raise EmulationError(
            "transport: RoCE needs an RDMA NIC and the emulated hosts have none to drive; "
            "run it in the simulator (incast sim --transport roce)"
        )
    if s["transport"] == "homa":
        raise EmulationError(
            "transport: Homa is not a transport of the emulated hosts' kernels; "
            "run it in the simulator (incast sim --transport homa)"
        )


def check(s: dict[str, Any], pcap_dir: str | None, monitor_ns: int | None) -> None:
    """Refuse (:class:`EmulationError`, one line naming the key) what the emulator cannot run
    of normalized scenario ``s``, before anything is built."""
    refuse_rdma(s)
    w = s["workload"]
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
    s = sc.normalized()
    kind = s["workload"]["kind"]
    check(s, pcap_dir, monitor_ns)
    asked = check_sysctls(sysctls or {})
    if kind == "shuffle":
        shuffle.check(s)
    check_can_emulate()
    check_congestion_control(s["tcp"]["congestion_control"])
    if kind == "kv_gets":
        report = kv.run(sc, time_limit_s=time_limit_s, sysctls=asked)
    elif kind == "shuffle":
        report = shuffle.run(sc, time_limit_s=time_limit_s, sysctls=asked)
    else:
        report = sync_read.run(
            sc,
            warmup=warmup,
            time_limit_s=time_limit_s,
            pcap_dir=pcap_dir,
            monitor_ns=monitor_ns,
            pcap_senders=pcap_senders,
            sysctls=asked,
        )
    return Result(scenario=s, report=report, version=_core.__version__, backend="emulate")


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
