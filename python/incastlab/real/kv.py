"""The key-value store's gets (``workload.kind = "kv_gets"``) on real Linux TCP.

Every host of the cluster is a namespace on the emulated switch, a coordinator and a replica
at once (:class:`incastlab._core.KvCluster`: one readiness loop of this process, a listening
socket in every namespace and a connection from every host to every other, opened inside the
host's namespace). The gets are the simulator's own: the same arrivals, sizes and replicas
for the same scenario and seed (``incast_sim::kv::plan``), so both backends run one workload.

Every switch port is shaped to its host's link rate by a tbf whose queue limit is the port's
buffer (in a store every host receives fan-in, so every port is a bottleneck). What the
figures are made of, per host, over the measured window (the warm-up's end to the last
reply):

- drops: the tbf drops of its switch port (``tc -s qdisc``);
- timeouts and retransmits: TcpExt.TCPTimeouts and Tcp.RetransSegs of its namespace (its
  ends of both directions, as the simulator counts them);
- receive and send utilization: bytes the switch port and its NIC's tbf sent, as a share
  of the link (frames as tbf charges them: 1514 bytes for 1448 of payload);
- the fullest millisecond: value bytes its coordinator read in one millisecond of its
  clock (what the application saw, not the wire);
- get latency: from the requests' writing to the quorum's last byte read.

The result has the simulator's shape (``report["kv"]``, the ``kv_*`` record columns), so the
two sit side by side.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.real import capacity
from incastlab.real.testbed import counters, kernel
from incastlab.real.testbed.build import EmulationError, mesh_emulated, mesh_hosts, open_testbed

if TYPE_CHECKING:
    from incastlab.scenario import Scenario

#: Where every host's replica listens.
KV_PORT = 9100
#: Between the connections' set-up and the first get: time to start the sampler.
START_DELAY_S = 0.2


def value_most(s: dict[str, Any]) -> int:
    """The largest value a key-value store of normalized scenario ``s`` returns."""
    cdf = s["workload"]["query_size_cdf"]
    return max((int(size) for size, _ in cdf), default=int(s["workload"]["value_size"]))


def needs(s: dict[str, Any], machine: capacity.Machine | None = None) -> capacity.Needs:
    """What normalized scenario ``s``'s store needs of this machine (refused with a
    :class:`~incastlab.real.capacity.CapacityError` if it cannot hold it)."""
    return capacity.check(s["topology"]["senders"], value_most(s), machine, mesh=True)


def report(
    s: dict[str, Any],
    cluster: _core.KvCluster,
    measured: dict[str, Any],
    before: dict[str, Any],
    after: dict[str, Any],
) -> dict[str, Any]:
    """The store's figures in the simulator's shape (``KvReport``) from the generator's
    result and the counters read at the warm-up's end and after the last reply."""
    w, t = s["workload"], s["topology"]
    link = float(t["link"])
    warmup_us = w["kv_warmup"] // 1_000_000
    span = max(0.0, (measured["end_us"] - warmup_us) / 1e6)
    window = (w["kv_duration"] - w["kv_warmup"]) / 1e12

    def per_s(n: float) -> float:
        return n / span if span > 0 else 0.0

    def share(nbytes: float, secs: float) -> float:
        return nbytes * 8 / (link * secs) if secs > 0 else 0.0

    hosts = []
    for i, g in enumerate(measured["per_host"]):
        (rx0, drop0), (rx1, drop1) = before["ports"][i], after["ports"][i]
        tx0, tx1 = before["nics"][i][0], after["nics"][i][0]
        tcp0, tcp1 = before["tcp"][i], after["tcp"][i]

        def delta(key: str, a: dict[str, int] = tcp0, b: dict[str, int] = tcp1) -> int:
            return b.get(key, 0) - a.get(key, 0)

        hosts.append(
            {
                "gets": g["gets"],
                "offered_load": share(g["offered_bytes"], window),
                "carried_load": share(g["received_bytes"], span),
                "rx_utilization": share(rx1 - rx0, span),
                "tx_utilization": share(tx1 - tx0, span),
                "peak_utilization_1ms": min(1.0, share(g["peak_bytes_1ms"], 1e-3)),
                "drops_per_s": per_s(drop1 - drop0),
                "timeouts_per_s": per_s(delta("TcpExt.TCPTimeouts")),
                "retransmits_per_s": per_s(delta("Tcp.RetransSegs")),
            }
        )
    lat = sorted(measured["latencies_us"])
    ps = 1_000_000  # picoseconds per µs

    def mean(key: str) -> float:
        return float(sum(h[key] for h in hosts)) / max(1, len(hosts))

    delivered = sum(g["received_bytes"] for g in measured["per_host"])
    return {
        "hosts": t["senders"],
        "replicas": w["kv_replicas"],
        "quorum": cluster.quorum(),
        "gets_per_s_per_host": cluster.gets_per_s(),
        "gets": sum(h["gets"] for h in hosts),
        "completed": len(lat),
        # Puts are refused before a store is built (not emulated yet).
        "puts": 0,
        "put_latency_p50": 0,
        "put_latency_p99": 0,
        "latency_p50": _core.nearest_rank(lat, 0.5) * ps,
        "latency_p99": _core.nearest_rank(lat, 0.99) * ps,
        "latency_p999": _core.nearest_rank(lat, 0.999) * ps,
        "latency_max": (lat[-1] if lat else 0) * ps,
        "latency_mean": (sum(lat) / len(lat) if lat else 0.0) * ps,
        "offered_load": mean("offered_load"),
        "carried_load": mean("carried_load"),
        "utilization": mean("rx_utilization"),
        "peak_utilization_1ms": mean("peak_utilization_1ms"),
        "drops_per_s_per_host": mean("drops_per_s"),
        "timeouts_per_s": sum(h["timeouts_per_s"] for h in hosts),
        "retransmits_per_s_per_host": mean("retransmits_per_s"),
        "goodput_bps": per_s(delivered) * 8,
        "per_host": hosts,
    }


