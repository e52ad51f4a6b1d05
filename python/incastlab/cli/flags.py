"""The scenario file and the flags that override it, shared by sim, model, emulate, mitigate
and compare, and their translation into a series of scenarios (:mod:`incastlab.series`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import UsageError, unit_value, whole

#: Largest 32- and 63-bit counts (the core's integer fields).
U32, U63 = 2**32 - 1, 2**63 - 1

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console

    from incastlab.scenario import Scenario
    from incastlab.series import Series

#: The congestion controls ``--cc`` names, per transport.
TCP_CCS = ("reno", "cubic", "dctcp", "bbr")
ROCE_CCS = ("none", "dcqcn", "hpcc")

#: Flag attribute -> scenario key.
FLAG_KEYS = {
    "link": "topology.link",
    "receiver_link": "topology.receiver_link",
    "rtt": "topology.rtt",
    "buffer": "topology.buffer",
    "host_jitter": "topology.host_jitter",
    "rto_min": "tcp.rto_min",
    "rto_max": "tcp.rto_max",
    "clock": "tcp.clock_granularity",
    "initial_window": "tcp.initial_window",
    "delayed_ack": "tcp.delayed_ack",
    "cwnd_restart": "tcp.cwnd_restart",
    "profile": "tcp.profile",
    "transport": "transport",
    "workload": "workload.kind",
    "blocks": "workload.blocks",
    "jitter": "workload.jitter",
    "flow_size": "workload.flow_size",
    "background": "background.flows",
    "seed": "seed",
    "max_events": "run.max_events",
    "max_time": "run.max_time",
}


def add_scenario_flags(s: argparse.ArgumentParser) -> None:
    """The scenario file and the flags that override it."""
    s.add_argument("scenario", nargs="?", help="scenario TOML file (optional)")
    s.add_argument(
        "--senders", type=unit_value("senders"), help="sender counts: 1,2,4 or 1..48 or 4..64:4"
    )
    g = s.add_mutually_exclusive_group()
    g.add_argument(
        "--sru",
        type=unit_value("sizes"),
        help="bytes each server returns per block, e.g. 256KB (several: 16KB,64KB)",
    )
    g.add_argument(
        "--block", type=unit_value("size"), help="block striped over the servers, e.g. 1MB"
    )
    s.add_argument(
        "--workload",
        choices=["sync_read", "incast", "queries", "kv_gets", "shuffle", "flows"],
        help="workload kind",
    )
    s.add_argument(
        "--flow-size",
        type=unit_value("size"),
        help="bytes per flow for the incast workload, e.g. 270000B",
    )
    s.add_argument("--blocks", type=whole(0, U32), help="number of blocks to read")
    s.add_argument(
        "--buffer", type=unit_value("limit"), help="switch buffer per port: 64KB, 64KiB, 42pkt"
    )
    s.add_argument("--link", type=unit_value("rate"), help="access link rate, e.g. 1Gbps")
    s.add_argument(
        "--receiver-link", type=unit_value("rate"), help="receiver link rate (default: --link)"
    )
    s.add_argument("--rtt", type=unit_value("time"), help="base round-trip time, e.g. 100us")
    s.add_argument("--rto-min", type=unit_value("time"), help="minimum RTO, e.g. 200ms, 1ms")
    s.add_argument("--rto-max", type=unit_value("time"), help="maximum RTO, e.g. 120s")
    s.add_argument(
        "--clock",
        type=unit_value("time"),
        help="RTT clock granularity (timers too, unless set), e.g. 1us, 4ms",
    )
    s.add_argument(
        "--profile",
        choices=["classic", "linux"],
        help="whose TCP the hosts run: classic (the incast papers' kernels) or linux "
        "(Linux 5.x/6.x: RACK-TLP, delayed ACKs with quick-ACK, CUBIC with HyStart)",
    )
    s.add_argument(
        "--transport",
        choices=["tcp", "ndp", "roce", "swift", "eqds", "homa"],
        help="transport of the workload: tcp, ndp (trimming switches, receiver pulls), roce "
        "(RDMA queue pairs, lossless over PFC unless roce.lossless = false), swift "
        "(delay-based windows over drop-tail, the swift.* keys), eqds (edge queues, receiver "
        "credit, trimming switches unless eqds.trimming = false) or homa (receiver grants, "
        "switch priority queues)",
    )
    s.add_argument(
        "--cc",
        choices=[*TCP_CCS, *ROCE_CCS],
        help="congestion control: reno, cubic, dctcp or bbr with TCP; none, dcqcn or hpcc "
        "with --transport roce",
    )
    s.add_argument("--initial-window", type=whole(0, U32), help="initial window, segments")
    s.add_argument(
        "--delayed-ack",
        type=unit_value("time_or_off"),
        help="delayed-ACK timeout (e.g. 40ms) or off",
    )
    s.add_argument(
        "--cwnd-restart", choices=["idle", "block", "never"], help="slow-start restart policy"
    )
    s.add_argument("--no-sack", action="store_true", help="NewReno instead of SACK recovery")
    s.add_argument(
        "--jitter",
        type=unit_value("time"),
        help="server response jitter, uniform in [0, J], e.g. 20us",
    )
    s.add_argument(
        "--host-jitter",
        type=unit_value("time"),
        help="per-packet host delay jitter, e.g. 1us or 0us",
    )
    s.add_argument("--background", type=whole(0, U32), help="number of long-lived background flows")
    s.add_argument("--seed", type=whole(0, U63), help="random seed")
    s.add_argument("--max-events", type=whole(1, U63), help="event budget per point")
    s.add_argument(
        "--max-time", type=unit_value("time"), help="simulated-time budget per point, e.g. 60s"
    )
    s.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any scenario key, e.g. tcp.dupthresh=2"
    )
    s.add_argument(
        "--vary",
        metavar="KEY=V1,V2",
        help="one series per value, side by side, e.g. tcp.rto_min=200ms,1ms",
    )


def overrides(a: argparse.Namespace) -> dict[str, Any]:
    """The scenario keys the flags set."""
    from incastlab.series import parse_assignment

    o: dict[str, Any] = {key: getattr(a, attr) for attr, key in FLAG_KEYS.items()}
    o = {k: v for k, v in o.items() if v is not None}
    if a.no_sack:
        o["tcp.sack"] = False
    if a.sru is not None:
        o["workload.sru"] = a.sru
        o["workload.block"] = None
    if a.block is not None:
        o["workload.block"] = a.block
        o["workload.sru"] = None
    if a.flow_size is not None and a.workload is None:
        o["workload.kind"] = "incast"
    o.update(parse_assignment(item) for item in a.set or [])
    if a.cc is not None:
        o.update(cc_keys(a.cc, transport_of(a, o)))
    return o


def transport_of(a: argparse.Namespace, o: dict[str, Any]) -> str:
    """The transport the flags and the scenario file give (the flags first)."""
    if "transport" in o:
        return str(o["transport"])
    if a.scenario:
        from incastlab import scenario as sc_mod

        raw = sc_mod.read_toml(a.scenario)
        return str(raw.get("transport", "tcp"))
    return "tcp"


def cc_keys(cc: str, transport: str) -> dict[str, str]:
    """The key ``--cc`` sets for ``transport``: TCP's congestion control, or RoCE's; a name
    the transport does not run is refused in one line naming the flag."""
    if transport == "swift":
        raise UsageError(f"--cc {cc}: Swift runs its own delay-based control (the swift.* keys)")
    if transport == "roce":
        if cc not in ROCE_CCS:
            raise UsageError(f"--cc {cc}: RoCE runs {', '.join(ROCE_CCS)}, not a TCP one")
        return {"roce.cc": cc}
    if cc not in TCP_CCS:
        raise UsageError(
            f"--cc {cc}: {transport} runs {', '.join(TCP_CCS)}; {cc} is RoCE's "
            "(add --transport roce)"
        )
    return {"tcp.congestion_control": cc}


def sru_list_as_vary(a: argparse.Namespace) -> None:
    """``--sru 16KB,32KB`` means one series per SRU."""
    if a.sru and "," in a.sru:
        if a.vary:
            raise UsageError("--sru with several values already varies the SRU; drop --vary")
        a.vary, a.sru = f"workload.sru={a.sru}", None


def series_from(a: argparse.Namespace) -> Series:
    """The labelled series of scenarios the file and flags describe."""
    from incastlab.series import build_series

    return build_series(a.scenario, overrides(a), senders=a.senders, vary=a.vary)


def one_series(a: argparse.Namespace, command: str, why: str) -> Series:
    """The file and flags as one series, for commands that vary something else (``why``)."""
    if a.vary:
        raise UsageError(f"--vary: {why}; drop --vary")
    sru_list_as_vary(a)
    if a.vary:
        raise UsageError(f"--sru: give one SRU to incast {command}")
    return series_from(a)


def real_tcp_link(a: argparse.Namespace) -> None:
    """Real TCP runs at 100 Mbps unless the file or the flags give a rate: the default inside
    this machine's emulation envelope, rather than the scenario's 1 Gbps."""
    from incastlab import scenario as sc_mod

    raw = sc_mod.read_toml(a.scenario) if a.scenario else {}
    if a.link is None and "link" not in (raw.get("topology") or {}):
        a.link = "100Mbps"


def envelope_warning(points: Iterable[Scenario], err: Console) -> None:
    """Warn when a rate is beyond what this machine emulates faithfully."""
    from incastlab.real.emulate import RATE_ENVELOPE_BPS
    from incastlab.units import format_rate

    fastest = max(sc.topology.link for sc in points)
    if fastest > RATE_ENVELOPE_BPS:
        err.print(
            f"[yellow]warning:[/yellow] {format_rate(fastest)} is outside this machine's "
            "emulation envelope (about 100 Mbps on 2 cores): the CPU, not the tc queue, "
            "would be the bottleneck. Try --link 100Mbps."
        )
