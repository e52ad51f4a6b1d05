"""The model as a backend: reads the same scenario as ``incast sim`` and answers per sender
count in the same shape, naming the scenario fields it does not use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from incastlab import _core, model
from incastlab.backends import ProgressFn, off_defaults
from incastlab.model.report import model_report
from incastlab.result import Result
from incastlab.scenario import Scenario

PS = 1e-12

#: Normalized-scenario fields the model reads.
USED = {
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


def port_buffer_bytes(s: dict[str, Any]) -> int:
    """A normalized scenario's buffer at the bottleneck, the receiver's port, in bytes
    (packet limits count full frames)."""
    buf = s["topology"]["receiver_buffer"] or s["topology"]["buffer"]
    if buf["bytes"] is not None:
        return int(buf["bytes"])
    return int(buf["packets"]) * int(s["tcp"]["mss"] + s["tcp"]["header_bytes"])


def rtt_and_rto(s: dict[str, Any]) -> tuple[float, float]:
    """Base RTT and the RTO a connection settles on (RTOmin, plus the RTT where the scenario
    uses Linux's formula), seconds."""
    rtt = s["topology"]["rtt"] * PS
    extra = rtt if s["tcp"]["rto_formula"] == "linux" else 0.0
    return rtt, s["tcp"]["rto_min"] * PS + extra


def ignored_fields(sc: Scenario) -> list[str]:
    """Fields set away from their defaults that the model does not account for."""
    return off_defaults(sc, USED)


@dataclass(frozen=True)
class ModelPoint:
    """The model's answer for one scenario point."""

    senders: int
    sru: int
    onset: int
    prediction: model.Prediction
    link_bps: int
    ignored: list[str]
    scenario: dict[str, Any]

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
            "link_bps": self.link_bps,
            "block_time_s": p.block_time_s,
            "timeouts_per_block": p.timeouts_per_block,
            "ignored": self.ignored,
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
    extra_buffer: int = model.CHEN_EXTRA_BUFFER,
    a: float = 1.0,
    a_doubles_at: int | None = None,
) -> ModelPoint:
    """The model's prediction for one scenario (one sender count)."""
    s = sc.normalized()
    t, tcp, w = s["topology"], s["tcp"], s["workload"]
    if w["kind"] != "sync_read":
        raise model.ModelError(
            "workload.kind: the flow-rate model answers synchronized reads (sync_read); "
            "for the N-flow incast use model.optimal_completion"
        )
    n = t["senders"]
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
        ignored=ignored_fields(sc),
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
    only; names the fields it does not model (:func:`ignored_fields`)."""

    extra_buffer: int = model.CHEN_EXTRA_BUFFER
    a: float = 1.0
    a_doubles_at: int | None = None
    name: str = "model"
    title: str = "analytical model (Chen Eq. 1-4)"
    needs_root: bool = False
    predicts: bool = True
    parallel: bool = True

    def check(self) -> None:
        """The model needs nothing but numpy."""

    def unsupported(self, scenario: Scenario) -> list[str]:
        return ignored_fields(scenario)

    def run(self, scenario: Scenario, *, progress: ProgressFn | None = None) -> Result:
        point = predict_scenario(
            scenario, extra_buffer=self.extra_buffer, a=self.a, a_doubles_at=self.a_doubles_at
        )
        return point.result()
