"""Calibrate the burst model against the simulator, honestly: fit on one half, score the other.

:func:`calibrate` simulates a grid of scenarios (N, SRU, buffer, RTOmin) under several TCP
settings (:data:`VARIANTS`: initial window 1 and 10, responses restarting from it or keeping
their window, delayed ACKs, DCTCP with a marking threshold K, and each of the engine's TCP
profiles besides the papers' classic one, Linux's with RACK-TLP), splits the points in two
halves by a hash of their coordinates, fits the burst model's constants
(:class:`incastlab.model.burst.Constants`) on the first half and reports the model's error on
the second, the held-out half, next to Chen's Eq. 1-4 with the papers' constants.
Simulated points can be cached on disk (one small JSON file per point, keyed by the normalized
scenario and the incastlab version), so a rerun only simulates what changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import statistics
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from incastlab import _core
from incastlab.backends.model import burst_path, predict_scenario
from incastlab.backends.sim import simulate
from incastlab.model import burst
from incastlab.scenario import apply_overrides, from_dict
from incastlab.units import parse_size

#: The grid: N 1-64, SRU 16 KB-1 MB, buffer 4-256 KB, RTOmin 200/10/1 ms.
FULL_GRID: dict[str, list[Any]] = {
    "senders": [1, 2, 4, 8, 16, 32, 64],
    "sru": ["16KB", "64KB", "256KB", "1MB"],
    "buffer": ["4KB", "32KB", "64KB", "256KB"],
    "rto_min": ["200ms", "10ms", "1ms"],
}
QUICK_GRID: dict[str, list[Any]] = {
    "senders": [1, 2, 4, 8, 16],
    "sru": ["32KB", "256KB"],
    "buffer": ["4KB", "64KB"],
    "rto_min": ["200ms", "1ms"],
}


#: The stack the grid's settings vary: the seed papers' (each variant changes one setting of
#: it); every other profile of the engine is a variant of its own (:func:`profile_variants`).
BASE_PROFILE = "classic"


def profile_variants() -> dict[str, dict[str, Any]]:
    """One variant per TCP profile of the engine besides :data:`BASE_PROFILE`: the
    profile's bundle of settings is the engine's, named here and never restated."""
    from incastlab.scenario.keys import KEYS

    key = KEYS["tcp"]["keys"]["profile"]
    return {n: {"tcp.profile": n} for n in key["schema"]["enum"] if n != BASE_PROFILE}


#: TCP settings the grid is simulated under, each a set of scenario keys, then the engine's
#: profiles (:func:`profile_variants`). DCTCP's marking threshold K is half the point's buffer
#: (it must stay below it).
VARIANTS: dict[str, dict[str, Any]] = {
    "iw10-idle": {},
    "iw1-restart": {"tcp.initial_window": 1, "tcp.cwnd_restart": "block"},
    "iw10-restart": {"tcp.cwnd_restart": "block"},
    "iw10-persistent": {"tcp.cwnd_restart": "never"},
    "iw1-persistent": {"tcp.cwnd_restart": "never", "tcp.initial_window": 1},
    "delayed-ack": {"tcp.delayed_ack": "40ms"},
    "dctcp": {"tcp.congestion_control": "dctcp"},
    **profile_variants(),
}
QUICK_VARIANTS = ("iw10-idle", "iw1-restart")
#: The constants' search grids (each a physical range, see Constants).
SEARCH: dict[str, list[float]] = {
    "tail_timeout": [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0],
    "dispersion": [0.0, 0.1, 0.25, 0.5, 0.75, 1.0],
    "rejoin": [0.0, 0.25, 0.5, 0.75, 1.0],
    "loop_segments": [1.5, 2.0, 3.0, 4.0, 6.0],
    "busy_loss": [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0],
}
#: Seeds each grid point is simulated with. A point's goodput is a random variable of the
#: seed (at N = 2 one 200 ms RTO more or less in 5 blocks moves it 3x); the model predicts
#: its expectation, so the grid compares it with the pooled runs of several seeds.
SEEDS = 4
#: Relative goodput errors beyond this count as this in the fit's tie-break, so that a few
#: points the model cannot describe do not pull the constants away from the many it can.
ERROR_CAP = 1.0


@dataclass
class Point:
    """One grid point: the simulator's answer and both models'."""

    variant: str
    senders: int
    sru: str
    buffer: str
    rto_min: str
    scenario: dict[str, Any]
    sim_bps: float
    sim_timeouts_per_block: float
    #: The goodput of each seed's run (``sim_bps`` pools them).
    sim_bps_by_seed: list[float] = field(default_factory=list)
    ideal_bps: float = 0.0
    model_bps: float = 0.0
    chen_bps: float = 0.0
    regime: str = ""
    timeouts_per_block: float = 0.0
    dominant: str = ""

    @property
    def held_out(self) -> bool:
        """The half of the grid the fit never sees (a hash of the coordinates)."""
        key = f"{self.variant}|{self.senders}|{self.sru}|{self.buffer}|{self.rto_min}"
        return zlib.crc32(key.encode()) % 2 == 1

    @property
    def error(self) -> float:
        """Relative goodput error of the burst model against the simulator."""
        return abs(self.model_bps - self.sim_bps) / self.sim_bps

    @property
    def seed_error(self) -> float | None:
        """How far the simulator's first seed is from its other seeds pooled (its own
        run-to-run spread, the floor under any model's error); ``None`` with one seed."""
        g = self.sim_bps_by_seed
        if len(g) < 2:
            return None
        rest = (len(g) - 1) / sum(1 / x for x in g[1:])
        return abs(g[0] - rest) / rest

    @property
    def chen_error(self) -> float:
        return abs(self.chen_bps - self.sim_bps) / self.sim_bps

    @property
    def sim_collapsed(self) -> bool:
        return self.sim_bps < self.ideal_bps / 2

    @property
    def regime_right(self) -> bool:
        return self.sim_collapsed == (self.model_bps < self.ideal_bps / 2)

    def axis(self, name: str) -> Any:
        return getattr(self, name)


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[int(q * (len(s) - 1))]


