"""``incast doctor``: from a capture to a replica and ranked remedies.

An operator who suspects incast has a capture, not a scenario. The doctor reads the capture
(:mod:`~incastlab.doctor.evidence`), infers the scenario it shows with a range and a confidence
for every value (:mod:`~incastlab.doctor.infer`), fits what the capture cannot show (the switch
buffer and RTOmin) by simulation and runs the replica under several seeds
(:mod:`~incastlab.doctor.replica`), and, when the evidence shows incast, ranks
``incast mitigate``'s remedies on the replica.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from incastlab.doctor.ecn import ecn_estimates, fit_threshold
from incastlab.doctor.evidence import EvidenceError, read_capture
from incastlab.doctor.family import assumed_family_misses, bbr_if_closer
from incastlab.doctor.infer import COMMON_RTO_MIN_PS, Estimate, infer
from incastlab.doctor.replica import (
    PROBE_RTO_MIN_PS,
    Figures,
    Fit,
    capture_figures,
    fit_rto_and_buffer,
    replica_run,
    scenario_dict,
)
from incastlab.doctor.starts import direct_starts, fit_jitter, replica_trace
from incastlab.doctor.timer import read_tick

if TYPE_CHECKING:
    from incastlab.doctor.recording import RecordingDiagnosis
    from incastlab.series import Tracker
    from incastlab.studies.mitigate import Ranking
    from incastlab.trace import TraceReport

__all__ = ["Diagnosis", "Estimate", "EvidenceError", "diagnose"]

#: The replica's seeds and TCP profile when the caller names none (today's servers).
DEFAULT_SEEDS = (1, 2, 3)
DEFAULT_PROFILE = "linux"
#: Goodput below this share of the link, with timeouts, is the collapse the doctor looks for.
COLLAPSE_SHARE = 0.5
#: Goodput at or above this share of the link is no incast worth a remedy, whatever
#: synchronized timeouts the capture shows (16 x 64 KB at 100 Mbps, RTOmin 10 ms: timeouts
#: in step every block, 92% of the link).
MILD_SHARE = 0.85


@dataclass
class Diagnosis:
    """What the doctor found: the estimates, the replica and its figures beside the
    capture's, whether it is incast and why, and the remedies ranked on the replica."""

    path: str
    trace: TraceReport
    estimates: dict[str, Estimate]
    scenario: dict[str, Any]
    capture: Figures
    replica: Figures
    seeds: list[int]
    incast: bool
    why: str
    remedies: Ranking | None = None
    notes: list[str] = field(default_factory=list)
    #: The host's recording of the same event (``incast monitor --record``), when given.
    recording: RecordingDiagnosis | None = None

    def to_json(self) -> dict[str, Any]:
        from incastlab import scenario as sc_mod

        return {
            "capture": self.path,
            "receiver": self.trace.report["receiver"],
            "incast": self.incast,
            "verdict": self.why,
            "estimates": {k: e.to_json() for k, e in self.estimates.items()},
            "scenario": sc_mod.from_dict(self.scenario).normalized(),
            "scenario_file": self.scenario,
            "figures": {"capture": self.capture.to_json(), "replica": self.replica.to_json()},
            "seeds": self.seeds,
            "remedies": self.remedies.to_json() if self.remedies else [],
            "recording": self.recording.to_json() if self.recording else None,
            "notes": self.notes,
            "version": self.trace.version,
        }


