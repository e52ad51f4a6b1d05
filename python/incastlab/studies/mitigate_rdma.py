"""Remedies of incast on an RDMA fabric (``transport = "roce"``), and the numbers an RDMA
operator reads of each: when the last flow and the average flow completed, the PFC pause frames
and the time links spent paused, the victim flows (paused at a port they do not cross to the
receiver), the switches' peak buffer use and the drops.

A lossless fabric does not drop under incast, it pauses: so the remedies are the congestion
control that keeps queues short before PFC must act (none, DCQCN reading ECN, HPCC reading
INT), where PFC acts (XOFF lower or higher, the dynamic threshold over a shared buffer), how
the switch's memory is split (per ingress or shared), and whether the fabric is lossless at all
(lossy with IRN's selective repeat, as Mittal et al. propose in "Revisiting Network Support for
RDMA", SIGCOMM 2018, against lossless with the NICs' go-back-N). Each is a function from the
normalized base scenario to overrides, as :mod:`incastlab.studies.mitigate`'s are, so it
scales with the scenario; one the scenario already runs, or cannot take, is skipped with the
reason. They rank by the last flow's completion: an incast's job waits for its last flow.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from incastlab.result import Result
from incastlab.studies.dcqcn_marking import dcqcn_marking
from incastlab.studies.mitigate import Overrides

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.scenario import Scenario
    from incastlab.series import Tracker


class Skip(Exception):
    """The remedy does not apply to this scenario (it already runs it): why."""


@dataclass(frozen=True)
class Remedy:
    """One change to an RDMA fabric: its name, what it changes (short), why it should help
    (the mechanism), and the overrides."""

    name: str
    what: str
    why: str
    overrides: Callable[[dict[str, Any]], Overrides]


def _cc(cc: str) -> Callable[[dict[str, Any]], Overrides]:
    def f(s: dict[str, Any]) -> Overrides:
        if s["roce"]["cc"] == cc:
            raise Skip(f"the scenario already runs roce.cc = {cc!r}")
        out: Overrides = {"roce.cc": cc}
        t = s["topology"]
        if cc == "hpcc":
            out["topology.int"] = True
        if cc == "dcqcn" and t["ecn_kmin"] is None and not (t["red_min"] and t["red_ecn"]):
            out.update(dcqcn_marking(t))
        return out

    return f


def _lossless(s: dict[str, Any]) -> bool:
    return bool(s["roce"]["lossless"])


def _per_ingress_bytes(s: dict[str, Any]) -> int:
    """The bytes each ingress may hold: the port buffer, or a shared buffer's share."""
    t = s["topology"]
    if t["buffer"]["bytes"] is not None:
        return int(t["buffer"]["bytes"])
    if t["buffer"]["packets"] is not None:
        return int(t["buffer"]["packets"]) * int(s["roce"]["mtu"] + s["roce"]["header_bytes"])
    if t["shared_buffer"]:
        return int(t["shared_buffer"]) // switch_ports(s)
    raise Skip("the scenario's ports are unlimited and share no buffer: nothing to size")


def switch_ports(s: dict[str, Any]) -> int:
    """Ports of the scenario's largest switch: a star's hosts; a leaf's hosts and spines; a
    fat tree's k."""
    t = s["topology"]
    if t["kind"] == "leaf_spine":
        return int(t["hosts_per_leaf"]) + max(1, int(t["spines"]))
    if t["kind"] == "fat_tree":
        return int(t["fat_tree_k"])
    return int(t["senders"]) + 1


def _static_xoff(s: dict[str, Any]) -> None:
    if not _lossless(s):
        raise Skip("the fabric is lossy (roce.lossless = false): no PFC threshold to move")
    if s["topology"]["shared_buffer"] and s["topology"]["pfc_xoff"] is None:
        raise Skip("PFC acts at the shared buffer's dynamic threshold (topology.pfc_alpha)")


def _xoff_low(s: dict[str, Any]) -> Overrides:
    """XOFF at a quarter of what an ingress may hold: pause sooner, hold less per ingress."""
    _static_xoff(s)
    return {"topology.pfc_xoff": f"{_per_ingress_bytes(s) // 4}B"}


def _xoff_high(s: dict[str, Any]) -> Overrides:
    """Four times the memory per ingress, so XOFF (memory less headroom) rises with it."""
    _static_xoff(s)
    out: Overrides = {"topology.buffer": f"{4 * _per_ingress_bytes(s)}B"}
    if s["topology"]["pfc_xoff"] is not None:
        out["topology.pfc_xoff"] = f"{4 * s['topology']['pfc_xoff']}B"
        out["topology.pfc_xon"] = None
    if s["topology"]["shared_buffer"]:
        out["topology.shared_buffer"] = f"{4 * s['topology']['shared_buffer']}B"
        out["topology.buffer"] = "unlimited"
    return out