def errors_summary(points: list[Point]) -> dict[str, float]:
    """Median and 90th-percentile error of both models and the burst model's regime score."""
    e = [p.error for p in points]
    ce = [p.chen_error for p in points]
    out = {
        "points": len(points),
        "median_error": statistics.median(e),
        "p90_error": _quantile(e, 0.9),
        "regime_right": sum(p.regime_right for p in points) / len(points),
        "chen_median_error": statistics.median(ce),
        "chen_p90_error": _quantile(ce, 0.9),
    }
    se = [x for x in (p.seed_error for p in points) if x is not None]
    if se:
        out["seed_median_error"] = statistics.median(se)
        out["seed_p90_error"] = _quantile(se, 0.9)
    return out


@dataclass
class Calibration:
    """Fitted constants and the model's error over the grid."""

    constants: burst.Constants
    points: list[Point] = field(default_factory=list)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    variants: list[str] = field(default_factory=list)
    #: Points the simulator did not finish within run.max_time (left out of the scores).
    unfinished: list[str] = field(default_factory=list)

    @property
    def held_out(self) -> list[Point]:
        return [p for p in self.points if p.held_out]

    @property
    def fitted_on(self) -> list[Point]:
        return [p for p in self.points if not p.held_out]

    def summary(self) -> dict[str, Any]:
        return {
            "constants": {k: v for k, v in self.constants.to_json().items() if k != "fit"},
            "version": _core.__version__,
            "held_out": errors_summary(self.held_out),
            "fitted_on": errors_summary(self.fitted_on),
            "unfinished": self.unfinished,
        }

    def breakdown(self, key: str) -> dict[Any, dict[str, float]]:
        """Held-out errors grouped by one axis (``variant`` or a grid axis)."""
        pts = self.held_out
        present = {p.axis(key) for p in pts}
        order = self.variants if key == "variant" else self.grid.get(key, [])
        values = [v for v in order if v in present] or sorted(present, key=str)
        return {v: errors_summary([p for p in pts if p.axis(key) == v]) for v in values}

    def worst(self, k: int = 10) -> list[Point]:
        """The ``k`` held-out points where the model is furthest from the simulator."""
        return sorted(self.held_out, key=lambda q: -q.error)[:k]

    def to_json(self) -> dict[str, Any]:
        pts = [
            {
                "variant": q.variant,
                "senders": q.senders,
                "sru": q.sru,
                "buffer": q.buffer,
                "rto_min": q.rto_min,
                "held_out": q.held_out,
                "sim_bps": q.sim_bps,
                "sim_bps_by_seed": q.sim_bps_by_seed,
                "model_bps": q.model_bps,
                "chen_bps": q.chen_bps,
                "error": q.error,
                "regime": q.regime,
                "regime_right": q.regime_right,
                "sim_timeouts_per_block": q.sim_timeouts_per_block,
                "model_timeouts_per_block": q.timeouts_per_block,
                "dominant": q.dominant,
            }
            for q in self.points
        ]
        return {**self.summary(), "points": pts}


