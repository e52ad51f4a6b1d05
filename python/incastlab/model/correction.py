"""The burst model's learned correction: gradient-boosted regression trees over the
mechanisms' own account of a point, fitted to what they still miss.

The mechanisms of :mod:`incastlab.model.burst` give the answer and say why (its terms, its
regime, its RTOs). Each of them is a simplification, and on random scenarios their errors add
up in ways no single mechanism explains: on ten random designs drawn after the mechanisms were
chosen they were within 1.5x of the simulator on 87.6% of the points they vouch for. The
correction is fitted to log(simulator / mechanisms) on the random calibration designs
(:mod:`incastlab.model.fit_correction`) from the scenario in the model's terms (a
:class:`~incastlab.model.path.Path`) and the mechanisms' own answer (a
:class:`~incastlab.model.burst.BurstPrediction`): where a regime's error depends on, say, the
buffer against the senders' first windows, the trees learn that dependence. The corrected
goodput is ``mechanisms x exp(sum of the trees)``; the mechanisms' goodput, terms and regime
are kept beside it (``report.model.mechanisms_bps`` in ``--json``).

The trees ship with the package as plain numbers (``correction.json``: for each tree its
nodes' feature, threshold, children and value), evaluated here without the library that
fitted them; their inputs are :func:`features`, whose order is the file's. A correction
fitted with other constants than the package's is not applied (:func:`fitted` returns
``None``): the mechanisms' answer it was fitted to would no longer be the one it corrects.
"""

from __future__ import annotations

import functools
import json
import math
import pathlib
from dataclasses import dataclass, field
from typing import Any

from incastlab.model.burst import Block, BurstPrediction
from incastlab.model.path import Path

#: The trees and their record ship with the package (``incast model calibrate --save``).
CORRECTION_FILE = pathlib.Path(__file__).with_name("correction.json")

#: A correction never moves the mechanisms' answer by more than this factor either way: the
#: trees are fitted on the design's ranges, and a point far outside them (which the domain
#: flags) should not be carried further by them than the calibration ever saw.
MAX_FACTOR = 8.0

_REGIMES = ("ideal", "timeouts", "collapse")
_RESTARTS = ("block", "idle", "never")


def bounded(log_factor: float) -> float:
    """A log factor held within 1 / :data:`MAX_FACTOR` to :data:`MAX_FACTOR`."""
    bound = math.log(MAX_FACTOR)
    return min(bound, max(-bound, log_factor))


def _log(x: float) -> float:
    return math.log(max(x, 1e-12))


def _block(b: Block, block_s: float) -> list[float]:
    return [
        _log(max(b.window, 1e-3)),
        -1.0 if b.loss_round is None else float(b.loss_round),
        math.log1p(b.timeouts),
        math.log1p(b.waits),
        b.stall_s / block_s,
        b.transfer_s / block_s,
        b.delack_s / block_s,
        b.sawtooth_s / block_s,
        b.lock_s / block_s,
    ]


def _scenario(p: Path) -> list[float]:
    return [
        _log(p.senders),
        _log(p.sru),
        _log(p.buffer),
        _log(p.link_bps),
        _log(p.rtt),
        _log(p.rto),
        _log(p.rto_first or p.rto),
        _log(p.initial_window),
        *(1.0 if p.restart == r else 0.0 for r in _RESTARTS),
        float(p.rack_tlp),
        math.log1p(p.delayed_ack / p.rtt),
        p.timer_tick / p.rto,
        p.beta,
        0.0 if p.marking is None else _log(p.marking / p.frame),
        float(p.loss_blind),
        float(p.hystart),
        float(p.cubic_hold > 0),
        p.growth,
        # How the scenario sits against the port: the senders' first windows, the pipe and
        # the responses against its buffer, the RTO against the round trip.
        _log(p.buffer_packets / (p.senders * p.initial_window)),
        _log(p.pipe_packets / p.buffer_packets),
        _log(p.senders * p.segments / p.held_packets),
        _log(p.rto / p.rtt),
        _log(p.senders * p.sru * 8 / p.link_bps / p.rto),
    ]


def _answer(p: Path, b: BurstPrediction) -> list[float]:
    block = b.block_time_s
    return [
        _log(b.goodput_bps / p.link_bps),
        _log(b.ideal_bps / b.goodput_bps),
        math.log1p(b.timeouts_per_block),
        math.log1p(b.rto_waits_per_block),
        _log(b.rto_s / block),
        *(1.0 if b.regime == r else 0.0 for r in _REGIMES),
        *(t / block for t in b.terms.values()),
        *_block(b.first, block),
        *_block(b.steady, block),
    ]


def features(p: Path, b: BurstPrediction) -> list[float]:
    """The correction's inputs for one point, in the order the stored trees index them: the
    scenario in the model's terms and the mechanisms' answer. Changing them means fitting the
    correction again."""
    return _scenario(p) + _answer(p, b)


@dataclass(frozen=True)
class Correction:
    """Regression trees over :func:`features` whose sum is log(simulator / mechanisms)."""

    #: Each tree as parallel lists: the feature a node splits on (-1 at a leaf), its
    #: threshold (go left when the feature is at most it), its children and its value.
    trees: list[dict[str, list[Any]]]
    base: float  # the trees' starting value (the median log error on the calibration)
    scale: float  # the learning rate each tree's value is taken at
    #: The constants the mechanisms ran with when the trees were fitted (their one line).
    constants: str
    version: str | None = None
    #: Simulator / corrected model, 5th and 95th percentile per predicted regime (and over the
    #: flagged points), from predictions out of each point's own design's fold.
    interval: dict[str, list[float]] = field(default_factory=dict, compare=False, hash=False)
    fit: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def log_factor(self, x: list[float]) -> float:
        total = self.base
        for t in self.trees:
            feature, threshold, left, right, value = (
                t["feature"],
                t["threshold"],
                t["left"],
                t["right"],
                t["value"],
            )
            node = 0
            while feature[node] >= 0:
                node = left[node] if x[feature[node]] <= threshold[node] else right[node]
            total += self.scale * value[node]
        return bounded(total)

    def factor(self, p: Path, b: BurstPrediction) -> float:
        """Simulator / mechanisms the trees expect at this point."""
        return math.exp(self.log_factor(features(p, b)))

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "scale": self.scale,
            "constants": self.constants,
            "version": self.version,
            "interval": self.interval,
            "fit": self.fit,
            "trees": self.trees,
        }


@functools.cache
def _stored() -> Correction | None:
    if not CORRECTION_FILE.exists():
        return None
    return Correction(**json.loads(CORRECTION_FILE.read_text()))


def fitted(constants_line: str) -> Correction | None:
    """The correction saved with the package, if it was fitted with the constants whose line
    (:meth:`~incastlab.model.fitted.Constants.named`) is ``constants_line``."""
    c = _stored()
    return c if c is not None and c.constants == constants_line else None


def save(c: Correction) -> pathlib.Path:
    """Write ``c`` as the package's correction."""
    CORRECTION_FILE.write_text(json.dumps(c.to_json(), separators=(",", ":")) + "\n")
    _stored.cache_clear()
    return CORRECTION_FILE
