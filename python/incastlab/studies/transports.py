"""Transports ranked on the same fabric and workload (``incast mitigate --transports``).

The user's scenario fixes the fabric (topology shape, link and receiver rates, RTT, port
buffer) and the workload (senders, bytes per flow or per server per block); each entry of
:data:`TRANSPORTS` swaps only the transport, plus what that transport needs of the fabric to
run as its paper deploys it (trimming switches for NDP and EQDS, PFC for RoCE, ECN marking for
DCTCP and DCQCN, INT for HPCC), and says so. What keeps the comparison fair:

- the same application bytes per flow (or per server per block) and the same links and RTT;
- the same bytes of switch buffer per port: a trimming port's data queue is a packet count, so
  it is sized to the scenario's buffer in that transport's full frames (NDP's 9 KB jumbo frames
  get fewer slots than EQDS's 4 KB ones); the header queue beside it is extra and stated;
- each transport keeps its own default MTU (TCP and Homa 1448 B, RoCE 1 KB, Swift 4 KB,
  EQDS 4086 B, NDP 9 KB) and initial window (Homa: RTTbytes): that is how each is deployed,
  and the row names them. PFC counts a port's buffer per ingress (RoCE's egress queue can hold
  more than one buffer).

They rank by the last flow's completion (an incast's job waits for it); a synchronized read
by the read's end, with its blocks' times and goodput beside. An entry the scenario cannot run
(NDP on a synchronized read, Swift on a path longer than its delay target) is listed as
refused with the simulator's one-line reason. Another transport is one :class:`Entry` more in
:data:`TRANSPORTS`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from incastlab.backends.model import port_buffer_bytes
from incastlab.result import Result
from incastlab.studies.dcqcn_marking import dcqcn_marking
from incastlab.studies.mitigate import BY_NAME as TCP_MITIGATIONS
from incastlab.studies.mitigate import Overrides

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.scenario import Scenario
    from incastlab.series import Tracker


#: Flows at most this long are the short flows of a mixed workload (``workload.kind =
#: "flows"``): DCTCP's query traffic and short messages are below 100 KB (Alizadeh et al.,
#: "Data Center TCP (DCTCP)", SIGCOMM 2010, §2.2).
SHORT_FLOW_BYTES = 100_000


@dataclass(frozen=True)
class Entry:
    """One transport of the comparison: its row's name, the ``transport`` key it sets, what it
    is (short), what it needs of the fabric, and the overrides of the user's (normalized)
    scenario that run it."""

    name: str
    transport: str
    what: str
    fabric: str
    overrides: Callable[[dict[str, Any]], Overrides]


def _buffer(s: dict[str, Any]) -> int | None:
    """The scenario's bottleneck port buffer in bytes; ``None`` when unlimited."""
    from incastlab.scenario import ScenarioError

    try:
        return port_buffer_bytes(s)
    except ScenarioError:
        return None


def _off_pfc(s: dict[str, Any]) -> Overrides:
    """A RoCE scenario's fabric is lossless; the other transports run it lossy, as deployed."""
    return {"topology.pfc": False} if s["topology"]["pfc"] else {}


def _tcp(extra: Callable[[dict[str, Any]], Overrides]) -> Callable[[dict[str, Any]], Overrides]:
    def f(s: dict[str, Any]) -> Overrides:
        return {"transport": "tcp"} | _off_pfc(s) | extra(s)

    return f


