"""Calibrate the analytical model against the simulator and report where it breaks down.

The model has two empirical constants: the buffering beyond the switch port in Eq. 3
(``extra_buffer``) and the partial-RTO factor ``a`` of Eq. 4. :func:`calibrate` simulates a
grid of scenarios, fits both, and measures the model's relative goodput error point by point.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from incastlab import model
from incastlab.backends.model import port_buffer_bytes, predict_scenario, rtt_and_rto
from incastlab.backends.sim import simulate
from incastlab.result import Result
from incastlab.scenario import apply_overrides, from_dict

#: The grid of the issue: N 1-64, SRU 16 KB-1 MB, buffer 4-256 KB, RTOmin 200/10/1 ms.
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


@dataclass
class Point:
    """One grid point: the simulator's answer and the model's."""

    senders: int
    sru: str
    buffer: str
    rto_min: str
    sim: Result
    model_bps: float = 0.0
    regime: str = ""

    @property
    def error(self) -> float:
        """Relative goodput error of the model against the simulator."""
        return abs(self.model_bps - self.sim.goodput_bps) / self.sim.goodput_bps


@dataclass
class Calibration:
    """Fitted constants and the model's error over the grid."""

    extra_buffer: int
    a: float
    points: list[Point] = field(default_factory=list)
    grid: dict[str, list[Any]] = field(default_factory=dict)

    def errors(self, where: Callable[[Point], bool] = lambda p: True) -> list[float]:
        return sorted(p.error for p in self.points if where(p))

    def summary(self) -> dict[str, Any]:
        e = self.errors()
        return {
            "extra_buffer": self.extra_buffer,
            "a": self.a,
            "points": len(e),
            "median_error": statistics.median(e),
            "p90_error": e[int(0.9 * (len(e) - 1))],
        }

    def worst(self, k: int = 12) -> list[Point]:
        """The ``k`` points where the model is furthest from the simulator."""
        return sorted(self.points, key=lambda q: -q.error)[:k]

    def to_json(self) -> dict[str, Any]:
        """The fit, its summary and every point."""
        pts = [
            {
                "senders": q.senders,
                "sru": q.sru,
                "buffer": q.buffer,
                "rto_min": q.rto_min,
                "sim_bps": q.sim.goodput_bps,
                "model_bps": q.model_bps,
                "regime": q.regime,
                "error": q.error,
                "sim_timeouts": q.sim.timeouts,
            }
            for q in self.points
        ]
        return {**self.summary(), "points": pts}

    def breakdown(self, key: str) -> dict[Any, dict[str, float]]:
        """Median and 90th-percentile error grouped by one grid axis."""
        out: dict[Any, dict[str, float]] = {}
        present = {getattr(p, key) for p in self.points}
        values = [v for v in self.grid.get(key, sorted(present, key=str)) if v in present]
        for v in values:
            e = sorted(p.error for p in self.points if getattr(p, key) == v)
            out[v] = {"median": statistics.median(e), "p90": e[int(0.9 * (len(e) - 1))]}
        return out


def grid_scenarios(
    grid: dict[str, list[Any]], blocks: int, base: dict[str, Any] | None = None
) -> Iterable[tuple[tuple[Any, ...], Any]]:
    for n, sru, buf, rto in itertools.product(
        grid["senders"], grid["sru"], grid["buffer"], grid["rto_min"]
    ):
        data = apply_overrides(
            base or {},
            {
                "topology.senders": n,
                "topology.buffer": buf,
                "workload.sru": sru,
                "workload.blocks": blocks,
                "tcp.rto_min": rto,
            },
        )
        yield (n, sru, buf, rto), from_dict(data)


def _onsets(points: Sequence[Point]) -> dict[tuple[str, str, str], int | None]:
    """The simulator's onset per (SRU, buffer, RTOmin): the first N at which at least half
    the blocks suffer a timeout, the regime Eq. 2 describes (``None`` if none on the grid)."""
    out: dict[tuple[str, str, str], int | None] = {}
    groups: dict[tuple[str, str, str], list[Point]] = {}
    for p in points:
        groups.setdefault((p.sru, p.buffer, p.rto_min), []).append(p)
    for k, ps in groups.items():
        out[k] = None
        for p in sorted(ps, key=lambda q: q.senders):
            row = p.sim.row()
            if p.senders > 1 and 2 * row["blocks_with_timeouts"] >= row["blocks"]:
                out[k] = p.senders
                break
    return out


def fit_extra_buffer(points: Sequence[Point]) -> int:
    """The extra buffer (0-256 KB, 500-byte steps) whose Eq. 3 onsets best match the
    simulator's (least total distance in senders, over the groups that reach an onset)."""
    onsets = {k: v for k, v in _onsets(points).items() if v is not None}
    top = max(p.senders for p in points)
    tcp = points[0].sim.scenario["tcp"]
    # Each group's SRU and port buffer, in bytes, read once from one of its scenarios.
    sizes = {}
    for p in points:
        key = (p.sru, p.buffer, p.rto_min)
        if key in onsets and key not in sizes:
            s = p.sim.scenario
            sizes[key] = (s["workload"]["sru"], port_buffer_bytes(s))
    best: tuple[float, int] = (float("inf"), 0)
    for extra in range(0, 256_001, 500):
        cost = 0.0
        for key, sim_onset in onsets.items():
            sru, buffer = sizes[key]
            m = model.collapse_onset(
                sru,
                buffer,
                mss=tcp["mss"],
                initial_window=tcp["initial_window"],
                extra_buffer=extra,
            )
            cost += abs(min(m, 2 * top) - sim_onset)
        if cost < best[0]:
            best = (cost, extra)
    return best[1]


def fit_partial_rto(points: Sequence[Point], extra_buffer: int) -> float:
    """Eq. 4's ``a``: the median, over points past the model's onset, of the idle time per
    block in units of the RTO: (block time − RTT − N·SRU·8/C) / RTO."""
    ratios = []
    for p in points:
        pred = predict_scenario(
            from_dict(p.sim.scenario, normalized=True), extra_buffer=extra_buffer
        )
        if pred.prediction.regime != "rto":
            continue
        rtt, rto = rtt_and_rto(p.sim.scenario)
        send = p.senders * pred.sru * 8 / p.sim.link_bps
        mean_block = p.sim.duration_s / max(1, len(p.sim.block_times_s))
        ratios.append(max(0.0, (mean_block - rtt - send) / rto))
    return statistics.median(ratios) if ratios else 1.0


def calibrate(
    grid: dict[str, list[Any]] | None = None,
    *,
    blocks: int = 5,
    base: dict[str, Any] | None = None,
    on_point: Callable[[int, int], None] | None = None,
) -> Calibration:
    """Simulate the grid (on top of the scenario ``base``), fit ``extra_buffer`` and ``a``,
    and score the model."""
    grid = grid or QUICK_GRID
    todo = list(grid_scenarios(grid, blocks, base))
    points = []
    for i, ((n, sru, buf, rto), sc) in enumerate(todo):
        points.append(Point(n, sru, buf, rto, simulate(sc)))
        if on_point is not None:
            on_point(i + 1, len(todo))
    extra = fit_extra_buffer(points)
    a = fit_partial_rto(points, extra)
    for p in points:
        pred = predict_scenario(from_dict(p.sim.scenario, normalized=True), extra_buffer=extra, a=a)
        p.model_bps = pred.prediction.goodput_bps
        p.regime = pred.prediction.regime
    return Calibration(extra_buffer=extra, a=a, points=points, grid=grid)