def _shared(alpha: float) -> Callable[[dict[str, Any]], Overrides]:
    """The same memory per switch as the ports' own buffers, shared, PFC at α × free."""

    def f(s: dict[str, Any]) -> Overrides:
        t = s["topology"]
        if t["shared_buffer"] and t["pfc_xoff"] is None and t["pfc_alpha"] == alpha:
            raise Skip(f"the scenario already shares its buffer with topology.pfc_alpha = {alpha}")
        total = t["shared_buffer"] or _per_ingress_bytes(s) * switch_ports(s)
        out: Overrides = {"topology.buffer": "unlimited", "topology.shared_buffer": f"{total}B"}
        if _lossless(s):
            out |= {"topology.pfc_alpha": alpha}
            out |= {"topology.pfc_xoff": None, "topology.pfc_xon": None}
        else:
            out["topology.buffer_alpha"] = alpha
        return out

    return f


def _per_ingress(s: dict[str, Any]) -> Overrides:
    t = s["topology"]
    if not t["shared_buffer"]:
        raise Skip("the scenario already gives every port its own buffer")
    return {
        "topology.shared_buffer": None,
        "topology.buffer": f"{int(t['shared_buffer']) // switch_ports(s)}B",
        "topology.pfc_xoff": None,
        "topology.pfc_xon": None,
    }


def _fabric(lossless: bool, recovery: str) -> Callable[[dict[str, Any]], Overrides]:
    def f(s: dict[str, Any]) -> Overrides:
        if _lossless(s) == lossless and s["roce"]["recovery"] == recovery:
            raise Skip("the scenario already runs it")
        out: Overrides = {
            "roce.lossless": lossless,
            "topology.pfc": lossless,
            "roce.recovery": recovery,
        }
        if not lossless:
            # PFC's own keys have no meaning on a lossy fabric: a lossy port drops at its
            # buffer (or a shared buffer's α), which stays as the scenario sized it.
            keys = ("pfc_xoff", "pfc_xon", "pfc_headroom", "pfc_xon_offset")
            out |= {f"topology.{k}": None for k in keys}
        return out

    return f


REMEDIES: list[Remedy] = [
    Remedy("baseline", "the scenario as given", "", lambda s: {}),
    Remedy(
        "cc-none",
        "no congestion control: PFC alone",
        "senders stay at line rate and PFC is the only brake: pauses grow with the fan-in",
        _cc("none"),
    ),
    Remedy(
        "dcqcn",
        "DCQCN on ECN (Kmin/Kmax scaled)",
        "cuts each sender's rate on CNPs, so queues stay shorter and PFC acts less once the "
        "feedback is back (a round trip behind the queue); its slow additive recovery can "
        "leave the link idle after the cuts",
        _cc("dcqcn"),
    ),
    Remedy(
        "hpcc",
        "HPCC on INT (topology.int on)",
        "windows from the switches' exact queue and rate keep the queue near empty after the "
        "first round trip: few or no pauses, at η of the link",
        _cc("hpcc"),
    ),
    Remedy(
        "xoff-low",
        "PFC XOFF at ¼ of the ingress memory",
        "pauses sooner: a smaller queue here, more pauses spreading upstream",
        _xoff_low,
    ),
    Remedy(
        "xoff-high",
        "4× memory per ingress, XOFF with it",
        "more bytes absorbed before pausing: fewer pauses, a deeper queue",
        _xoff_high,
    ),
    Remedy(
        "shared-1/8",
        "shared buffer, PFC at α = 1/8 of free",
        "the incast's ingresses draw on the memory idle ports leave; the threshold falls as "
        "the pool fills (HPCC's ns-3 default α)",
        _shared(0.125),
    ),
    Remedy(
        "shared-1",
        "shared buffer, PFC at α = 1 of free",
        "a larger dynamic threshold: fewer pauses while the pool lasts, less fairness among "
        "ingresses",
        _shared(1.0),
    ),
    Remedy(
        "per-ingress",
        "each port its own share of the memory",
        "static thresholds: an ingress cannot borrow idle memory",
        _per_ingress,
    ),
    Remedy(
        "lossy-irn",
        "lossy, selective repeat (IRN)",
        "no pauses, so no victims: drops at the incast port, each resent alone",
        _fabric(False, "selective_repeat"),
    ),
    Remedy(
        "lossy-gbn",
        "lossy, go-back-N (the NICs')",
        "no pauses, but each drop resends the whole window behind it",
        _fabric(False, "go_back_n"),
    ),
    Remedy(
        "lossless",
        "lossless (PFC), go-back-N",
        "PFC turns the drops into pauses: no loss to recover, but head-of-line blocking",
        _fabric(True, "go_back_n"),
    ),
]