def run(
    sc: Scenario, *, time_limit_s: float = 300.0, sysctls: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Run the scenario's gets on real TCP in a fresh testbed; the report (the caller wraps
    it in a Result)."""
    s = sc.normalized()
    w, t, tcp = s["workload"], s["topology"], s["tcp"]
    n = t["senders"]
    cc = tcp["congestion_control"]
    with open_testbed(sc, needs(s), sysctls) as tb:
        hosts = mesh_hosts(tb, KV_PORT)
        rtt = kernel.measure_rtt(tb, tb.sender_ns[1], tb.sender_ips[0])
        facts = kernel.kernel_of(tb)
        try:
            cluster = _core.KvCluster(json.dumps(s), hosts, congestion=cc)
        except (ValueError, RuntimeError) as e:
            raise EmulationError(f"the store did not start: {e}") from None
        taken: dict[str, Any] = {}
        start_ns = time.monotonic_ns() + int(START_DELAY_S * 1e9)
        warm_at = start_ns / 1e9 + w["kv_warmup"] / 1e12
        done = threading.Event()

        def at_warm_up_end() -> None:
            # The counters as the measured window opens (at the start without a warm-up).
            if not done.wait(max(0.0, warm_at - time.monotonic())):
                taken["before"] = counters.mesh_snapshot(tb)

        sampler = threading.Thread(target=at_warm_up_end, daemon=True)
        if w["kv_warmup"] == 0:
            taken["before"] = counters.mesh_snapshot(tb)
        else:
            sampler.start()
        cpu0 = counters.cpu_times()
        t0 = time.perf_counter()
        try:
            measured = json.loads(cluster.run(start_ns, time_limit_s))
        except RuntimeError as e:
            raise EmulationError(f"the store failed: {e}") from None
        finally:
            done.set()
            if sampler.is_alive():
                sampler.join()
        wall = time.perf_counter() - t0
        cpu1 = counters.cpu_times()
        after = counters.mesh_snapshot(tb)
        qdiscs = kernel.qdiscs(tb.switch)
    if "before" not in taken:
        raise EmulationError(
            "the store stopped before its warm-up ended (workload.kv_warmup): "
            f"{measured['outstanding']} gets outstanding at the time limit"
        )
    kv = report(s, cluster, measured, taken["before"], after)
    before = taken["before"]
    span_ps = max(0, measured["end_us"] - w["kv_warmup"] // 1_000_000) * 1_000_000
    drops = sum(b[1] - a[1] for a, b in zip(before["ports"], after["ports"], strict=True))
    timeouts = sum(
        b.get("TcpExt.TCPTimeouts", 0) - a.get("TcpExt.TCPTimeouts", 0)
        for a, b in zip(before["tcp"], after["tcp"], strict=True)
    )
    return {
        "senders": n,
        "workload": "kv_gets",
        "app_bytes": sum(g["received_bytes"] for g in measured["per_host"]),
        "duration": span_ps,
        "goodput_bps": kv["goodput_bps"],
        "link_bps": t["link"],
        "timeouts": timeouts,
        "drops": drops,
        "kv": kv,
        "kv_run": {
            "planned": cluster.planned(),
            "issued": measured["issued"],
            "truncated": measured["truncated"],
            "outstanding": measured["outstanding"],
            # How late gets left against the plan: the loop's timers and the shared CPUs.
            "issue_lag_us": {
                "p50": measured["lag_us_p50"],
                "p99": measured["lag_us_p99"],
                "max": measured["lag_us_max"],
            },
        },
        "machine": {"loadavg_1min": os.getloadavg()[0], **counters.cpu_busy(cpu0, cpu1)},
        "wall_s": wall,
        "emulated": mesh_emulated(
            s,
            {
                "protocol": f"requests of {_core.PROTOCOL_HEADER_BYTES} bytes; every reply's "
                f"value preceded by a {_core.PROTOCOL_HEADER_BYTES}-byte header, in a write of "
                "its own",
                "gets": "the simulator's plan (arrivals, sizes, replicas) for this scenario and "
                "seed",
                "peak_utilization_1ms": "value bytes the coordinator read per millisecond (the "
                "application's view, not the wire's)",
            },
            "service-time jitter and head-of-line blocking (replies leave at once)",
            {
                "kernel": facts,
                "switch_qdiscs": qdiscs,
                "rtt_probe": rtt,
                "rtt_measured_s": rtt.get("median_s"),
            },
        ),
    }
