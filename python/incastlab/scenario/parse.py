"""Reading scenarios: unit strings into base units, unknown keys caught with a "did you mean",
CDF files read, then one call of the core, which fills the defaults and validates."""

from __future__ import annotations

import copy
import difflib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from incastlab import _core
from incastlab.scenario.keys import KEYS, ScenarioError, scenario_error
from incastlab.scenario.size_cdf import parse_cdf_points, read_size_cdf
from incastlab.scenario.view import Scenario
from incastlab.units import UnitError, parse_queue_limit, parse_rate, parse_size, parse_time

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_PARSE = {"size": parse_size, "rate": parse_rate, "time": parse_time}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _suggest(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f"; allowed: {', '.join(choices)}"


def _value(unit: str, value: Any, normalized: bool) -> Any:
    """One value in base units; ``None`` and plain values pass to the core as given."""
    if unit == "plain" or value is None:
        return value
    if unit == "cdf":
        if isinstance(value, str | Path):
            return read_size_cdf(value)
        return parse_cdf_points(value) if isinstance(value, list) else value
    if unit == "limit":
        return value if normalized and isinstance(value, dict) else parse_queue_limit(value)
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
            raise scenario_error(field, f"unknown key '{field}'{hint}", prefix=False)
        if key["unit"] == "section":
            if not isinstance(value, Mapping):
                raise scenario_error(field, f"expected a table of settings, got {value!r}")
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
    """The raw contents of a scenario file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioError(f"cannot read scenario file {str(p)!r}: {e.strerror}") from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p.name}: not valid TOML: {e}") from None
    workload = data.get("workload")
    if isinstance(workload, dict) and isinstance(workload.get("query_size_cdf"), str):
        # A CDF file named in a scenario file is found beside it.
        cdf = Path(workload["query_size_cdf"])
        if not cdf.is_absolute():
            workload["query_size_cdf"] = str(p.parent / cdf)
    return data


def load(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    return from_dict(read_toml(path))


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
                raise scenario_error(field, f"expected a table of settings, got {child!r}")
            node = child
        node[parts[-1]] = value
    return out