def _trimming(section: str) -> Callable[[dict[str, Any]], Overrides]:
    """NDP or EQDS with its data queue sized to the scenario's buffer in its full frames."""

    def f(s: dict[str, Any]) -> Overrides:
        out: Overrides = {"transport": section} | _off_pfc(s)
        size = _buffer(s)
        if size is not None:
            frame = int(s[section]["mtu"]) + int(s[section]["header_bytes"])
            out[f"{section}.data_queue"] = max(1, size // frame)
        return out

    return f


def _roce(cc: str) -> Callable[[dict[str, Any]], Overrides]:
    """RoCE on a lossless fabric with ``cc``; DCQCN gets marking at its paper's Kmin/Kmax
    scaled to the link's rate where the scenario marks nothing, HPCC gets INT."""

    def f(s: dict[str, Any]) -> Overrides:
        out: Overrides = {"transport": "roce", "roce.cc": cc}
        if not s["roce"]["lossless"]:
            out["roce.lossless"] = True
        t = s["topology"]
        if cc == "hpcc":
            out["topology.int"] = True
        if cc == "dcqcn" and t["ecn_kmin"] is None:
            out.update(dcqcn_marking(t))
        return out

    return f


def _plain(name: str) -> Callable[[dict[str, Any]], Overrides]:
    return lambda s: {"transport": name} | _off_pfc(s)


_DROP_TAIL = "drop-tail"
_TRIM = "trimming switches (data queue = the buffer in full frames, header queue beside it)"
_PFC = "PFC, lossless (the buffer per ingress)"

TRANSPORTS: list[Entry] = [
    Entry("tcp", "tcp", "the scenario's TCP", _DROP_TAIL, _tcp(lambda s: {})),
    Entry(
        "tcp-rto200us",
        "tcp",
        "the scenario's TCP, RTOmin 200 µs, µs clock (Vasudevan et al.)",
        _DROP_TAIL,
        _tcp(TCP_MITIGATIONS["rto-min-200us"].overrides),
    ),
    Entry(
        "dctcp",
        "tcp",
        "DCTCP, K at ½ the port buffer",
        "drop-tail, ECN marking at K",
        _tcp(TCP_MITIGATIONS["dctcp"].overrides),
    ),
    Entry(
        "ndp",
        "ndp",
        "NDP: receiver pulls, trimmed headers resent",
        _TRIM,
        _trimming("ndp"),
    ),
    Entry("roce", "roce", "RoCEv2, no congestion control", _PFC, _roce("none")),
    Entry("roce-dcqcn", "roce", "RoCEv2 with DCQCN", f"{_PFC}, ECN marking", _roce("dcqcn")),
    Entry("roce-hpcc", "roce", "RoCEv2 with HPCC", f"{_PFC}, INT", _roce("hpcc")),
    Entry("swift", "swift", "Swift: delay target, paced below 1 pkt", _DROP_TAIL, _plain("swift")),
    Entry(
        "eqds",
        "eqds",
        "EQDS: edge queues, receiver credit",
        _TRIM,
        _trimming("eqds"),
    ),
    Entry(
        "homa",
        "homa",
        "Homa: RTTbytes unscheduled, SRPT grants, receiver's priorities",
        "drop-tail ports with strict priority levels (homa.priorities)",
        _plain("homa"),
    ),
]

BY_NAME = {e.name: e for e in TRANSPORTS}


def choose(names: str | None) -> list[Entry]:
    """The entries named (comma-separated), ``tcp`` first as the yardstick; all when ``None``."""
    if names is None:
        return list(TRANSPORTS)
    chosen = [BY_NAME["tcp"]]
    for n in (x.strip() for x in names.split(",") if x.strip()):
        if n not in BY_NAME:
            raise ValueError(f"--only: {n!r} is not a transport row; known: {', '.join(BY_NAME)}")
        if BY_NAME[n] not in chosen:
            chosen.append(BY_NAME[n])
    return chosen


def _mean(xs: Sequence[float | None]) -> float | None:
    got = [x for x in xs if x is not None and math.isfinite(x)]
    return statistics.fmean(got) if got else None


def _section(r: Result) -> dict[str, Any]:
    """The transport's own part of the report (``ndp``, ``eqds``, ``roce``, ``swift``)."""
    sec: dict[str, Any] = r.report.get(r.scenario["transport"]) or {}
    return sec


def _blocks(r: Result) -> bool:
    return bool(r.scenario["workload"]["kind"] == "sync_read")


def last_s(r: Result) -> float | None:
    """The last flow's completion; a synchronized read's end (its blocks one after another)."""
    if _blocks(r):
        return sum(r.block_times_s) if r.block_times_s else None
    return max((x for x in r.flow_completion_s if x is not None), default=None)


def unfinished(r: Result) -> int:
    if _blocks(r):
        return max(0, int(r.scenario["workload"]["blocks"]) - len(r.block_times_s))
    return sum(x is None for x in r.flow_completion_s)


def timeouts(r: Result) -> int:
    return max(int(r.timeouts), int(_section(r).get("timeouts") or 0))


def peak_bytes(r: Result) -> float | None:
    """The incast port's peak: EQDS's report gives its busiest port's (data and headers); a
    trimming port's queue report counts data in packets (full frames, as an upper bound) and
    headers in bytes; any other port's peak is in bytes."""
    sec, b = _section(r), r.report.get("bottleneck") or {}
    if sec.get("queue_peak_bytes") is not None:
        return float(sec["queue_peak_bytes"])
    if r.scenario["transport"] == "ndp":
        ndp = r.scenario["ndp"]
        frame = int(ndp["mtu"]) + int(ndp["header_bytes"])
        return float(int(b.get("max_packets") or 0) * frame + int(b.get("max_bytes") or 0))
    return float(b.get("max_bytes") or 0) or None


def short_p99_s(r: Result) -> float | None:
    """The 99th percentile completion of the short flows beside the incast: the report's
    ``short_flows`` (``workload.short_load``; a lower bound while any is unfinished, see
    :func:`short_unfinished`), or a mixed workload's flows of at most
    :data:`SHORT_FLOW_BYTES` (``workload.kind = "flows"``: short flows and incast bursts)."""
    short = r.report.get("short_flows")
    if short is not None:
        return short["p99"] / 1e12 if short.get("p99") is not None else None
    if r.scenario["workload"]["kind"] != "flows":
        return None
    fcts = sorted(
        f["fct"] / 1e12
        for f in r.report.get("flows") or []
        if f.get("fct") is not None and 0 < int(f.get("bytes") or 0) <= SHORT_FLOW_BYTES
    )
    return fcts[min(len(fcts) - 1, int(0.99 * len(fcts)))] if fcts else None


def short_unfinished(r: Result) -> int:
    """Short flows beside the incast still running when the run ended (it ends with the
    incast): the report counts each at its age then, so its percentiles are lower bounds."""
    return int((r.report.get("short_flows") or {}).get("unfinished") or 0)


def short_na(r: Result, asked: bool = False) -> str:
    """Why a row has no short-flow tail (``asked``: the scenario set ``workload.short_load``,
    which this row's transport ran without)."""
    if r.report.get("short_flows") is not None:
        return "no short flow completed"
    if asked:  # a transport that carries the short flows reports them (above)
        return f"{r.scenario['transport']} does not carry workload.short_load"
    if r.scenario["workload"]["kind"] != "flows":
        return (
            "no short flows beside the incast in this workload "
            '(set workload.short_load, or workload.kind = "flows")'
        )
    return "no flow of at most 100 KB completed"


@dataclass
class Row:
    """One transport's results over the sender counts (means over them)."""

    entry: Entry
    results: list[Result]
    changed: Overrides = field(default_factory=dict)

    def mean(self, f: Callable[[Result], float | None]) -> float | None:
        return _mean([f(r) for r in self.results])

    @property
    def last_s(self) -> float | None:
        return self.mean(last_s)

    @property
    def unfinished(self) -> int:
        return sum(unfinished(r) for r in self.results)

    @property
    def goodput_bps(self) -> float:
        return statistics.fmean(r.goodput_bps for r in self.results)

    @property
    def block_p99_s(self) -> float | None:
        times = sorted(t for r in self.results for t in r.block_times_s)
        if not times or not _blocks(self.results[0]):
            return None
        return times[min(len(times) - 1, int(0.99 * len(times)))]

    def sort_key(self) -> tuple[int, float]:
        last = self.last_s
        return (self.unfinished, last if last is not None else math.inf)

    def numbers(self) -> dict[str, Any]:
        n = self.mean
        return {
            "last_completion_s": self.last_s,
            "unfinished": self.unfinished,
            "goodput_bps": self.goodput_bps,
            "block_time_p99_s": self.block_p99_s,
            "drops": n(lambda r: float(r.drops)),
            "timeouts": n(lambda r: float(timeouts(r))),
            "trims": n(lambda r: _section(r).get("trimmed")),
            "pfc_pauses": n(lambda r: float(r.report.get("pfc_pauses") or 0)),
            "peak_buffer_bytes": n(peak_bytes),
            "short_flow_p99_s": n(short_p99_s),
            "short_flow_unfinished": sum(short_unfinished(r) for r in self.results),
        }

    def cc_note(self) -> str | None:
        """Why DCQCN changed nothing, when it could not: no CNP reached a sender, or every CNP
        reached one whose data had all left (a short flow at line rate leaves within a round
        trip, before the first CNP), so its rate cut paced no packet."""
        s = self.results[0].scenario
        if s["transport"] != "roce" or s["roce"]["cc"] != "dcqcn":
            return None
        got = sum(int(_section(r).get("cnps_received") or 0) for r in self.results)
        idle = sum(int(_section(r).get("cnps_idle") or 0) for r in self.results)
        if got == 0:
            return "DCQCN idle: no CNP reached a sender (no packet marked)"
        if idle == got:
            return (
                f"DCQCN idle: all {got} CNPs reached senders whose data had all left, "
                "so no rate cut paced a packet (same as RoCE without congestion control)"
            )
        return None

    def keys(self) -> str:
        """The keys this row set, and the transport's MTU and initial window it kept."""
        s = self.results[0].scenario
        own = [f"{k} = {_shown(v)}" for k, v in self.changed.items() if k != "transport"]
        t = s["transport"]
        if t == "tcp":
            tcp = s["tcp"]
            kept = f"{tcp['congestion_control']}, RTOmin {_us(tcp['rto_min'])}, MSS {tcp['mss']} B"
            kept += f", IW {tcp['initial_window']}"
        elif t == "roce":
            kept = f"MTU {s[t]['mtu']} B, line rate from the start"
        elif t == "homa":
            # RTTbytes 0 is derived from the topology: the run's report states what it was.
            rtt_bytes = s[t]["rtt_bytes"] or (self.results[0].report.get("homa") or {}).get(
                "rtt_bytes"
            )
            kept = f"MTU {s[t]['mtu']} B, RTTbytes {rtt_bytes} B unscheduled"
        else:
            kept = f"MTU {s[t]['mtu']} B, IW {s[t]['initial_window']:g}"
        return f"{t}: {kept}" + (f"; {'; '.join(own)}" if own else "")


def _shown(v: Any) -> str:
    """A value as TOML writes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return f'"{v}"' if isinstance(v, str) else str(v)


def short_rule(s: dict[str, Any]) -> str | None:
    """The short flows' rule of normalized scenario ``s``, once for the table; ``None``
    without ``workload.short_load``."""
    w = s["workload"]
    if not w["short_load"]:
        return None
    sizes = (
        "sizes by workload.query_size_cdf"
        if w["query_size_cdf"]
        else f"{w['query_size_min']}-{w['query_size_max']} B uniform"
    )
    return (
        f"short flows: Poisson at {w['short_load']:g} of the receiver's link, {sizes}, "
        f"each from a random server to the receiver, at most {w['queries']}, arriving until "
        "the incast ends; p99 of arrival to last byte, a flow still running when the incast "
        "ends at its age then (≥: a lower bound; short unfin.: how many)"
    )


def _us(ps: int) -> str:
    return f"{ps / 1e9:g} ms" if ps >= 10**9 else f"{ps / 1e6:g} µs"


@dataclass
class TransportRanking:
    """The transports that ran, earliest last flow first, and those refused with why."""

    ranked: list[Row]
    refused: list[tuple[Entry, str]] = field(default_factory=list)

    @property
    def yardstick(self) -> Row:
        return next((o for o in self.ranked if o.entry.name == "tcp"), self.ranked[0])

    def to_json(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = [
            {
                "rank": i,
                "transport": o.entry.name,
                "what": o.entry.what,
                "fabric": o.entry.fabric,
                "changed": o.changed,
                "keys": o.keys(),
                **o.numbers(),
                "cc_note": o.cc_note(),
                "short_flow_note": None
                if o.numbers()["short_flow_p99_s"] is not None
                else short_na(o.results[0], "workload.short_load" in o.changed),
                "points": [r.row() | {"scenario": r.scenario} for r in o.results],
            }
            for i, o in enumerate(self.ranked, 1)
        ]
        rows += [
            {"transport": e.name, "what": e.what, "fabric": e.fabric, "refused": why}
            for e, why in self.refused
        ]
        return rows


def apply(e: Entry, points: Sequence[Scenario]) -> tuple[Overrides, list[Scenario]]:
    """The overrides of the first point and ``points`` with ``e`` applied;
    :class:`ScenarioError` if the transport cannot run the scenario."""
    from incastlab import scenario as sc_mod

    changed: Overrides = {}
    out = []
    for sc in points:
        o = e.overrides(sc.normalized())
        try:
            point = sc_mod.from_dict(sc_mod.apply_overrides(sc.model_dump(), o), normalized=True)
        except sc_mod.ScenarioError as refused:
            # Which transports carry the short flows is the scenario's rule (Rust's validation,
            # workload.short_load; today every one does); one that refused them would run
            # without them and its row would say so.
            if not str(refused).startswith("workload.short_load:"):
                raise
            o = o | {"workload.short_load": 0.0}
            point = sc_mod.from_dict(sc_mod.apply_overrides(sc.model_dump(), o), normalized=True)
        changed = changed or o
        out.append(point)
    return changed, out


def rank_transports(
    points: Sequence[Scenario],
    chosen: Sequence[Entry] = TRANSPORTS,
    *,
    backend: Backend | None = None,
    tracker: Tracker | None = None,
    workers: int | None = None,
) -> TransportRanking:
    """Run ``points`` under each transport and rank them by the last flow's completion
    (unfinished flows last). One the scenario cannot take is refused with the reason."""
    from incastlab import backends
    from incastlab.scenario import ScenarioError
    from incastlab.series import run_many

    runner = backend or backends.get("sim")
    taken: list[tuple[Entry, Overrides, list[Scenario]]] = []
    refused: list[tuple[Entry, str]] = []
    for e in chosen:
        try:
            changed, scs = apply(e, points)
            taken.append((e, changed, scs))
        except ScenarioError as err:
            refused.append((e, str(err).splitlines()[0]))
            if tracker:
                tracker.done(len(points), what=f"{e.name}: refused")
    if not taken:
        raise ScenarioError("transport: no transport of the comparison runs this scenario")
    flat = [sc for _, _, scs in taken for sc in scs]
    labels = [f"{e.name} N={sc.senders}" for e, _, scs in taken for sc in scs]
    runs = iter(run_many(runner, flat, labels, tracker, workers=workers))
    rows = [Row(e, [next(runs)[0] for _ in scs], ch) for e, ch, scs in taken]
    return TransportRanking(sorted(rows, key=Row.sort_key), refused)
