"""Sweep specifications: a scenario in which any value may be a list or a range.

A sweep spec is a scenario TOML file plus an optional ``[sweep]`` table::

    [sweep]
    name = "rto-vs-senders"
    seeds = 3                                   # seeds seed, seed+1, seed+2 per point
    zip = [["topology.buffer", "tcp.rto_min"]]  # these vary together, not as a product
    backend = "sim"                             # or "model", "emulate"

    [topology]
    senders = "1..48"                           # a range: 1, 2, ..., 48 ("4..64:4" steps)
    buffer = ["32KB", "64KB"]                   # a list
    [tcp]
    rto_min = ["200ms", "1ms"]

Every list- or range-valued key is an axis; the points are the cartesian product of the axes
(zipped groups count as one axis) times the seeds. Each point is validated before anything
runs, so a spec with one impossible combination fails at once, naming the point.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from incastlab import _core, backends
from incastlab import scenario as sc_mod
from incastlab.scenario import Scenario, ScenarioError
from incastlab.series import parse_senders
from incastlab.units import UnitError, is_int_ranges, parse_int_ranges

#: Most points one sweep may hold.
MAX_POINTS = 100_000
#: Keys whose value may be a table ({bytes = ..., packets = ...}, a topology file's tables
#: inline) rather than a section.
_LIMITS = {"buffer", "nic_buffer", "ecn_threshold", "file"}
#: The key whose text value is a sender list, as ``--senders`` reads it.
SENDERS = "topology.senders"


@dataclass(frozen=True)
class Point:
    """One scenario of a sweep: its coordinates on the axes and the validated scenario."""

    params: dict[str, Any]
    scenario: Scenario
    backend: str

    @functools.cached_property
    def key(self) -> str:
        """Identity of the point's result: the normalized scenario, backend and version."""
        blob = json.dumps(
            {
                "backend": self.backend,
                "scenario": self.scenario.normalized(),
                "version": _core.__version__,
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


@dataclass
class Spec:
    """A parsed sweep spec."""

    name: str
    backend: str
    base: dict[str, Any]
    axes: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]]
    seeds: list[int]
    raw: dict[str, Any] = field(default_factory=dict)

    def store_meta(self, points: int, name: str | None = None) -> dict[str, Any]:
        """What a sweep directory records about the sweep it holds."""
        return {
            "name": name or self.name,
            "backend": self.backend,
            "spec": self.raw,
            "axes": self.axis_keys,
            "points": points,
            "version": _core.__version__,
        }

    @property
    def axis_keys(self) -> list[str]:
        keys = [k for names, _ in self.axes for k in names]
        return [*keys, "seed"] if len(self.seeds) > 1 else keys

    def points(self) -> list[Point]:
        """Every point, validated; raises :class:`ScenarioError` naming a bad one."""
        out: list[Point] = []
        values = [vals for _, vals in self.axes]
        for combo in itertools.product(*values):
            params: dict[str, Any] = {}
            for (names, _), tup in zip(self.axes, combo, strict=True):
                params.update(zip(names, tup, strict=True))
            for seed in self.seeds:
                p = dict(params)
                if len(self.seeds) > 1:
                    p["seed"] = seed
                data = sc_mod.apply_overrides(self.base, {**params, "seed": seed})
                try:
                    sc = sc_mod.from_dict(data)
                except ScenarioError as e:
                    where = ", ".join(f"{k}={v}" for k, v in p.items()) or "the base scenario"
                    raise sc_mod.scenario_error(
                        e.field, f"sweep point {where}: {e}", prefix=False
                    ) from None
                out.append(Point(p, sc, self.backend))
        return out


def _range_values(text: str, key: str) -> list[int] | None:
    """``"1..48"``, ``"4..64:4"``, ``"1..8,16,32"`` as integers; ``None`` if not a range."""
    if not is_int_ranges(text):
        return None
    try:
        return parse_int_ranges(text, key, MAX_POINTS)
    except UnitError as e:
        raise ScenarioError(str(e)) from None


def _single_list(key: str, value: list[Any]) -> bool:
    """Whether ``value`` is one value of a key whose values are lists (by its unit: a CDF's
    [bytes, probability] points, a list of times), not an axis of several."""
    section, _, name = key.partition(".")
    unit = sc_mod.keys.SECTIONS.get(section, {}).get(name, {}).get("unit")
    if not value:
        return unit in ("cdf", "times", "hosts", "sizes")
    if unit == "cdf":  # its points are lists: an axis is a list of lists of points
        return isinstance(value[0], list | tuple) and not isinstance(value[0][0], list | tuple)
    if unit in (
        "times",
        "hosts",
        "sizes",
    ):  # its items are single values: an axis is a list of lists
        return not isinstance(value[0], list | tuple)
    return False