BY_NAME = {m.name: m for m in REMEDIES}


def choose(names: str | None) -> list[Remedy]:
    """The remedies named (comma-separated), baseline first; all when ``None``."""
    if names is None:
        return list(REMEDIES)
    chosen = [BY_NAME["baseline"]]
    for n in (x.strip() for x in names.split(",") if x.strip()):
        if n not in BY_NAME:
            raise ValueError(
                f"--only: {n!r} is not a remedy of an RDMA scenario; known: {', '.join(BY_NAME)}"
            )
        if BY_NAME[n] not in chosen:
            chosen.append(BY_NAME[n])
    return chosen


def _mean(xs: Sequence[float | None]) -> float | None:
    got = [x for x in xs if x is not None and math.isfinite(x)]
    return statistics.fmean(got) if got else None


def completions(r: Result) -> list[float | None]:
    """Each flow's completion (seconds; ``None``: unfinished), or each block's for a
    synchronized read, whose flows report their bytes over every block."""
    flows = r.flow_completion_s
    if any(x is not None for x in flows) or not r.block_times_s:
        return flows
    return list(r.block_times_s)


def _fabric_of(r: Result) -> dict[str, Any]:
    fab: dict[str, Any] = r.report.get("fabric") or {}
    return fab


@dataclass
class RdmaOutcome:
    """A remedy's results over the sender counts, as means over them."""

    remedy: Remedy
    results: list[Result]
    changed: Overrides = field(default_factory=dict)

    @property
    def unfinished(self) -> int:
        return sum(x is None for r in self.results for x in completions(r))

    @property
    def last_s(self) -> float | None:
        return _mean([max((x for x in completions(r) if x), default=None) for r in self.results])

    @property
    def mean_s(self) -> float | None:
        return _mean([_mean(completions(r)) for r in self.results])

    @property
    def pauses(self) -> float:
        return statistics.fmean(float(r.report.get("pfc_pauses") or 0) for r in self.results)

    @property
    def paused_s(self) -> float | None:
        """Time the links spent paused, summed over the links (from the fabric's report)."""
        return _mean([_paused_s(r) for r in self.results])

    @property
    def victims(self) -> float | None:
        return _mean([_count(_fabric_of(r).get("victim_flows")) for r in self.results])

    @property
    def peak_bytes(self) -> float | None:
        """The most any switch held at once (the fabric's report, else the shared pool's or
        the receiver's port's peak)."""
        return _mean([_peak(r) for r in self.results])

    @property
    def drops(self) -> float:
        return statistics.fmean(r.drops for r in self.results)

    def sort_key(self) -> tuple[int, float, float]:
        """Unfinished flows last; then the last completion; then less paused time (or
        fewer pauses where the fabric's report has no time)."""
        last, paused = self.last_s, self.paused_s
        stall = paused if paused is not None else self.pauses
        return (self.unfinished, last if last is not None else math.inf, stall)


def _count(v: Any) -> float | None:
    return None if v is None else float(v)


def _paused_s(r: Result) -> float | None:
    paused = _fabric_of(r).get("paused")
    return None if paused is None else float(paused) / 1e12


def _peak(r: Result) -> float | None:
    per_switch = _fabric_of(r).get("switch_buffer_max_bytes")
    if per_switch:
        return float(max(per_switch))
    if r.report.get("shared_buffer_max_bytes") is not None:
        return float(r.report["shared_buffer_max_bytes"])
    return float((r.report.get("bottleneck") or {}).get("max_bytes") or 0) or None


