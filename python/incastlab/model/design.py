"""A random design over the space users live in, and the model's error on it against the
simulator.

A calibration grid is kind to a model: its points sit where the model was tuned. The question a
user asks is different: a scenario nobody gridded. :func:`design` draws ``n`` scenarios by Latin
hypercube sampling (McKay, Beckman and Conover, "A comparison of three methods for selecting
values of input variables in the analysis of output from a computer code", Technometrics 1979):
every axis of :data:`AXES` is cut into ``n`` equally likely strata and each stratum is used
exactly once, so even 300 points cover each axis evenly. Continuous axes are drawn on a log
scale (a user's 100 Mbps and 100 Gbps are equally plausible), choices uniformly. The draw is a
function of the seed alone (numpy's PCG64), so a design is regenerated, not stored: the held-out
design and the calibration designs are the same code with different seeds
(:data:`HELD_OUT_SEED`, :func:`calibration_seeds`).

:func:`measure` simulates each point under several seeds (pooled as in
:func:`incastlab.model.calibrate.pooled`: the goodput of the mean block time) and
:func:`score` puts the model beside it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from incastlab.model.space import AXES

#: The seed of the held-out design (the error the model reports) and of the first one its
#: constants are fitted on: different draws of the same space.
HELD_OUT_SEED = 32_001
CALIBRATION_SEED = 32_002


def calibration_seeds(k: int) -> list[int]:
    """The seeds of ``k`` calibration designs: :data:`CALIBRATION_SEED` and the next ones up
    (never the held-out design's)."""
    return [CALIBRATION_SEED + i for i in range(k)]


#: Blocks a point runs, fewer where N x SRU is large (the simulator's cost grows with the
#: bytes moved): at most :data:`MAX_BYTES` over the run, never fewer than two blocks (the first
#: starts from the initial window, the next from the window carried over).
BLOCKS = 4
MAX_BYTES = 1_000_000_000
#: Simulated time a point may take: far beyond the hours a deep collapse's backoffs (to the
#: 120 s RTO cap) take, so every point finishes (such a run costs about a second).
MAX_TIME = "100000s"


def _lhs(n: int, dims: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` points in the unit cube, one in each of ``n`` strata per axis."""
    u = rng.random((n, dims))
    out = np.empty((n, dims))
    for d in range(dims):
        out[:, d] = (rng.permutation(n) + u[:, d]) / n
    return out


def _log_value(lo: float, hi: float, u: float) -> float:
    return float(math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo))))


def _unit(v: float, unit: str) -> str:
    """A drawn value as the scenario's unit string (whole bytes, bits per second, ns)."""
    if unit == "B":
        return f"{round(v)}B"
    if unit == "bps":
        return f"{round(v / 1e6)}Mbps"
    return f"{round(v * 1e9)}ns"


def design(n: int, seed: int = HELD_OUT_SEED) -> list[dict[str, Any]]:
    """``n`` points (flat ``{key: value}``) of the Latin hypercube over :data:`AXES`."""
    rng = np.random.default_rng(seed)
    cube = _lhs(n, len(AXES), rng)
    points = []
    for row in cube:
        p: dict[str, Any] = {}
        for (key, kind, rng_), u in zip(AXES, row, strict=True):
            if kind == "int":
                p[key] = max(rng_[0], min(rng_[1], int(_log_value(rng_[0], rng_[1] + 1, u))))
            elif kind == "log":
                p[key] = _unit(_log_value(rng_[0], rng_[1], u), rng_[2])
            else:
                p[key] = rng_[min(len(rng_) - 1, int(u * len(rng_)))]
        points.append(p)
    return points


def point_keys(p: dict[str, Any]) -> dict[str, Any]:
    """The scenario keys a design point sets: the point, the link to the receiver as fast as
    the senders', DCTCP's marking threshold at half the buffer, and the run's bounds."""
    from incastlab.units import parse_size

    keys = dict(p)
    keys["topology.receiver_link"] = p["topology.link"]
    sru = parse_size(p["workload.sru"])
    per_block = p["topology.senders"] * sru
    keys["workload.blocks"] = max(2, min(BLOCKS, MAX_BYTES // max(1, per_block)))
    keys["run.max_time"] = MAX_TIME
    if p["tcp.congestion_control"] == "dctcp":
        keys["topology.ecn_threshold"] = f"{parse_size(p['topology.buffer']) // 2}B"
    return keys


def scenarios(points: list[dict[str, Any]]) -> list[Any]:
    from incastlab.scenario import apply_overrides, from_dict

    return [from_dict(apply_overrides({}, point_keys(p))) for p in points]


def label(p: dict[str, Any]) -> str:
    """A point in one line: the keys a user would type."""
    short = {
        "topology.senders": "N",
        "workload.sru": "SRU",
        "topology.buffer": "buf",
        "topology.link": "link",
        "topology.rtt": "RTT",
        "tcp.rto_min": "RTOmin",
        "tcp.initial_window": "IW",
        "tcp.profile": "",
        "tcp.congestion_control": "",
        "tcp.cwnd_restart": "restart",
    }
    return " ".join(f"{short[k]}={v}" if short[k] else str(v) for k, v in p.items())


#: The factor of the simulator the model is held to ("within 1.5x"): the design's figures,
#: the constants' fit and the correction's out-of-fold score all count against it.
TOLERANCE = 1.5


@dataclass
class Measured:
    """One design point: the simulator's pooled answer and the model's."""

    point: dict[str, Any]
    scenario: dict[str, Any]
    sim_bps: float
    by_seed: list[float]
    model_bps: float = 0.0
    low_bps: float = 0.0
    high_bps: float = 0.0
    regime: str = ""
    flagged: list[str] = field(default_factory=list)
    #: RTOs per block, the simulator's (mean over seeds) and the model's: the first "why".
    sim_timeouts: float = 0.0
    model_timeouts: float = 0.0
    #: The term that dominates the model's block time ("RTO waits", "transfer", ...).
    dominant: str = ""
    #: The seed of the design the point was drawn in (``None``: not from a design).
    design: int | None = None

    @property
    def ratio(self) -> float:
        return self.model_bps / self.sim_bps

    @property
    def error(self) -> float:
        return abs(self.ratio - 1)

    @property
    def within(self) -> bool:
        return 1 / TOLERANCE <= self.ratio <= TOLERANCE

    @property
    def inside(self) -> bool:
        return self.low_bps <= self.sim_bps <= self.high_bps


#: Seeds each point of a design runs under (their runs pooled).
SEEDS = 3


def measure(
    points: list[dict[str, Any]],
    *,
    seeds: int = SEEDS,
    cache: Path | None = None,
    workers: int | None = None,
    on_point: Callable[[int, int], None] | None = None,
) -> tuple[list[Measured], list[str]]:
    """Simulate every point under ``seeds`` seeds (cached like the calibration's points):
    the measured points and the labels of those unfinished within :data:`MAX_TIME`."""
    from incastlab.model.calibrate import pooled, simulated
    from incastlab.scenario import apply_overrides, from_dict

    scs = scenarios(points)
    runs = [
        from_dict(apply_overrides(sc.normalized(), {"seed": 1 + i}), normalized=True)
        for sc in scs
        for i in range(seeds)
    ]
    each = simulated(runs, cache, workers=workers, on_point=on_point)
    out, unfinished = [], []
    for k, (p, sc) in enumerate(zip(points, scs, strict=True)):
        sim = pooled(each[k * seeds : (k + 1) * seeds])
        if "unfinished" in sim:
            unfinished.append(label(p))
            continue
        m = Measured(p, sc.normalized(), sim["goodput_bps"], sim["goodput_by_seed"])
        m.sim_timeouts = sim["timeouts_per_block"]
        out.append(m)
    return out, unfinished


def score(rows: list[Measured], constants: Any = None, correction: Any = None) -> None:
    """Fill in the model's answer, interval and flags for every measured point (with the
    package's constants and correction, or ``constants`` and ``correction``)."""
    from incastlab.backends.model import predict_scenario
    from incastlab.scenario import from_dict

    for r in rows:
        mp = predict_scenario(
            from_dict(r.scenario, normalized=True),
            constants=constants,
            correction=correction,
            with_onset=False,
        )
        r.model_bps = mp.prediction.goodput_bps
        r.regime = mp.prediction.regime
        assert mp.interval is not None  # the burst model states one
        r.low_bps, r.high_bps = mp.interval
        r.flagged = list(mp.outside)
        r.model_timeouts = mp.prediction.timeouts_per_block
        r.dominant = mp.dominant


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[int(q * (len(s) - 1))] if s else math.nan


def summary(rows: list[Measured]) -> dict[str, Any]:
    """The four figures the model is held to: median |model/sim - 1|, the share within 1.5x
    among the points the model does not flag (and among all), the share flagged, the share of points
    whose simulator goodput lies inside the model's interval."""
    if not rows:
        return {"points": 0}
    kept = [r for r in rows if not r.flagged]
    return {
        "points": len(rows),
        "median_error": statistics.median(r.error for r in rows),
        "median_error_unflagged": statistics.median(r.error for r in kept) if kept else None,
        "p90_error": _quantile([r.error for r in rows], 0.9),
        "within_1_5x": sum(r.within for r in rows) / len(rows),
        "within_1_5x_unflagged": sum(r.within for r in kept) / len(kept) if kept else None,
        "flagged": 1 - len(kept) / len(rows),
        "inside_interval": sum(r.inside for r in rows) / len(rows),
    }


#: Bins the report groups the error by, per axis (numeric axes: these edges).
BINS: dict[str, list[float]] = {
    "topology.senders": [1, 4, 16, 64, 256, 1025],
    "workload.sru": [8e3, 32e3, 128e3, 1.01e6],
    "topology.buffer": [4e3, 64e3, 1e6, 16.1e6],
    "topology.link": [100e6, 1e9, 10e9, 100.1e9],
    "topology.rtt": [5e-6, 50e-6, 500e-6, 2.1e-3],
    "tcp.rto_min": [200e-6, 2e-3, 20e-3, 201e-3],
}


def _axis_value(key: str, v: Any) -> float:
    from incastlab.units import parse_rate, parse_size, parse_time

    if key in ("workload.sru", "topology.buffer"):
        return float(parse_size(v))
    if key == "topology.link":
        return float(parse_rate(v))
    if key in ("topology.rtt", "tcp.rto_min"):
        return float(parse_time(v)) * 1e-12
    return float(v)


def by_axis(rows: list[Measured]) -> dict[str, dict[str, dict[str, Any]]]:
    """:func:`summary` per bin of every axis (per value for choices)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for key, kind, rng_ in AXES:
        groups: dict[str, list[Measured]] = {}
        for r in rows:
            v = r.point[key]
            if key in BINS:
                edges, x = BINS[key], _axis_value(key, v)
                i = max(0, min(len(edges) - 2, int(np.searchsorted(edges, x, side="right")) - 1))
                name = f"{edges[i]:g}..{edges[i + 1]:g}"
            else:
                name = str(v)
            groups.setdefault(name, []).append(r)
        if kind == "choice":
            order = [str(x) for x in rng_]
        else:
            order = sorted(groups, key=lambda s: float(s.split("..")[0]))
        out[key] = {g: summary(groups[g]) for g in order if g in groups}
    return out


#: A few points of the calibration design, stored with the constants (``incast model
#: calibrate --random N --save``): the simulator's answer and the model's at fit time, so the
#: test suite holds both to them without simulating the design (tests/test_model_design.py).
SUBSET_FILE = Path(__file__).with_name("subset.json")
SUBSET_POINTS = 12


def subset(rows: list[Measured], k: int = SUBSET_POINTS) -> list[dict[str, Any]]:
    """``k`` of the cheapest points to simulate (fewest bytes), taken in turn from each
    regime the model predicts, and the cheapest flagged one among them, with what the
    simulator and the model answered."""
    from incastlab.units import parse_size

    def cost(r: Measured) -> float:
        return float(r.point["topology.senders"] * parse_size(r.point["workload.sru"]))

    by_regime: dict[str, list[Measured]] = {}
    for r in sorted(rows, key=cost):
        by_regime.setdefault(r.regime, []).append(r)
    picked: list[Measured] = []
    while len(picked) < min(k, len(rows)):
        for group in by_regime.values():
            if group and len(picked) < k:
                picked.append(group.pop(0))
    flagged = [r for r in sorted(rows, key=cost) if r.flagged]
    if flagged and not any(r.flagged for r in picked):
        picked[-1] = flagged[0]  # the flags are held too
    return [
        {
            "point": r.point,
            "sim_bps_by_seed": r.by_seed,
            "sim_bps": r.sim_bps,
            "model_bps": r.model_bps,
            "interval_bps": [r.low_bps, r.high_bps],
            "outside_domain": r.flagged,
        }
        for r in picked
    ]


def save_subset(rows: list[Measured]) -> Path:
    """Write :func:`subset` of scored calibration points next to the constants."""
    import json

    SUBSET_FILE.write_text(json.dumps(subset(rows), indent=1) + "\n")
    return SUBSET_FILE