def _axis_values(key: str, value: Any) -> list[Any] | None:
    """The values of an axis, or ``None`` if ``value`` is a single value."""
    if key == SENDERS and isinstance(value, str):
        # Every form `incast sim --senders` takes ("16", "1,2", "1..4,8", "4..64:4"), read by
        # the one parser both use.
        counts = parse_senders(value, key)
        return counts if len(counts) > 1 else None
    if isinstance(value, str):
        return _range_values(value, key)
    if isinstance(value, list):
        if _single_list(key, value):
            return None
        if not value:
            raise ScenarioError(f"{key}: an empty list gives no points")
        return list(value)
    return None


def _axis_one_sender(text: str) -> int:
    """A sender list of one count (``"16"``, ``"8..8"``) as that count."""
    (count,) = parse_senders(text, SENDERS)
    return count


def _leaves(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in data.items():
        path = f"{prefix}{k}"
        if isinstance(v, Mapping) and k not in _LIMITS:
            out.extend(_leaves(v, path + "."))
        else:
            out.append((path, v))
    return out


def parse_spec(data: Mapping[str, Any], *, name: str = "sweep") -> Spec:
    """A sweep spec from the contents of its TOML file."""
    raw = dict(data)
    sweep = raw.pop("sweep", {})
    if not isinstance(sweep, Mapping):
        raise ScenarioError(f"sweep: expected a table of settings, got {sweep!r}")
    known = {"name", "seeds", "zip", "backend"}
    for k in sweep:
        if k not in known:
            raise ScenarioError(f"unknown key 'sweep.{k}'; allowed: {', '.join(sorted(known))}")
    seeds = sweep.get("seeds", 1)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= 1000:
        raise ScenarioError(f"sweep.seeds: a number of seeds 1..1000, got {seeds!r}")
    backend = sweep.get("backend", "sim")
    if backend not in backends.names():
        raise ScenarioError(f"sweep.backend: one of {', '.join(backends.names())}, got {backend!r}")
    single: dict[str, Any] = {}
    axes: dict[str, list[Any]] = {}
    for key, value in _leaves(raw):
        vals = _axis_values(key, value)
        if vals is None and key == SENDERS and isinstance(value, str):
            single[key] = _axis_one_sender(value)
        elif vals is None:
            single[key] = value
        else:
            axes[key] = vals
    if "seed" in axes:
        raise ScenarioError("seed: give sweep.seeds = N for several seeds, not a list")
    groups: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]] = []
    zipped: set[str] = set()
    zips = sweep.get("zip", [])
    if not isinstance(zips, list) or not all(isinstance(g, list) for g in zips):
        raise ScenarioError(
            'sweep.zip: a list of key lists, e.g. [["topology.buffer", "tcp.rto_min"]]'
        )
    for group in zips:
        for k in group:
            if k not in axes:
                raise ScenarioError(f"sweep.zip: {k!r} is not a list or range in the spec")
            if k in zipped:
                raise ScenarioError(f"sweep.zip: {k!r} is in two groups")
            zipped.add(k)
        lengths = {len(axes[k]) for k in group}
        if len(lengths) > 1:
            sizes = ", ".join(f"{k} has {len(axes[k])}" for k in group)
            raise ScenarioError(f"sweep.zip: zipped keys need as many values each ({sizes})")
        groups.append((tuple(group), list(zip(*(axes[k] for k in group), strict=True))))
    for k, vals in axes.items():
        if k not in zipped:
            groups.append(((k,), [(v,) for v in vals]))
    base = sc_mod.apply_overrides({}, single)
    first_seed = base.get("seed", 1)
    if isinstance(first_seed, bool) or not isinstance(first_seed, int) or first_seed < 0:
        raise ScenarioError(f"seed: a whole number, got {first_seed!r}")
    total = seeds
    for _, vals in groups:
        total *= len(vals)
    if total > MAX_POINTS:
        raise ScenarioError(f"the sweep has {total} points; at most {MAX_POINTS}")
    return Spec(
        name=str(sweep.get("name", name)),
        backend=str(backend),
        base=base,
        axes=groups,
        seeds=[first_seed + k for k in range(seeds)],
        raw=dict(data),
    )


def load_spec(path: str | Path) -> Spec:
    """Read a sweep spec file."""
    p = Path(path)
    return parse_spec(sc_mod.read_toml(p), name=p.stem)