def effect(o: RdmaOutcome, base: RdmaOutcome) -> str:
    """What the remedy did against the baseline, in the operator's numbers, and whether that
    helps: an earlier last flow (by 2% or more) that pauses no more, or fewer pauses or drops
    at no later last flow; a trade where one gets better and the other worse."""
    if o is base:
        return "the yardstick"
    parts = []
    if o.unfinished:
        parts.append(f"{o.unfinished} flows unfinished")
    ratio = o.last_s / base.last_s if o.last_s and base.last_s else 1.0
    parts.append(f"last flow {100 * (ratio - 1):+.0f}%")
    if o.pauses != base.pauses:
        if base.pauses and o.pauses:
            cut = base.pauses / o.pauses
            parts.append(f"{cut:.3g}× fewer pauses" if cut >= 1 else f"{1 / cut:.3g}× more pauses")
        else:
            parts.append(f"pauses {base.pauses:.0f} → {o.pauses:.0f}")
    if o.drops != base.drops:
        parts.append(f"drops {base.drops:.0f} → {o.drops:.0f}")
    if o.paused_s is not None and base.paused_s is not None and o.paused_s != base.paused_s:
        parts.append(f"paused {1e6 * base.paused_s:.0f} → {1e6 * o.paused_s:.0f} µs")
    # Paused time, where the fabric reports it, weighs the pauses: many short pauses stall
    # the upstream links less than a few long ones.
    stall, base_stall = (o.paused_s, base.paused_s)
    if stall is None or base_stall is None:
        stall, base_stall = o.pauses, base.pauses
    faster, slower = ratio < 0.98, ratio > 1.02
    calmer = (stall, o.drops) < (base_stall, base.drops) and stall <= base_stall
    rougher = stall > base_stall or o.drops > base.drops
    if o.unfinished > base.unfinished or (slower and not calmer) or (rougher and not faster):
        verdict = "does not help"
    elif (faster or calmer) and not slower and not rougher:
        verdict = "helps"
    elif slower:
        verdict = "trades completion for fewer pauses"
    elif faster:
        verdict = "trades pauses for completion"
    else:
        verdict = "no change"
    return f"{verdict}: " + ", ".join(parts)


@dataclass
class RdmaRanking:
    """The remedies that ran, earliest last flow first, and those skipped with why."""

    ranked: list[RdmaOutcome]
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def baseline(self) -> RdmaOutcome:
        return next(o for o in self.ranked if o.remedy.name == "baseline")

    def to_json(self) -> list[dict[str, Any]]:
        base = self.baseline
        rows: list[dict[str, Any]] = [
            {
                "mitigation": o.remedy.name,
                "what": o.remedy.what,
                "changed": o.changed,
                "why": o.remedy.why,
                "effect": effect(o, base),
                "last_completion_s": o.last_s,
                "mean_completion_s": o.mean_s,
                "unfinished_flows": o.unfinished,
                "pfc_pauses": o.pauses,
                "paused_s": o.paused_s,
                "victim_flows": o.victims,
                "peak_buffer_bytes": o.peak_bytes,
                "drops": o.drops,
                "points": [r.row() | {"scenario": r.scenario} for r in o.results],
            }
            for o in self.ranked
        ]
        rows += [{"mitigation": name, "skipped": why} for name, why in self.skipped]
        return rows


def _value(s: dict[str, Any], dotted: str) -> Any:
    node: Any = s
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def apply(m: Remedy, points: Sequence[Scenario]) -> tuple[Overrides, list[Scenario]]:
    """The overrides of the first point, and ``points`` with ``m`` applied (the fabric's
    report on, so that every run reports its pauses, paused time and victims);
    :class:`Skip` or :class:`ScenarioError` if the scenario cannot take it."""
    from incastlab import scenario as sc_mod

    changed: Overrides = {}
    out = []
    for sc in points:
        norm = sc.normalized()
        # A key unset that was never set is no change: it stays out of what the remedy says.
        o = {k: v for k, v in m.overrides(norm).items() if v is not None or _value(norm, k)}
        changed = changed or o
        data = sc_mod.apply_overrides(sc.model_dump(), o | {"topology.fabric_report": True})
        out.append(sc_mod.from_dict(data, normalized=True))
    return changed, out


def mitigate_rdma(
    points: Sequence[Scenario],
    chosen: Sequence[Remedy] = REMEDIES,
    *,
    backend: Backend | None = None,
    tracker: Tracker | None = None,
    workers: int | None = None,
) -> RdmaRanking:
    """Run the RDMA ``points`` under each remedy and rank them by the last flow's
    completion. A remedy the scenario already runs, or cannot take, is skipped with why."""
    from incastlab import backends
    from incastlab.scenario import ScenarioError
    from incastlab.series import run_many

    runner = backend or backends.get("sim")
    taken: list[tuple[Remedy, Overrides, list[Scenario]]] = []
    skipped: list[tuple[str, str]] = []
    for m in chosen:
        try:
            changed, scs = apply(m, points)
            taken.append((m, changed, scs))
        except (Skip, ScenarioError) as e:
            if m.name == "baseline":
                raise
            skipped.append((m.name, str(e)))
            if tracker:
                tracker.done(len(points), what=f"{m.name}: skipped")
    flat = [sc for _, _, scs in taken for sc in scs]
    labels = [f"{m.name} N={sc.senders}" for m, _, scs in taken for sc in scs]
    runs = iter(run_many(runner, flat, labels, tracker, workers=workers))
    outcomes = [RdmaOutcome(m, [next(runs)[0] for _ in scs], ch) for m, ch, scs in taken]
    return RdmaRanking(sorted(outcomes, key=RdmaOutcome.sort_key), skipped)
