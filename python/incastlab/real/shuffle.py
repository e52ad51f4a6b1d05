"""A MapReduce shuffle (``workload.kind = "shuffle"``) on real Linux TCP.

Every host of the cluster is a namespace on the emulated switch. The map hosts (the last
``workload.map_hosts``) listen; every reducer has a keep-alive connection to every map host
but its own, opened inside its host's namespace (:class:`incastlab._core.ShuffleCluster`: one
readiness loop of this process). The fetches are the simulator's: each reducer asks one map
host for one output at a time, at most ``workload.fanout_window`` hosts at once, in the order
the simulator draws for it (``incast_sim::shuffle::fetch_orders``) for the same scenario and
seed, and asks the next as soon as a fetch completes. So both backends run one shuffle.

Every switch port is shaped to its host's link rate by a tbf whose queue limit is the port's
buffer (every host receives its reducers' fetches, so every port is a bottleneck). The
result has the simulator's shape: ``report["shuffle"]["reducer_times"]`` (picoseconds from
the start), the run's duration until the last reducer had every output, its timeouts
(TcpExt.TCPTimeouts of every namespace, both ends) and drops (the switch ports' tbf drops).
The kernel does not say which drops were data, ACKs or requests, so the simulator's split of
them is left out.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.real import capacity
from incastlab.real.testbed import counters, kernel
from incastlab.real.testbed.build import EmulationError, mesh_emulated, mesh_hosts, open_testbed

if TYPE_CHECKING:
    from incastlab.scenario import Scenario

#: Where every map host listens.
SHUFFLE_PORT = 9200


def layout(s: dict[str, Any]) -> dict[str, int]:
    """Normalized scenario ``s``'s shuffle as both backends lay it out (the simulator's rules):
    ``reducers``, ``reducer_hosts``, ``map_hosts``, ``window``, ``connections``,
    ``most_per_map_host``, and the emulator's limits ``max_per_map_host`` and
    ``max_output``."""
    return dict(json.loads(_core.shuffle_layout(json.dumps(s))))


def check(s: dict[str, Any]) -> None:
    """Refuse (:class:`~incastlab.real.testbed.build.EmulationError`, one line naming the key) a
    shuffle the emulator cannot run, before anything is built."""
    lay = layout(s)
    sru = s["workload"]["sru"] or 0
    if sru > lay["max_output"]:
        raise EmulationError(
            f"workload.sru: the emulator serves map outputs of at most {lay['max_output']} "
            f"bytes (1 GiB), got {sru}"
        )
    if lay["most_per_map_host"] > lay["max_per_map_host"]:
        raise EmulationError(
            f"workload.reducers: at most {lay['max_per_map_host']} reducers may fetch from one "
            f"map host on this emulator (its listen backlog), got {lay['most_per_map_host']}"
        )


def needs(s: dict[str, Any], machine: capacity.Machine | None = None) -> capacity.Needs:
    """What normalized scenario ``s``'s shuffle needs of this machine (refused with a
    :class:`~incastlab.real.capacity.CapacityError` if it cannot hold it): every map output
    served, every reducer's connection to every map host open."""
    opened = layout(s)["connections"]
    sru = int(s["workload"]["sru"] or 0)
    return capacity.check(s["topology"]["senders"], sru, machine, mesh=True, connections=opened)


#: Between the connections' set-up and the first fetch.
START_DELAY_S = 0.2


def run(
    sc: Scenario, *, time_limit_s: float = 300.0, sysctls: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Run the scenario's shuffle on real TCP in a fresh testbed; the report (the caller
    wraps it in a Result)."""
    s = sc.normalized()
    t = s["topology"]
    n = t["senders"]
    cc = s["tcp"]["congestion_control"]
    with open_testbed(sc, needs(s), sysctls) as tb:
        hosts = mesh_hosts(tb, SHUFFLE_PORT)
        rtt = kernel.measure_rtt(tb, tb.sender_ns[1], tb.sender_ips[0])
        facts = kernel.kernel_of(tb)
        try:
            cluster = _core.ShuffleCluster(json.dumps(s), hosts, congestion=cc)
        except (ValueError, RuntimeError) as e:
            raise EmulationError(f"the shuffle did not start: {e}") from None
        before = counters.mesh_snapshot(tb)
        start_ns = time.monotonic_ns() + int(START_DELAY_S * 1e9)
        cpu0 = counters.cpu_times()
        t0 = time.perf_counter()
        try:
            measured = json.loads(cluster.run(start_ns, time_limit_s))
        except RuntimeError as e:
            raise EmulationError(f"the shuffle failed: {e}") from None
        wall = time.perf_counter() - t0
        cpu1 = counters.cpu_times()
        after = counters.mesh_snapshot(tb)
        qdiscs = kernel.qdiscs(tb.switch)
    if measured["truncated"]:
        raise EmulationError(
            f"the shuffle did not finish within {time_limit_s:g} s: "
            f"{measured['outstanding']} fetches outstanding"
        )
    ps = 1_000_000  # picoseconds per µs
    duration = measured["end_us"] * ps
    port_drops = [b[1] - a[1] for a, b in zip(before["ports"], after["ports"], strict=True)]
    # Every TCP counter the run moved, all hosts together, and the timeouts per host (a host
    # that only serves map outputs times out on data; one that only runs reducers, on its
    # requests).
    moved: dict[str, int] = {}
    for a, b in zip(before["tcp"], after["tcp"], strict=True):
        for key, value in b.items():
            if value != a.get(key, 0):
                moved[key] = moved.get(key, 0) + value - a.get(key, 0)
    host_timeouts = [
        b.get("TcpExt.TCPTimeouts", 0) - a.get("TcpExt.TCPTimeouts", 0)
        for a, b in zip(before["tcp"], after["tcp"], strict=True)
    ]
    app = measured["received_bytes"]
    lay = layout(s)
    return {
        "senders": n,
        "workload": "shuffle",
        "app_bytes": app,
        "duration": duration,
        "goodput_bps": app * 8e12 / duration if duration else 0.0,
        # As the simulator counts it: the links of the hosts that run reducers, together.
        "link_bps": t["link"] * lay["reducer_hosts"],
        "timeouts": moved.get("TcpExt.TCPTimeouts", 0),
        "retransmitted_segments": moved.get("Tcp.RetransSegs", 0),
        "drops": sum(port_drops),
        "shuffle": {
            "reducers": lay["reducers"],
            "reducer_times": [us * ps for us in measured["reducer_us"]],
            "fetches": measured["fetches"],
            "port_drops": port_drops,
            "host_timeouts": host_timeouts,
            # Timeouts and retransmissions per side, from each socket's TCP_INFO (None before
            # Linux 6.7).
            "sides": measured["sides"],
        },
        "tcp_counters": dict(sorted(moved.items())),
        "machine": {"loadavg_1min": os.getloadavg()[0], **counters.cpu_busy(cpu0, cpu1)},
        "wall_s": wall,
        "emulated": mesh_emulated(
            s,
            {
                "protocol": f"requests of {_core.PROTOCOL_HEADER_BYTES} bytes; every map output "
                f"preceded by a {_core.PROTOCOL_HEADER_BYTES}-byte header, in a write of its own",
                "fetches": "the simulator's: each reducer's order of the map hosts for this "
                "scenario and seed, one output per host at a time, fanout_window hosts at once",
            },
            "which drops were data, ACKs or requests (tbf counts them together)",
            {
                "kernel": facts,
                "switch_qdiscs": qdiscs,
                "rtt_probe": rtt,
                "rtt_measured_s": rtt.get("median_s"),
            },
        ),
    }