def grid_scenarios(
    grid: dict[str, list[Any]],
    variants: Iterable[str],
    blocks: int,
    base: dict[str, Any] | None = None,
) -> Iterable[tuple[tuple[Any, ...], Any]]:
    """Every (variant, N, SRU, buffer, RTOmin) and its scenario."""
    for v in variants:
        for n, sru, buf, rto in itertools.product(
            grid["senders"], grid["sru"], grid["buffer"], grid["rto_min"]
        ):
            keys = {
                "tcp.profile": BASE_PROFILE,
                **VARIANTS[v],
                "topology.senders": n,
                "topology.buffer": buf,
                "workload.sru": sru,
                "workload.blocks": blocks,
                "tcp.rto_min": rto,
            }
            if v == "dctcp":
                keys["topology.ecn_threshold"] = f"{parse_size(buf) // 2}B"
            yield (v, n, sru, buf, rto), from_dict(apply_overrides(base or {}, keys))


def _cache_path(sc: Any, cache: Path | None) -> Path | None:
    """Where ``sc``'s simulated point is kept in ``cache`` (keyed by scenario and version)."""
    if cache is None:
        return None
    text = json.dumps(sc.normalized(), sort_keys=True)
    key = hashlib.sha256(f"{_core.__version__}\n{text}".encode()).hexdigest()[:24]
    return cache / f"{key}.json"


def simulate_point(scenario_json: str) -> dict[str, Any]:
    """The simulator's goodput and timeouts per block for a normalized scenario (JSON, so it
    crosses to a worker process); ``{"unfinished": reason}`` for a run that hit
    ``run.max_time``."""
    from incastlab.scenario import Scenario

    try:
        r = simulate(Scenario(json.loads(scenario_json)))
    except _core.SimulationError as e:
        return {"unfinished": str(e)}
    blocks = max(1, len(r.block_times_s))
    return {"goodput_bps": r.goodput_bps, "timeouts_per_block": r.timeouts / blocks}


def _keep(path: Path | None, out: dict[str, Any]) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(out))
        tmp.replace(path)


