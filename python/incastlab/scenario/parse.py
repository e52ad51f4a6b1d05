"""Reading scenarios: unit strings into base units, unknown keys caught with a "did you mean",
CDF and topology files read, then one call of the core, which fills the defaults and
validates."""

from __future__ import annotations

import copy
import difflib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from incastlab import _core, files
from incastlab.scenario.keys import KEYS, ScenarioError, scenario_error
from incastlab.scenario.size_cdf import flow_sizes, parse_cdf_points, read_size_cdf
from incastlab.scenario.topology_file import topology_value
from incastlab.scenario.view import Scenario
from incastlab.units import (
    MAX_VALUE,
    UnitError,
    parse_queue_limit,
    parse_rate,
    parse_rate_cap,
    parse_size,
    parse_time,
    shown,
)

_PARSE = {"size": parse_size, "rate": parse_rate, "time": parse_time}

#: The built-in flow-size distributions (``flows.size_cdf``), as the core names them.
_FLOW_SIZE_NAMES: list[str] = KEYS["flows"]["keys"]["size_cdf"]["schema"]["anyOf"][0]["enum"]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _suggest(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6) if len(name) < 100 else []
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f"; allowed: {', '.join(choices)}"


#: Longest text a plain value may be (names of a congestion control, a profile, a workload).
_MAX_PLAIN_TEXT = 200


