"""Mitigations of incast, each a change to the same scenario, and a run that compares them.

Every mitigation is a function from the normalized base scenario to overrides (dotted keys,
unit strings), so that it scales with the scenario: a bigger buffer is 4x *this* buffer, the
randomization interval is a share of *this* RTOmin.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from incastlab.backends.model import port_buffer_bytes
from incastlab.result import Result

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.scenario import Scenario
    from incastlab.series import Tracker

Overrides = dict[str, Any]


@dataclass(frozen=True)
class Mitigation:
    """One way to fix incast."""

    name: str
    what: str
    overrides: Callable[[dict[str, Any]], Overrides]


def _ps(x: float) -> str:
    return f"{round(x)}ps"


def _bigger_buffer(s: dict[str, Any]) -> Overrides:
    b = s["topology"]["buffer"]
    if b["bytes"] is not None:
        return {"topology.buffer": f"{4 * b['bytes']}B"}
    return {"topology.buffer": f"{4 * b['packets']}pkt"}


def _dctcp(s: dict[str, Any]) -> Overrides:
    """DCTCP with K at half the port buffer, and never below DCTCP's C·RTT/7."""
    b = s["topology"]["buffer"]
    floor = s["topology"]["receiver_link"] * s["topology"]["rtt"] * 1e-12 / 8 / 7
    if b["bytes"] is not None:
        k = max(b["bytes"] // 2, int(floor) + 1)
        return {"tcp.congestion_control": "dctcp", "topology.ecn_threshold": f"{k}B"}
    frame = s["tcp"]["mss"] + s["tcp"]["header_bytes"]
    k = max(b["packets"] // 2, int(floor / frame) + 1)
    return {"tcp.congestion_control": "dctcp", "topology.ecn_threshold": f"{k}pkt"}


def _fanout_window(s: dict[str, Any]) -> Overrides:
    """Ask only as many servers at once as the port can hold initial windows of."""
    frame = s["tcp"]["mss"] + s["tcp"]["header_bytes"]
    b = s["topology"]["buffer"]
    room = b["bytes"] // frame if b["bytes"] is not None else b["packets"]
    return {"workload.fanout_window": max(1, room // s["tcp"]["initial_window"])}


def _stagger(s: dict[str, Any]) -> Overrides:
    """Space requests by the time the receiver's link takes for one initial window."""
    frame = s["tcp"]["mss"] + s["tcp"]["header_bytes"] + s["tcp"]["phy_overhead"]
    bits = s["tcp"]["initial_window"] * frame * 8
    return {"workload.request_stagger": _ps(bits / s["topology"]["receiver_link"] * 1e12)}


def _switch_ports(s: dict[str, Any]) -> int:
    """Ports of the star: servers, receiver, background hosts and their sink."""
    bg = s["background"]
    ports = s["topology"]["senders"] + 1
    if bg["flows"]:
        ports += bg["flows"] if bg["source"] == "own_hosts" else 0
        ports += 1 if bg["destination"] == "sink" else 0
    return int(ports)


def _shared_buffer(s: dict[str, Any]) -> Overrides:
    """The same total memory as the static per-port buffers, shared with α = 1."""
    total = port_buffer_bytes(s) * _switch_ports(s)
    return {"topology.buffer": "unlimited", "topology.shared_buffer": f"{total}B"}


def _pfc(s: dict[str, Any]) -> Overrides:
    """PFC with the default thresholds; each ingress gets the port's buffer in bytes."""
    return {"topology.pfc": True, "topology.buffer": f"{port_buffer_bytes(s)}B"}


def _classic_ecn(s: dict[str, Any]) -> Overrides:
    """RFC 3168 ECN for the scenario's own congestion control, marking at half the buffer."""
    return {"tcp.ecn": True, "topology.ecn_threshold": f"{port_buffer_bytes(s) // 2}B"}


def _red(s: dict[str, Any]) -> Overrides:
    """RED between a quarter and three quarters of the port buffer (bytes buffers only)."""
    size = port_buffer_bytes(s)
    return {"topology.red_min": f"{size // 4}B", "topology.red_max": f"{3 * size // 4}B"}


def _randomized(kind: str, share: float) -> Callable[[dict[str, Any]], Overrides]:
    def f(s: dict[str, Any]) -> Overrides:
        return {
            "tcp.rto_randomization": kind,
            "tcp.rto_delta": _ps(share * s["tcp"]["rto_min"]),
        }

    return f


MITIGATIONS: list[Mitigation] = [
    Mitigation("baseline", "the scenario as given", lambda s: {}),
    Mitigation(
        "rto-min-1ms",
        "RTOmin 1 ms, µs clock (Chen)",
        lambda s: {"tcp.rto_min": "1ms", "tcp.clock_granularity": "1us"},
    ),
    Mitigation(
        "rto-min-200us",
        "RTOmin 200 µs, µs clock and timers (CMU)",
        # Vasudevan et al. ran the timers on high-resolution timers, not on the jiffy wheel
        # (the linux profile's 4 ms ticks would round 200 µs up to 4 ms).
        lambda s: {
            "tcp.rto_min": "200us",
            "tcp.clock_granularity": "1us",
            "tcp.timer_granularity": "1us",
            "tcp.timer_wheel": False,
        },
    ),
    Mitigation("rto-uniform", "RTO ~ U[RTOmin/2, 3·RTOmin/2]", _randomized("uniform", 1.0)),
    Mitigation("rto-tda", "TDA: Δ = RTOmin/5, ω = 2", _randomized("tda", 0.2)),
    Mitigation("rto-maa", "MAA: Δ = ⌊N/ln N⌋·RTOmin/10", _randomized("maa", 0.1)),
    Mitigation("rto-fsa", "FSA: Δ = RTOmin/5, ω 2 or 4", _randomized("fsa", 0.2)),
    Mitigation("buffer-x4", "4× the switch buffer per port", _bigger_buffer),
    Mitigation("dctcp", "DCTCP, K at ½ the port buffer", _dctcp),
    Mitigation(
        "ecn",
        "ECN (RFC 3168) at ½ the buffer",
        _classic_ecn,
    ),
    Mitigation("red", "RED at ¼–¾ buffer: no cure", _red),
    Mitigation(
        "pfc",
        "PFC pauses: lossless, head-of-line blocking",
        _pfc,
    ),
    Mitigation(
        "shared-buffer",
        "ports share the memory, α = 1",
        _shared_buffer,
    ),
    Mitigation(
        "fanout-window",
        "ask buffer/IW servers at once",
        _fanout_window,
    ),
    Mitigation(
        "request-stagger",
        "requests one IW's time apart",
        _stagger,
    ),
    Mitigation(
        "response-jitter",
        "replies delayed by U[0,100 µs]",
        lambda s: {"workload.jitter": "100us"},
    ),
    Mitigation(
        "rate-cap-80",
        "egress capped at 80% of link",
        lambda s: {"topology.host_rate_cap": "80%"},
    ),
    Mitigation(
        "initial-window-2",
        "initial window of 2 segments",
        lambda s: {"tcp.initial_window": 2},
    ),
]

#: Other transports for the same workload, run only when named (``--only swift``): swapping
#: the transport is a remedy of another kind than tuning TCP, and not every scenario takes one
#: (Swift refuses paths longer than its delay target).
TRANSPORTS: list[Mitigation] = [
    Mitigation(
        "swift", "Swift: delay target, windows < 1 pkt paced", lambda s: {"transport": "swift"}
    ),
]

BY_NAME = {m.name: m for m in [*MITIGATIONS, *TRANSPORTS]}


def choose(names: str | None) -> list[Mitigation]:
    """The mitigations named (comma-separated), baseline first; all when ``None``."""
    if names is None:
        return list(MITIGATIONS)
    chosen = [BY_NAME["baseline"]]
    for n in (x.strip() for x in names.split(",") if x.strip()):
        if n not in BY_NAME:
            raise ValueError(f"--only: unknown mitigation {n!r}; known: {', '.join(BY_NAME)}")
        if BY_NAME[n] not in chosen:
            chosen.append(BY_NAME[n])
    return chosen


@dataclass
class Outcome:
    """A mitigation's results over the sender counts."""

    mitigation: Mitigation
    results: list[Result]

    @property
    def mean_goodput(self) -> float:
        return statistics.fmean(r.goodput_bps for r in self.results)

    def block_quantile(self, q: float) -> float:
        times = sorted(t for r in self.results for t in r.block_times_s)
        if not times:
            return float("nan")
        return times[min(len(times) - 1, int(q * len(times)))]

    @property
    def timeouts_per_block(self) -> float:
        blocks = sum(len(r.block_times_s) for r in self.results)
        return sum(r.timeouts for r in self.results) / max(1, blocks)


@dataclass
class Ranking:
    """The mitigations that ran, best mean goodput first, and those skipped with why."""

    ranked: list[Outcome]
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def baseline(self) -> Outcome:
        return next(o for o in self.ranked if o.mitigation.name == "baseline")

    def to_json(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = [
            {
                "mitigation": o.mitigation.name,
                "what": o.mitigation.what,
                "mean_goodput_bps": o.mean_goodput,
                "block_time_p50_s": o.block_quantile(0.5),
                "block_time_p99_s": o.block_quantile(0.99),
                "timeouts_per_block": o.timeouts_per_block,
                "points": [r.row() | {"scenario": r.scenario} for r in o.results],
            }
            for o in self.ranked
        ]
        rows += [{"mitigation": name, "skipped": why} for name, why in self.skipped]
        return rows


def apply(m: Mitigation, points: Sequence[Scenario]) -> list[Scenario]:
    """``points`` with ``m`` applied; :class:`ScenarioError` if the scenario cannot take it."""
    from incastlab import scenario as sc_mod

    return [
        sc_mod.from_dict(
            sc_mod.apply_overrides(sc.model_dump(), m.overrides(sc.normalized())),
            normalized=True,
        )
        for sc in points
    ]


def mitigate(
    points: Sequence[Scenario],
    chosen: Sequence[Mitigation] = MITIGATIONS,
    *,
    backend: Backend | None = None,
    tracker: Tracker | None = None,
    workers: int | None = None,
) -> Ranking:
    """Run ``points`` under each mitigation (on the simulator unless told otherwise, every
    run on its own core) and rank them by mean goodput. A mitigation the scenario cannot
    take (PFC with a shared buffer, say) is skipped with the reason, not run."""
    from incastlab import backends
    from incastlab.scenario import ScenarioError
    from incastlab.series import run_many

    for sc in points:
        # An unlimited port drops nothing: no incast to mitigate, and the remedies sized from
        # the port's buffer (bigger, shared, ECN and RED thresholds, fan-out) have no size.
        port_buffer_bytes(sc.normalized(), "incast mitigate sizes its remedies from the buffer")
    runner = backend or backends.get("sim")
    taken: list[tuple[Mitigation, list[Scenario]]] = []
    skipped: list[tuple[str, str]] = []
    for m in chosen:
        try:
            taken.append((m, apply(m, points)))
        except ScenarioError as e:
            skipped.append((m.name, str(e)))
            if tracker:
                tracker.done(len(points), what=f"{m.name}: skipped")
    flat = [sc for _, changed in taken for sc in changed]
    labels = [f"{m.name} N={sc.senders}" for m, changed in taken for sc in changed]
    runs = iter(run_many(runner, flat, labels, tracker, workers=workers))
    outcomes = [Outcome(m, [next(runs)[0] for _ in changed]) for m, changed in taken]
    return Ranking(sorted(outcomes, key=lambda o: -o.mean_goodput), skipped)