def simulated(
    scenarios: list[Any],
    cache: Path | None,
    *,
    workers: int | None = None,
    on_point: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """:func:`simulate_point` of every scenario, in order: from ``cache`` where it is there,
    the others on every core, each kept in ``cache`` as it finishes (so an interrupted
    calibration resumes)."""
    from incastlab.parallel import run_all

    paths = [_cache_path(sc, cache) for sc in scenarios]
    out: dict[int, dict[str, Any]] = {}
    for i, p in enumerate(paths):
        if p is not None and p.exists():
            out[i] = json.loads(p.read_text())
    todo = [i for i in range(len(scenarios)) if i not in out]
    finished = [len(out)]

    def done(k: int, res: dict[str, Any]) -> None:
        i = todo[k]
        out[i] = res
        _keep(paths[i], res)
        finished[0] += 1
        if on_point is not None:
            on_point(finished[0], len(scenarios))

    if on_point is not None:
        on_point(finished[0], len(scenarios))
    run_all(
        simulate_point,
        [(scenarios[i].to_json(),) for i in todo],
        workers=workers,
        on_done=done,
    )
    return [out[i] for i in range(len(scenarios))]


def _score(points: list[Point], paths: list[burst.Path], c: burst.Constants) -> tuple[float, float]:
    """The fit's objective on ``points``: the issue's criterion, the 90th percentile of the
    relative goodput error, then the mean error capped at :data:`ERROR_CAP` to break ties."""
    e = [
        abs(burst.predict(path, c).goodput_bps / p.sim_bps - 1)
        for p, path in zip(points, paths, strict=True)
    ]
    return _quantile(e, 0.9), sum(min(ERROR_CAP, x) for x in e) / max(1, len(e))


def fit(points: list[Point], start: burst.Constants | None = None) -> burst.Constants:
    """The constants that minimize the 90th-percentile relative goodput error on ``points``
    (the capped mean breaking ties): a coordinate search over :data:`SEARCH`, three sweeps
    at most."""
    paths = [burst_path(p.scenario) for p in points]
    return coordinate_search(start or burst.Constants(), lambda c: _score(points, paths, c))


def coordinate_search(
    start: burst.Constants, score: Callable[[burst.Constants], Any]
) -> burst.Constants:
    """The constants minimizing ``score`` (any ordered value): one constant of :data:`SEARCH`
    at a time through its values, three sweeps at most, stopping when a sweep improves
    nothing."""
    c, best = start, score(start)
    for _ in range(3):
        improved = False
        for name, values in SEARCH.items():
            for v in values:
                trial = dataclasses.replace(c, **{name: v})  # type: ignore[arg-type]
                s = score(trial)
                if s < best:
                    best, c, improved = s, trial, True
        if not improved:
            break
    return c


def evaluate(points: list[Point], c: burst.Constants) -> None:
    """Fill in both models' answers for every point."""
    for p in points:
        sc = from_dict(p.scenario, normalized=True)
        b = predict_scenario(sc, constants=c, with_onset=False)
        chen = predict_scenario(sc, uncalibrated=True)
        assert b.burst is not None
        p.model_bps = b.prediction.goodput_bps
        p.ideal_bps = b.burst.ideal_bps
        p.regime = b.prediction.regime
        p.timeouts_per_block = b.prediction.timeouts_per_block
        p.dominant = b.dominant
        p.chen_bps = chen.prediction.goodput_bps


def pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The simulator's answer for a point over several seeds: the goodput of all their
    blocks together (the same bytes each run, so the harmonic mean of the goodputs: what an
    expected block time gives, as the model predicts) and the mean timeouts per block; a
    point unfinished under any seed is unfinished."""
    for r in runs:
        if "unfinished" in r:
            return r
    return {
        "goodput_bps": len(runs) / sum(1 / r["goodput_bps"] for r in runs),
        "timeouts_per_block": statistics.fmean(r["timeouts_per_block"] for r in runs),
        "goodput_by_seed": [r["goodput_bps"] for r in runs],
    }


def calibrate(
    grid: dict[str, list[Any]] | None = None,
    *,
    variants: Iterable[str] | None = None,
    blocks: int = 5,
    seeds: int = SEEDS,
    base: dict[str, Any] | None = None,
    cache: Path | None = None,
    on_point: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> Calibration:
    """Simulate the grid under each variant (on top of the scenario ``base``; on every core,
    or ``workers``) with ``seeds`` seeds a point (pooled, :func:`pooled`), fit the burst
    model's constants on one half of the points and score both halves."""
    grid = grid or QUICK_GRID
    names = list(variants or QUICK_VARIANTS)
    for v in names:
        if v not in VARIANTS:
            raise ValueError(f"variant: {v!r} is not one of {', '.join(VARIANTS)}")
    todo = list(grid_scenarios(grid, names, blocks, base))
    first = todo[0][1].normalized()["seed"] if todo else 1
    runs = [
        from_dict(apply_overrides(sc.normalized(), {"seed": first + i}), normalized=True)
        for _, sc in todo
        for i in range(seeds)
    ]
    each = simulated(runs, cache, workers=workers, on_point=on_point)
    sims = [pooled(each[k : k + seeds]) for k in range(0, len(each), seeds)]
    points, unfinished = [], []
    for ((v, n, sru, buf, rto), sc), sim in zip(todo, sims, strict=True):
        if "unfinished" in sim:
            unfinished.append(f"{v} N={n} SRU {sru} buffer {buf} RTOmin {rto}")
            continue
        points.append(
            Point(
                variant=v,
                senders=n,
                sru=sru,
                buffer=buf,
                rto_min=rto,
                scenario=sc.normalized(),
                sim_bps=sim["goodput_bps"],
                sim_timeouts_per_block=sim["timeouts_per_block"],
                sim_bps_by_seed=sim["goodput_by_seed"],
            )
        )
    c = fit([p for p in points if not p.held_out])
    evaluate(points, c)
    held = errors_summary([p for p in points if p.held_out])
    c = dataclasses.replace(
        c,
        version=_core.__version__,
        fit={
            "grid": grid,
            "variants": names,
            "blocks": blocks,
            "seeds": seeds,
            "held_out_points": held["points"],
            "held_out_median_error": round(held["median_error"], 4),
            "held_out_p90_error": round(held["p90_error"], 4),
            "held_out_regime_right": round(held["regime_right"], 4),
        },
    )
    return Calibration(constants=c, points=points, grid=grid, variants=names, unfinished=unfinished)