def _plain(value: Any) -> Any:
    """A plain value as the core will read it: what JSON cannot carry is refused here, by
    name, instead of as a JSON error about the whole scenario."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value!r}")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_VALUE:
        raise ValueError(f"{shown(value)} is out of range (at most {MAX_VALUE})")
    if isinstance(value, str) and len(value) > _MAX_PLAIN_TEXT:
        raise ValueError(f"expected a short name, got {shown(value)}")
    if isinstance(value, list | dict):
        raise ValueError(f"expected a single value, got {shown(value)}")
    return value


def _times(value: Any, normalized: bool) -> list[int]:
    """A list of times ("120us", …) in picoseconds; a normalized list holds them already."""
    if not isinstance(value, list | tuple):
        raise ValueError(f'expected a list of times such as ["120us", "3ms"], got {shown(value)}')
    out = []
    for i, v in enumerate(value):
        try:
            out.append(v if normalized and _is_int(v) else parse_time(v))
        except (UnitError, ValueError) as e:
            raise ValueError(f"item {i}: {e}") from None
    return out


def _sizes(value: Any, normalized: bool) -> list[int]:
    """A list of sizes ("10KB", …) in bytes; a normalized list holds them already."""
    if not isinstance(value, list | tuple):
        raise ValueError(f'expected a list of sizes such as ["10KB", "100KB"], got {shown(value)}')
    out = []
    for i, v in enumerate(value):
        try:
            out.append(v if _is_int(v) else parse_size(v))
        except (UnitError, ValueError) as e:
            raise ValueError(f"item {i}: {e}") from None
    return out


def _hosts(value: Any) -> list[int]:
    """A list of host numbers (the core checks that each is on the topology)."""
    if not isinstance(value, list | tuple) or not all(
        _is_int(v) and 0 <= v <= MAX_VALUE for v in value
    ):
        raise ValueError(f"expected host numbers such as [0, 122, 35], got {shown(value)}")
    return list(value)


def _value(unit: str, value: Any, normalized: bool) -> Any:
    """One value in base units; ``None`` passes to the core as given."""
    if value is None:
        return value
    if unit == "plain":
        return _plain(value)
    if unit == "cdf":
        if isinstance(value, str | Path):
            return read_size_cdf(value)
        return parse_cdf_points(value) if isinstance(value, list) else value
    if unit == "size_cdf":
        return flow_sizes(value, _FLOW_SIZE_NAMES)
    if unit == "topology_file":
        return topology_value(value, normalized)
    if unit == "times":
        return _times(value, normalized)
    if unit == "hosts":
        return _hosts(value)
    if unit == "sizes":
        return _sizes(value, normalized)
    if unit == "limit":
        return value if normalized and isinstance(value, dict) else parse_queue_limit(value)
    if unit == "rate_cap":
        return value if normalized and isinstance(value, dict) else parse_rate_cap(value)
    if normalized and _is_int(value):
        return value
    if unit == "time_or_off":
        return 0 if value == "off" else parse_time(value)
    return _PARSE[unit](value)


def _base_units(
    data: Mapping[str, Any], keys: dict[str, dict[str, Any]], path: str, normalized: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        field = f"{path}.{name}" if path else str(name)
        key = keys.get(name)
        if key is None:
            hint = _suggest(str(name), list(keys))
            if path and "did you mean" in hint:
                hint = hint.replace("'", f"'{path}.", 1)
            raise scenario_error(field, f"unknown key {shown(field)}{hint}", prefix=False)
        if key["unit"] == "section":
            if not isinstance(value, Mapping):
                raise scenario_error(field, f"expected a table of settings, got {shown(value)}")
            out[name] = _base_units(value, key["keys"], field, normalized)
            continue
        try:
            out[name] = _value(key["unit"], value, normalized)
        except (UnitError, ValueError) as e:
            raise scenario_error(field, str(e)) from None
    return out


def from_dict(data: Mapping[str, Any], *, normalized: bool = False) -> Scenario:
    """Validate a scenario given as a (nested) dict with unit strings; absent keys take the
    core's defaults.

    With ``normalized=True``, plain integers in base units are accepted too (the form stored
    with every result).
    """
    if not isinstance(data, Mapping):
        raise scenario_error("scenario", f"expected a table of settings, got {type(data).__name__}")
    base = _base_units(data, KEYS, "", normalized)
    try:
        text = json.dumps(base, allow_nan=False)
    except (TypeError, ValueError) as e:
        plain = "finite numbers, text, booleans and tables only"
        raise scenario_error("scenario", f"{plain}: {e}") from None
    return Scenario(json.loads(_core.normalize(text)), given=base)


def read_toml(path: str | Path) -> dict[str, Any]:
    """The raw contents of a scenario file (read by the rules of :mod:`incastlab.files`)."""
    p = Path(path)
    try:
        data = files.read_toml(p, "scenario file")
    except files.InputFileError as e:
        raise ScenarioError(str(e)) from None

    # A CDF or topology file named in a scenario file is found beside it (a sweep spec may
    # list several topology files).
    def beside(name: str) -> str:
        return name if Path(name).is_absolute() else str(p.parent / name)

    for section, key in (
        ("workload", "query_size_cdf"),
        ("flows", "size_cdf"),
        ("topology", "file"),
    ):
        table = data.get(section)
        if not isinstance(table, dict):
            continue
        value = table.get(key)
        if isinstance(value, str) and value not in _FLOW_SIZE_NAMES:
            table[key] = beside(value)
        elif key == "file" and isinstance(value, list):
            table[key] = [beside(v) if isinstance(v, str) else v for v in value]
    return data


def load(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    return from_dict(read_toml(path))


def value_of(key: str, value: Any) -> Any:
    """``value`` of the dotted scenario ``key`` in base units, as the core stores it, so that
    values compare by meaning: ``"1000us"`` and ``"1ms"`` of ``tcp.rto_min`` are both
    1,000,000,000 ps. :class:`ScenarioError` naming the key for an unknown key or a bad
    value."""
    *sections, name = key.split(".")
    keys = KEYS
    for part in sections:
        sub = keys.get(part)
        if sub is None or sub["unit"] != "section":
            raise scenario_error(key, f"unknown key {shown(key)}", prefix=False)
        keys = sub["keys"]
    found = keys.get(name)
    if found is None or found["unit"] == "section":
        raise scenario_error(key, f"unknown key {shown(key)}", prefix=False)
    try:
        return _value(found["unit"], value, normalized=True)
    except (UnitError, ValueError) as e:
        raise scenario_error(key, str(e)) from None


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` with dotted keys (``"topology.buffer"``) replaced."""
    out: dict[str, Any] = copy.deepcopy(dict(data))
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        node = out
        for i, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                field = ".".join(parts[: i + 1])
                raise scenario_error(field, f"expected a table of settings, got {shown(child)}")
            node = child
        node[parts[-1]] = value
    return out
