"""What a recording of ``incast monitor`` shows when no capture exists: a host's interface
sampled every millisecond or so and its kernel's TCP counters once a second
(:func:`incastlab.monitor.read_parquet` reads it back).

A recording has no flows, so it cannot show the senders or the response sizes; it can show
the link, how bursty it is, the host's own drops and retransmissions, and the incast
signature Fritchie read on his Riak cluster: line-rate bursts cut by idle gaps of about one
retransmission timeout, recurring (S. L. Fritchie, "TCP incast: What is it? How can it affect
Erlang applications?", blog post, 2012). Those gaps bound RTOmin: a timed-out flow's timer
was armed no later than the link fell idle and fired when data came back, so its RTO is at
least the gap and at most the gap plus the burst before it; RTOmin is at most that RTO.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from incastlab.doctor.evidence import EvidenceError
from incastlab.doctor.infer import COMMON_RTO_MIN_PS, Estimate, nearest_rate
from incastlab.monitor import (
    LINE_SHARE,
    TCP_COUNTERS,
    MonitorRun,
    RecordingError,
    read_parquet,
    summary,
)

#: An interval is idle below this share of the link (a lone resend or ACKs, not a flight).
IDLE_SHARE = 0.02
#: Gaps shorter than this are a flight's ordinary pauses, not a timeout's wait.
MIN_GAP_NS = 1_000_000
#: Gaps within this factor of their median are one recurring wait.
RECUR_FACTOR = 1.5
#: How many recurring gaps after line-rate bursts make the incast signature.
MIN_RECURRING = 3
#: Average below this share of the link while the signature shows: a collapsed fan-in.
COLLAPSE_SHARE = 0.5


@dataclass(frozen=True)
class Gap:
    """An idle stretch between two active ones: when it starts (ns from the recording's
    start), how long it lasts, and how long the activity before it ran (ns)."""

    start_ns: int
    length_ns: int
    burst_ns: int
    after_line_rate: bool


@dataclass
class RecordingDiagnosis:
    """What the doctor read in a recording: estimates with ranges and evidence, the figures
    the replica would be compared on, and the verdict."""

    path: str
    run: MonitorRun
    estimates: dict[str, Estimate]
    figures: dict[str, Any]
    gaps: list[Gap]
    incast: bool
    why: str
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "recording": self.path,
            "iface": self.run.iface,
            "incast": self.incast,
            "verdict": self.why,
            "estimates": {k: e.to_json() for k, e in self.estimates.items()},
            "figures": self.figures,
            "gaps_ms": [g.length_ns / 1e6 for g in self.gaps],
            "notes": self.notes,
            "version": self.run.version,
        }


def read_recording(path: str) -> MonitorRun:
    """The recording at ``path``; :class:`EvidenceError` for a file that is not one or that
    holds too few intervals to read anything from."""
    try:
        run = read_parquet(path)
    except RecordingError as e:
        raise EvidenceError(str(e)) from None
    if len(run.samples["t_ns"]) < 10:
        raise EvidenceError(f"{path}: a recording of {len(run.samples['t_ns'])} intervals")
    return run


def link_of(run: MonitorRun) -> Estimate:
    """The link: the interface's speed where the recording has it, else the standard rate
    nearest the peak over one interval."""
    if run.line_bps:
        rate = int(run.line_bps)
        return Estimate("link", rate, rate, rate, "high", "the interface's speed (sysfs)")
    peak = float(run.rates().max())
    rate, full = nearest_rate(peak)
    return Estimate(
        "link",
        rate,
        rate if full else peak,
        rate if full else None,
        "medium" if full else "low",
        f"peak over one {run.interval_ns / 1e6:g} ms interval {peak / 1e6:,.1f} Mbps",
    )


def idle_gaps(run: MonitorRun, link_bps: float) -> list[Gap]:
    """Idle stretches of at least :data:`MIN_GAP_NS` with activity on both sides."""
    rates = run.rates()
    dt = np.asarray(run.samples["dt_ns"], dtype=np.int64)
    t = np.asarray(run.samples["t_ns"], dtype=np.int64)
    idle = rates < IDLE_SHARE * link_bps
    at_line = rates >= LINE_SHARE * link_bps
    gaps: list[Gap] = []
    i, n = 0, len(rates)
    active_since: int | None = None
    while i < n:
        if not idle[i]:
            if active_since is None:
                active_since = i
            i += 1
            continue
        j = i
        while j < n and idle[j]:
            j += 1
        length = int(dt[i:j].sum())
        if active_since is not None and j < n and length >= MIN_GAP_NS:
            before = slice(active_since, i)
            gaps.append(
                Gap(
                    int(t[i] - dt[i]),
                    length,
                    int(dt[active_since:i].sum()),
                    bool(at_line[before].any()),
                )
            )
            active_since = None
        i = j
    return gaps


def recurring(gaps: list[Gap]) -> list[Gap]:
    """The gaps after line-rate bursts that recur at one length, the timeout's wait: of the
    windows of lengths within :data:`RECUR_FACTOR` of each other holding at least
    :data:`MIN_RECURRING` gaps, the one that idles the link longest in all (a collapse's
    waits take most of its time; a flight's short pauses are many but brief)."""
    after = [g for g in gaps if g.after_line_rate]
    lengths = sorted(g.length_ns for g in after)
    best: list[int] = []
    for k, lo in enumerate(lengths):
        window = [x for x in lengths[k:] if x <= lo * RECUR_FACTOR]
        if len(window) >= MIN_RECURRING and sum(window) > sum(best):
            best = window
    if not best:
        return []
    return [g for g in after if best[0] <= g.length_ns <= best[-1]]


def rto_min_of(gaps: list[Gap], waits: list[Gap]) -> Estimate | None:
    """RTOmin from the recurring waits. A timed-out flow's timer fired when data came back
    after the wait, and was armed no later than the link fell idle and no earlier than the
    end of the previous long wait: its RTO is at least the wait and at most the wait plus
    the traffic since that earlier one. RTOmin is at most that; where RTOmin sets the
    timeout (a datacenter's RTT is far below it), it is about the RTO itself."""
    if not waits:
        return None
    floor = statistics.median(g.length_ns for g in waits) / 2
    his = []
    for w in waits:
        earlier = [g for g in gaps if g.start_ns < w.start_ns and g.length_ns >= floor]
        since = earlier[-1].start_ns + earlier[-1].length_ns if earlier else w.start_ns - w.burst_ns
        his.append(w.start_ns - since + w.length_ns)
    lo = statistics.median(g.length_ns for g in waits) * 1000  # ps
    hi = statistics.median(his) * 1000
    inside = [c for c in COMMON_RTO_MIN_PS if 0.9 * lo <= c <= hi]
    value = min(inside) if inside else max((c for c in COMMON_RTO_MIN_PS if c <= hi), default=0)
    return Estimate(
        "rto_min",
        value,
        0,
        hi,
        "medium" if inside else "bound",
        f"{len(waits)} idle waits after line-rate bursts, median {lo / 1e9:,.1f} ms: a "
        f"timeout of {lo / 1e9:,.1f}..{hi / 1e9:,.1f} ms, so RTOmin at most {hi / 1e9:,.1f} ms"
        + (f" (the common value there: {value / 1e9:g} ms)" if inside else ""),
    )


def counters(run: MonitorRun, whole: dict[str, Any]) -> dict[str, int]:
    """The kernel's TCP counters over the recording and the host's own drops (NIC and
    qdiscs); the counters' deltas from the run's summary (``incastlab.monitor.summary``,
    their one owner)."""
    tcp = {k: int(whole[f"tcp_{k}"]) for k in TCP_COUNTERS if f"tcp_{k}" in whole}
    nic = int(sum(run.samples["drops"]))
    return {**tcp, "nic_drops": nic, "qdisc_drops": int(whole["qdisc_drops"] or 0)}


def diagnose_recording(path: str) -> RecordingDiagnosis:
    """Read the recording at ``path`` and say what it shows."""
    run = read_recording(path)
    link = link_of(run)
    gaps = idle_gaps(run, float(link.value))
    waits = recurring(gaps)
    whole = summary(run)
    avg = float(whole["avg_bps"])
    c = counters(run, whole)
    est = {"link": link}
    rto = rto_min_of(gaps, waits)
    if rto is not None:
        est["rto_min"] = rto
    figures = {
        "avg_bps": avg,
        "peak_bps": float(whole["peak_bps"]),
        "duration_s": float(whole["duration_s"]),
        "idle_gaps": len(gaps),
        "recurring_waits": len(waits),
        **c,
    }
    share = avg / link.value if link.value else 0.0
    if waits and share < COLLAPSE_SHARE:
        incast, why = (
            True,
            (
                f"{len(waits)} line-rate bursts each followed by an idle "
                f"~{statistics.median(g.length_ns for g in waits) / 1e6:,.1f} ms (a timeout's "
                f"wait), the link averaging {share:.0%} of its rate"
            ),
        )
    elif waits:
        incast, why = (
            False,
            (
                f"no incast: {len(waits)} idle gaps after line-rate bursts recur, but the link "
                f"averages {share:.0%} of its rate"
            ),
        )
    else:
        incast, why = (
            False,
            (
                f"no incast signature: {len(gaps)} idle gaps, none recurring after line-rate "
                f"bursts; the link averages {share:.0%} of its rate"
            ),
        )
    notes = [
        "a recording shows no flows: senders and response sizes need a capture "
        "(incast doctor CAPTURE --monitor RECORDING)",
    ]
    if c.get("timeouts", 0) == 0 and waits:
        notes.append(
            "this host's kernel counted no timeouts: the timeouts are the senders' (record "
            "on a server to count them)"
        )
    return RecordingDiagnosis(path, run, est, figures, gaps, incast, why, notes)