def diagnose(
    path: str,
    *,
    receiver: str | None = None,
    profile: str = DEFAULT_PROFILE,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    remedies: bool = True,
    workers: int | None = None,
    tracker: Tracker | None = None,
    rto_candidates: Sequence[int] = COMMON_RTO_MIN_PS,
    recording: str | None = None,
    cc: str | None = None,
) -> Diagnosis:
    """Read the capture at ``path``, infer its scenario, fit and run the replica, and rank
    remedies when it shows incast. Raises :class:`EvidenceError` for a capture no scenario
    can be inferred from (no TCP, one flow, no receiver). ``rto_candidates`` are the RTOmins
    (picoseconds) the fit tries: fewer make it faster. ``recording``, a recording of
    ``incast monitor`` of the same event, bounds RTOmin (the fit tries only candidates its
    waits allow) and adds the host's drops and retransmissions. ``cc`` names the senders'
    congestion control when the user knows it (a capture at the receiver does not show
    it: :func:`~incastlab.doctor.replica.assumed_congestion_control`)."""
    rec = None
    notes: list[str] = []
    if recording is not None:
        from incastlab.doctor.recording import diagnose_recording

        rec = diagnose_recording(recording)
        rto_candidates, note = _bounded_by(rto_candidates, rec)
        notes.append(note)
    first = read_capture(path, receiver)
    receiver = first.report["receiver"]
    est = infer(first)
    if cc is not None:
        est["congestion_control"] = Estimate(
            "congestion_control", cc, None, None, "given", "named by the user (--cc)"
        )
    if rec is not None and rec.estimates["link"].confidence == "high":
        # The interface's own speed beats a rate guessed from the capture's peak.
        est["link"] = rec.estimates["link"]
    est.update(direct_starts(first, est["link"].value, est["workload"].value))
    est["timer_tick"] = read_tick(first.report["timer_fires_ns"])
    if "jitter" in est and est["jitter"].value:
        est["jitter"] = fit_jitter(est, first, lambda e: replica_trace(e, profile, seeds[0]))
    found = ecn_estimates(first)
    if cc is not None:
        found.pop("congestion_control", None)
    est.update(found)
    if "ecn" in est:
        est["ecn_threshold"] = fit_threshold(est, first, profile, seeds[0])
    named = "congestion_control" in est
    readings: dict[int, TraceReport] = {}

    def read_at(rto_min_ps: int) -> TraceReport:
        # Timeouts counted as ``incast pcap --rto-min`` counts them with that value.
        if rto_min_ps not in readings:
            readings[rto_min_ps] = read_capture(path, receiver, rto_min_ps)
        return readings[rto_min_ps]

    silences = read_at(PROBE_RTO_MIN_PS).report["rto_silences_ns"]

    best: list[Fit] = []

    def fit(e: dict[str, Estimate]) -> float:
        e["rto_min"], e["buffer"], fits = fit_rto_and_buffer(
            e,
            lambda c: capture_figures(read_at(c)),
            silences,
            profile,
            seeds,
            rto_candidates=rto_candidates,
        )
        best[:] = fits[:1]
        return fits[0].distance

    distance = fit(est)
    if not named:
        # The best candidate's replica (at its search buffer) stands for the family's.
        at_best = capture_figures(read_at(best[0].rto_min_ps))
        doubt = assumed_family_misses(est, at_best, best[0].replica)
        if doubt is not None:
            est = bbr_if_closer(est, distance, doubt, fit)
    rto = int(est["rto_min"].value)
    trace = read_at(rto)
    target = capture_figures(trace)
    if target.retx_per_block == 0 and target.timeouts_per_block == 0:
        # Nothing was lost, so nothing waited for a timer: the fit's RTOmin is only the one
        # the replica runs, not a finding.
        est["rto_min"] = Estimate(
            "rto_min",
            rto,
            None,
            None,
            "not shown",
            "no segment was resent in the capture, so no timer fired: RTOmin is not shown "
            f"(the replica runs {rto / 1e9:g} ms)",
        )
    scenario = scenario_dict(est, est["buffer"].value, rto, profile, seeds[0])
    replica = replica_run(est, rto, profile, seeds)
    incast, why = _verdict(trace, target, est)
    d = Diagnosis(path, trace, est, scenario, target, replica, list(seeds), incast, why)
    d.recording, d.notes = rec, notes
    if incast and remedies:
        from incastlab import scenario as sc_mod
        from incastlab.studies.mitigate import mitigate

        d.remedies = mitigate([sc_mod.from_dict(scenario)], tracker=tracker, workers=workers)
    return d


def _bounded_by(candidates: Sequence[int], rec: RecordingDiagnosis) -> tuple[Sequence[int], str]:
    """The RTOmin candidates the recording's waits allow, and a note saying so."""
    e = rec.estimates.get("rto_min")
    if e is None:
        return candidates, "the recording shows no recurring timeout waits: RTOmin unbounded"
    hi = e.hi if e.hi is not None else float("inf")
    lo = 0.9 * float(e.lo or 0)
    kept = [c for c in candidates if lo <= c <= hi]
    if not kept:
        return candidates, (
            f"the recording bounds RTOmin to at most {hi / 1e9:,.1f} ms, which no candidate "
            "meets: all tried"
        )
    return kept, (
        f"the recording bounds RTOmin to at most {hi / 1e9:,.1f} ms: "
        f"{len(kept)} of {len(candidates)} candidates tried"
    )


def _verdict(t: TraceReport, fig: Figures, est: dict[str, Estimate]) -> tuple[bool, str]:
    r = t.report
    link = est["link"].value
    share = fig.goodput_bps / link if link else 0.0
    if r["incast"] and share >= MILD_SHARE:
        # Timeouts in step, but they cost the link little: nothing worth a remedy.
        return False, (
            f"no incast to speak of: {str(r['verdict']).removeprefix('incast: ')}; yet goodput "
            f"is {share:.0%} of the {link / 1e9:g} Gbps link"
        )
    if r["incast"]:
        return True, str(r["verdict"]).removeprefix("incast: ")
    if fig.timeouts_per_block > 0 and share < COLLAPSE_SHARE:
        return True, (
            f"{fig.timeouts_per_block:.2f} timeouts per block and goodput "
            f"{share:.0%} of the {link / 1e9:g} Gbps link: responses lose their tails"
        )
    return False, (
        f"no incast: {fig.timeouts_per_block:.2f} timeouts per block, goodput {share:.0%} of "
        f"the {link / 1e9:g} Gbps link"
    )
