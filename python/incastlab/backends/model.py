"""The model as a backend: reads the same scenario as ``incast sim`` and answers per sender
count in the same shape, naming the scenario fields it does not use."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from incastlab import _core, model
from incastlab.backends import ProgressFn, off_defaults
from incastlab.model import burst, domain
from incastlab.model import correction as correction_mod
from incastlab.model.burst import BurstPrediction, Constants
from incastlab.model.correction import Correction
from incastlab.model.onset import onset as burst_onset
from incastlab.model.port import queue_ramp
from incastlab.model.report import model_report
from incastlab.result import Result
from incastlab.scenario import Scenario, ScenarioError

PS = 1e-12

#: The fields Chen's Eq. 1-4 read (the uncalibrated model).
CHEN_USED = {
    "topology.kind",
    "topology.senders",
    "topology.link",
    "topology.receiver_link",
    "topology.rtt",
    "topology.buffer",
    "topology.receiver_buffer",
    "tcp.mss",
    "tcp.header_bytes",
    "tcp.initial_window",
    "tcp.rto_min",
    "tcp.rto_formula",
    "workload.kind",
    "workload.sru",
    "workload.block",
    "workload.blocks",
}

#: Normalized-scenario fields the (burst) model reads: Chen's and these.
USED = CHEN_USED | {
    "tcp.timer_granularity",
    "tcp.rto_max",
    "tcp.clock_granularity",
    "tcp.phy_overhead",
    "tcp.cwnd_restart",
    "tcp.dupthresh",
    "tcp.rack_tlp",
    "tcp.delayed_ack",
    "tcp.quickack",
    "tcp.congestion_control",
    "tcp.ecn",
    "tcp.profile",
    "tcp.hystart",
    "tcp.cubic_update",
    "tcp.sack_rtt",
    "tcp.tso",
    "topology.ecn_threshold",
    "topology.host_jitter",
    "workload.request_size",
}


def port_buffer_bytes(s: dict[str, Any], needs: str = "the model needs a finite buffer") -> int:
    """A normalized scenario's buffer at the bottleneck, the receiver's port, in bytes
    (packet limits count full frames). An unlimited buffer is a :class:`ScenarioError` whose
    message says who ``needs`` a size."""
    key = "receiver_buffer" if s["topology"]["receiver_buffer"] else "buffer"
    buf = s["topology"][key]
    if buf["bytes"] is not None:
        return int(buf["bytes"])
    if buf["packets"] is None:
        # An unlimited port never drops, so no sender waits out a timeout: the model's
        # question (how many timeouts a block takes) has no answer there, and its terms (the
        # share of the buffer each sender holds, the onset where the buffer overflows) are not
        # defined. The simulator runs such a port.
        raise ScenarioError(
            f"topology.{key}: {needs} (a size such as 64KB or a packet count such as 42pkt), "
            "not unlimited; an unlimited port drops nothing, so `incast sim` answers that case"
        )
    return int(buf["packets"]) * int(s["tcp"]["mss"] + s["tcp"]["header_bytes"])


def rtt_and_rto(s: dict[str, Any]) -> tuple[float, float]:
    """Base RTT and the RTO a connection settles on (RTOmin, plus the RTT where the scenario
    uses Linux's formula), seconds."""
    rtt = s["topology"]["rtt"] * PS
    extra = rtt if s["tcp"]["rto_formula"] == "linux" else 0.0
    return rtt, s["tcp"]["rto_min"] * PS + extra


def ignored_fields(sc: Scenario, used: set[str] = USED) -> list[str]:
    """Fields set away from their defaults that the model does not account for."""
    return off_defaults(sc, used)


@dataclass(frozen=True)
class ModelPoint:
    """The model's answer for one scenario point."""

    senders: int
    sru: int
    onset: int | None
    prediction: model.Prediction
    link_bps: int
    ignored: list[str]
    scenario: dict[str, Any]
    #: The burst model's account (``None`` for Chen's Eq. 1-4 with the papers' constants).
    burst: BurstPrediction | None = None
    constants: Constants | None = None
    #: The 10-90% range the model expects the simulator's goodput in (burst model only).
    interval: tuple[float, float] | None = None
    #: The keys that take the point out of the model's validated domain, ``"key: why"``.
    outside: list[str] = field(default_factory=list)
    #: Simulator / mechanisms by the learned correction (``None``: not corrected).
    correction: float | None = None

    @property
    def dominant(self) -> str:
        """The term that takes most of the block's time."""
        if self.burst is not None:
            return self.burst.dominant
        return "RTO waits" if self.prediction.regime == "rto" else "transfer"

    def row(self) -> dict[str, Any]:
        p = self.prediction
        return {
            "backend": "model",
            "senders": self.senders,
            "sru": self.sru,
            "regime": p.regime,
            "onset": self.onset,
            "goodput_bps": p.goodput_bps,
            "goodput_fraction": p.goodput_bps / self.link_bps,
            # The mechanisms' own answer and the factor the learned correction put on it.
            "mechanisms_bps": self.burst.goodput_bps if self.burst is not None else None,
            "correction": self.correction,
            "link_bps": self.link_bps,
            "block_time_s": p.block_time_s,
            "timeouts_per_block": p.timeouts_per_block,
            "dominant": self.dominant,
            "ignored": self.ignored,
            "interval_bps": list(self.interval) if self.interval else None,
            "outside_domain": self.outside,
            "scenario": self.scenario,
        }

    def result(self) -> Result:
        """The prediction as a :class:`Result` (backend ``model``), so that it is stored,
        printed and compared as the same record as a run."""
        return Result(
            scenario=self.scenario,
            report=model_report(self.row(), self.scenario),
            version=_core.__version__,
            backend="model",
        )


def predict_scenario(
    sc: Scenario,
    *,
    uncalibrated: bool = False,
    constants: Constants | None = None,
    extra_buffer: int = model.CHEN_EXTRA_BUFFER,
    a: float = 1.0,
    a_doubles_at: int | None = None,
    with_onset: bool = True,
    correct: bool = True,
    correction: Correction | None = None,
) -> ModelPoint:
    """The model's prediction for one scenario (one sender count): the burst model with the
    package's fitted constants (or ``constants``) and its learned correction (the package's,
    where it was fitted with those constants, or ``correction``; none with ``correct=False``:
    the mechanisms alone), or with ``uncalibrated`` Chen's Eq. 1-4 with the papers' constants
    (``extra_buffer``, ``a``, ``a_doubles_at``). The burst model's onset (the mechanisms')
    takes a scan over sender counts: ``with_onset=False`` skips it."""
    s = sc.normalized()
    t, tcp, w = s["topology"], s["tcp"], s["workload"]
    if w["kind"] != "sync_read":
        raise model.ModelError(
            "workload.kind: the flow-rate model answers synchronized reads (sync_read); "
            "for the N-flow incast use model.optimal_completion"
        )
    n = t["senders"]
    if not uncalibrated:
        c = constants or burst.fitted()
        path = burst_path(s)
        b = burst.predict(path, c)
        flags = domain.outside(s, path, b, c)
        fix = (correction or correction_mod.fitted(c.named())) if correct else None
        factor = fix.factor(path, b) if fix is not None else 1.0
        pred = model.Prediction(
            senders=n,
            regime=b.regime,
            goodput_bps=b.goodput_bps * factor,
            block_time_s=b.block_time_s / factor,
            timeouts_per_block=b.timeouts_per_block,
        )
        return ModelPoint(
            senders=n,
            sru=path.sru,
            onset=burst_onset(path, c) if with_onset else None,
            prediction=pred,
            link_bps=t["receiver_link"],
            ignored=ignored_fields(sc),
            scenario=s,
            burst=b,
            constants=c,
            interval=domain.interval(
                b, c, bool(flags), pred.goodput_bps, fix.interval if fix is not None else None
            ),
            outside=flags,
            correction=factor if fix is not None else None,
        )
    # A striped block: the engine's split; the model's senders are alike, so each returns the
    # largest share (the block ends when the slowest, largest one does).
    sru = w["sru"] if w["sru"] is not None else _core.block_split(w["block"], n)[0]
    buffer = port_buffer_bytes(s)
    rtt, rto = rtt_and_rto(s)
    kwargs = dict(
        sru=sru,
        buffer=buffer,
        link_bps=t["receiver_link"],
        rtt=rtt,
        rto=rto,
        mss=tcp["mss"],
        initial_window=tcp["initial_window"],
        extra_buffer=extra_buffer,
        a=a,
    )
    (pred,) = model.predict([n], a_doubles_at=a_doubles_at, **kwargs)
    onset = model.collapse_onset(
        sru, buffer, mss=tcp["mss"], initial_window=tcp["initial_window"], extra_buffer=extra_buffer
    )
    return ModelPoint(
        senders=n,
        sru=sru,
        onset=onset,
        prediction=pred,
        link_bps=t["receiver_link"],
        ignored=ignored_fields(sc, CHEN_USED),
        scenario=s,
    )


def predict_series(
    series: Sequence[tuple[str, Sequence[Scenario]]], **options: Any
) -> list[tuple[str, list[ModelPoint]]]:
    """:func:`predict_scenario` (with ``options``) for every point of labelled series."""
    return [(label, [predict_scenario(sc, **options) for sc in pts]) for label, pts in series]


@dataclass(frozen=True)
class ModelBackend:
    """The analytical model as a :class:`~incastlab.backends.Backend`: synchronized reads
    only; names the fields it does not model (:func:`ignored_fields`). The burst model with
    the package's fitted constants, or Chen's Eq. 1-4 with ``uncalibrated``."""

    uncalibrated: bool = False
    extra_buffer: int = model.CHEN_EXTRA_BUFFER
    a: float = 1.0
    a_doubles_at: int | None = None
    name: str = "model"
    title: str = "analytical model (burst overflow and serial RTOs)"
    needs_root: bool = False
    predicts: bool = True
    parallel: bool = True

    def check(self) -> None:
        """The model needs nothing but numpy."""

    def unsupported(self, scenario: Scenario) -> list[str]:
        return ignored_fields(scenario, CHEN_USED if self.uncalibrated else USED)

    def run(self, scenario: Scenario, *, progress: ProgressFn | None = None) -> Result:
        point = predict_scenario(
            scenario,
            uncalibrated=self.uncalibrated,
            extra_buffer=self.extra_buffer,
            a=self.a,
            a_doubles_at=self.a_doubles_at,
        )
        return point.result()


def chen_backend() -> ModelBackend:
    """Chen et al.'s flow-rate model (Eq. 1-4) with the papers' constants as a backend of its
    own, for sweeps that reproduce the papers' closed forms (``backend = "chen"``)."""
    return ModelBackend(
        uncalibrated=True, name="chen", title="Chen et al.'s flow-rate model (Eq. 1-4)"
    )


def burst_path(s: dict[str, Any]) -> burst.Path:
    """A normalized scenario in the burst model's terms (:class:`incastlab.model.burst.Path`)."""
    t, tcp, w = s["topology"], s["tcp"], s["workload"]
    n = t["senders"]
    sru = w["sru"] if w["sru"] is not None else _core.block_split(w["block"], n)[0]
    rtt, _ = rtt_and_rto(s)
    frame = tcp["mss"] + tcp["header_bytes"]
    k = t["ecn_threshold"]
    dctcp = tcp["congestion_control"] == "dctcp"
    marking = None
    if dctcp and (k["bytes"] is not None or k["packets"] is not None):
        marking = int(k["bytes"]) if k["bytes"] is not None else int(k["packets"]) * frame
    buffer = port_buffer_bytes(s)
    # The simulator owns the timer's rules (RTOmin in whole ticks, the RTO formula), and its
    # estimator follows the queue a block builds (burst.rto_seconds).
    queue, samples = queue_ramp(
        n, buffer if marking is None else min(buffer, marking), frame, float(t["receiver_link"])
    )
    queue_ps = round(queue / PS)
    timer = _core.rto_timer(json.dumps(s), queue_ps, samples)
    # A later block's senders carry the estimator that every round trip of the last block's
    # full queue fed (probe.probe_wait): its lone probe's timer, as the simulator's rules set them.
    queued = {**s, "topology": {**t, "rtt": t["rtt"] + queue_ps}}
    timer_q = _core.rto_timer(json.dumps(queued))
    cubic = tcp["congestion_control"] == "cubic"
    beta = 0.7 if cubic else 0.5
    return burst.Path(
        senders=n,
        sru=sru,
        buffer=buffer,
        link_bps=float(t["receiver_link"]),
        rtt=rtt,
        rto=timer["rto"] * PS,
        rto_queued=timer["rto_queued"] * PS,
        rto_settled=timer_q["rto"] * PS,  # the estimator settled on the full queue
        rto_first=timer["rto_handshake"] * PS,
        rto_max=tcp["rto_max"] * PS,
        probe=timer["probe"] * PS,
        probe_lone=timer["probe_lone"] * PS,
        probe_lone_queued=timer_q["probe_lone"] * PS,
        # A tick of a microsecond or less is as good as exact at these time scales.
        timer_tick=timer["tick"] * PS if timer["tick"] > 1_000_000 else 0.0,
        rto_grain=timer["tick"] * PS,
        mss=tcp["mss"],
        frame=frame,
        wire=frame + tcp["phy_overhead"],
        request_wire=w["request_size"] + tcp["header_bytes"] + tcp["phy_overhead"],
        initial_window=tcp["initial_window"],
        restart=tcp["cwnd_restart"],
        blocks=w["blocks"],
        dupthresh=tcp["dupthresh"],
        rack_tlp=tcp["rack_tlp"],
        delayed_ack=tcp["delayed_ack"] * PS,
        quickack=tcp["quickack"],
        # The simulator's receiver caps its delayed ACK as Linux's does (with quick ACKs).
        delack_max=timer["delack_max"] * PS if tcp["quickack"] else math.inf,
        marking=marking,
        beta=beta,
        host_jitter=t["host_jitter"] * PS,
        karn=not tcp["sack_rtt"],
        loss_blind=tcp["congestion_control"] == "bbr",
        tso=tcp["tso"],
        # CUBIC's Reno-friendly growth leads at datacenter RTTs (model/window.py).
        growth=3 * (1 - beta) / (1 + beta) if cubic else 1.0,
        hystart=cubic and tcp["hystart"],
        # The simulator's rule (HZ/32 jiffies and half of one), on its RTO's clock.
        cubic_hold=timer["cubic_hold"] * PS if cubic and tcp["cubic_update"] == "linux" else 0.0,
    )
