"""Series of scenarios: one scenario (a file and/or overrides) over a range of sender counts,
optionally once per value of a varied key. What ``incast sim``, ``model``, ``emulate``,
``mitigate`` and ``compare`` run, and what a Python user gets with::

    from incastlab.series import build_series
    series = build_series("examples/incast-collapse.toml", senders="1..20",
                          vary="tcp.rto_min=200ms,1ms")
    for label, scenarios in series: ...
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from incastlab import files
from incastlab import scenario as sc_mod
from incastlab.scenario import Scenario, ScenarioError
from incastlab.units import UnitError, parse_int_ranges, shown

if TYPE_CHECKING:
    from incastlab.backends import Backend, ProgressFn
    from incastlab.result import Result

#: Most sender counts one series may hold.
MAX_POINTS = 10_000
#: Sender counts when neither the scenario nor the caller names any.
DEFAULT_SENDERS = [1, 2, 4, 8, 16, 32]

#: One labelled list of scenarios per varied value ("" when nothing varies).
Series = list[tuple[str, list[Scenario]]]


def parse_senders(spec: str, what: str = "--senders") -> list[int]:
    """``"1,2,4"``, ``"1..48"``, ``"4..64:4"`` or a mix: ``"1..8,16,32"``."""
    try:
        return parse_int_ranges(spec, what, MAX_POINTS)
    except UnitError as e:
        raise ScenarioError(str(e)) from None


def parse_assignment(item: str, what: str = "--set") -> tuple[str, Any]:
    """``key=value`` with the value read as TOML (``false``, ``2``, ``"block"``), else as a
    string (``200ms``)."""
    if "=" not in item:
        raise ScenarioError(f"{what}: expected key=value such as tcp.sack=false, got {shown(item)}")
    key, raw = item.split("=", 1)
    try:
        value: Any = files.loads_toml(f"v = {raw}", what)["v"]
    except files.InputFileError:
        value = raw
    return key.strip(), value


def parse_vary(spec: str | None, what: str = "--vary") -> tuple[str, list[Any]] | None:
    """``tcp.rto_min=200ms,1ms`` -> ("tcp.rto_min", ["200ms", "1ms"])."""
    if spec is None:
        return None
    if "=" not in spec:
        raise ScenarioError(
            f"{what}: expected key=v1,v2 such as tcp.rto_min=200ms,1ms, got {shown(spec)}"
        )
    key, raw = spec.split("=", 1)
    values = [parse_assignment(f"{key}={v}")[1] for v in raw.split(",") if v.strip()]
    if len(values) < 2:
        raise ScenarioError(f"{what}: give at least two values, separated by commas")
    return key.strip(), values


def _sender_counts(data: Mapping[str, Any], senders: str | None) -> Sequence[int | None]:
    """The sender counts of a series; ``[None]`` leaves the count to a topology file (as
    many senders as it names, every host for kv_gets)."""
    topo = data.get("topology", {})
    in_file = topo.get("senders") if isinstance(topo, dict) else None
    if senders is not None:
        return parse_senders(senders)
    if isinstance(in_file, list):
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in in_file):
            raise ScenarioError("topology.senders: a list must hold whole numbers")
        if len(in_file) > MAX_POINTS:
            raise ScenarioError(f"topology.senders: more than {MAX_POINTS} values")
        return sorted(set(in_file))
    if isinstance(in_file, str):
        return parse_senders(in_file, "topology.senders")
    if in_file is None and isinstance(topo, dict) and topo.get("kind") == "file":
        return [None]
    if in_file is None:
        return list(DEFAULT_SENDERS)
    return [in_file]


def build_series(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    senders: str | None = None,
    vary: str | None = None,
) -> Series:
    """One labelled series of validated scenarios per ``vary`` value (a single unlabelled one
    without). ``scenario`` is a TOML path or a dict with unit strings; ``overrides`` are
    dotted keys; ``senders`` overrides the scenario's sender count(s)."""
    if scenario is None:
        raw: dict[str, Any] = {}
    elif isinstance(scenario, str | Path):
        raw = sc_mod.read_toml(scenario)
    else:
        raw = dict(scenario)
    data = sc_mod.apply_overrides(raw, dict(overrides or {}))
    counts = _sender_counts(data, senders)
    variants: list[tuple[str, dict[str, Any]]] = [("", data)]
    varied = parse_vary(vary)
    if varied is not None:
        key, values = varied
        if len(values) * len(counts) > MAX_POINTS:
            raise ScenarioError(
                f"--vary: {len(values)} values × {len(counts)} sender counts is more than "
                f"{MAX_POINTS} points"
            )
        name = key.rsplit(".", 1)[-1]
        variants = [(f"{name} {v}", sc_mod.apply_overrides(data, {key: v})) for v in values]
    return [
        (
            label,
            [
                sc_mod.from_dict(
                    d if n is None else sc_mod.apply_overrides(d, {"topology.senders": n})
                )
                for n in counts
            ],
        )
        for label, d in variants
    ]


def varied_name(vary: str | None) -> str:
    """The last part of the varied key (``rto_min``), or ``""``."""
    varied = parse_vary(vary)
    return varied[0].rsplit(".", 1)[-1] if varied else ""


def with_sampling(sc: Scenario) -> Scenario:
    """``sc`` sampling its time series every quarter RTT (at least 10 µs), if it does not yet."""
    if sc.run.sample_interval:
        return sc
    every = max(sc.topology.rtt // 4, 10_000_000)
    return sc_mod.from_dict(
        sc_mod.apply_overrides(sc.normalized(), {"run.sample_interval": every}), normalized=True
    )


def sample_last(series: Series) -> Series:
    """``series`` with its first series' largest sender count sampling its time series."""
    (label, pts), *rest = series
    return [(label, [*pts[:-1], with_sampling(pts[-1])]), *rest]


def labelled(
    series: Sequence[tuple[str, Sequence[Any]]], row: Callable[[Any], dict[str, Any]]
) -> list[dict[str, Any]]:
    """``row(point)`` for every point, tagged with its series label when there are several."""
    rows = []
    for label, points in series:
        for p in points:
            r = row(p)
            if label:
                r["series"] = label
            rows.append(r)
    return rows


class Tracker(Protocol):
    """Follows a long study (a progress bar, a log): told before each run that runs here,
    and after each run wherever it ran."""

    def start(self, what: str) -> ProgressFn | None:
        """A run of ``what`` (``"N=16"``) begins here; may return its progress callback."""

    def done(self, runs: int = 1, what: str = "") -> None:
        """``runs`` runs finished (or were skipped), the last of them ``what``."""


@dataclass
class SeriesRun:
    """Each series' results and the wall time of each run, in seconds."""

    series: list[tuple[str, list[Result]]]
    walls: list[list[float]]

    @property
    def results(self) -> list[Result]:
        return [r for _, rs in self.series for r in rs]


def timed_run(
    backend: Backend, scenario_json: str, progress: ProgressFn | None = None
) -> tuple[Result, float]:
    """One run of a normalized scenario (JSON, so that it crosses to a worker process) and
    its wall time in seconds."""
    import json

    t0 = time.perf_counter()
    r = backend.run(Scenario(json.loads(scenario_json)), progress=progress)
    return r, time.perf_counter() - t0


def run_many(
    backend: Backend,
    scenarios: Sequence[Scenario],
    labels: Sequence[str],
    tracker: Tracker | None = None,
    *,
    workers: int | None = None,
) -> list[tuple[Result, float]]:
    """Every scenario on ``backend`` with its wall time, in order: in parallel on every core
    (the most senders first) if the backend allows, else one after the other here. Ctrl-C
    raises :class:`~incastlab.parallel.Interrupted` with the finished runs by index."""
    from incastlab.parallel import crosses, run_all

    return run_all(
        timed_run,
        [(backend, sc.to_json()) for sc in scenarios],
        # A backend that cannot be sent to a worker (one defined in a test, holding a
        # lambda) runs here, as one that must not share the CPUs does.
        workers=workers if backend.parallel and crosses(backend) else 1,
        on_start=(lambda i: tracker.start(labels[i])) if tracker else None,
        on_done=(lambda i, _: tracker.done(what=labels[i])) if tracker else None,
    )


def run_series(
    series: Series,
    backend: Backend,
    tracker: Tracker | None = None,
    *,
    workers: int | None = None,
) -> SeriesRun:
    """Run every scenario of ``series`` on ``backend`` (in parallel where it may), the results
    in the series' order. Ctrl-C raises :class:`SeriesInterrupted` holding the runs that
    finished."""
    from incastlab.parallel import Interrupted

    flat = [(label, sc) for label, pts in series for sc in pts]
    labels = [f"{label} N={sc.senders}".strip() for label, sc in flat]
    try:
        runs = run_many(backend, [sc for _, sc in flat], labels, tracker, workers=workers)
    except Interrupted as e:
        raise SeriesInterrupted(_regroup(series, e.done), series) from None
    return _regroup(series, dict(enumerate(runs)))


def _regroup(series: Series, runs: Mapping[int, tuple[Result, float]]) -> SeriesRun:
    """The runs (by index into the flattened series) back in their series, in order; the
    missing left out."""
    out = SeriesRun([], [])
    i = 0
    for label, pts in series:
        mine = [runs[k] for k in range(i, i + len(pts)) if k in runs]
        i += len(pts)
        out.series.append((label, [r for r, _ in mine]))
        out.walls.append([w for _, w in mine])
    return out


class SeriesInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_series`: ``run`` holds what finished, ``series`` what was
    asked."""

    def __init__(self, run: SeriesRun, series: Series) -> None:
        super().__init__()
        self.run = run
        self.series = series

    @property
    def finished(self) -> int:
        return len(self.run.results)

    @property
    def total(self) -> int:
        return sum(len(pts) for _, pts in self.series)

    def unfinished_senders(self) -> list[int]:
        """Sender counts some series did not finish."""
        left: set[int] = set()
        for (_, pts), (_, rs) in zip(self.series, self.run.series, strict=True):
            got = {r.senders for r in rs}
            left |= {sc.senders for sc in pts if sc.senders not in got}
        return sorted(left)
