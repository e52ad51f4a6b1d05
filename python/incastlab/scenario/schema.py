"""A JSON Schema of scenario files for editors, built from the keys the core declares."""

from __future__ import annotations

from typing import Any

from incastlab.scenario.keys import KEYS

_NUMBER = r"\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\s*"
_UNITS = {
    "size": ("B|KB|MB|GB|TB|KiB|MiB|GiB|TiB", "B", "64KB"),
    "rate": ("bps|Kbps|Mbps|Gbps|Tbps", "bps", "1Gbps"),
    "time": ("ps|ns|us|µs|ms|s", "ps", "200ms"),
}


def _with_unit(kind: str, default: Any) -> dict[str, Any]:
    units, base, example = _UNITS[kind]
    schema: dict[str, Any] = {
        "type": "string",
        "pattern": f"^{_NUMBER}({units})\\s*$",
        "examples": [example],
    }
    if isinstance(default, int):
        schema["default"] = f"{default}{base}"
    return schema


def _key(key: dict[str, Any]) -> dict[str, Any]:
    unit, default = key["unit"], key["default"]
    if unit == "section":
        return _table(key["keys"], key["doc"])
    if unit == "plain":
        out = dict(key["schema"])
        out["default"] = default
    elif unit in _UNITS:
        out = _with_unit(unit, default)
        if default is None:
            out = {"anyOf": [out, {"type": "null"}]}
    elif unit == "time_or_off":
        out = {"anyOf": [_with_unit("time", default), {"const": "off"}]}
        if default == 0:
            out["default"] = "off"
    elif unit == "limit":
        out = {"type": "string", "examples": ["64KB", "42pkt", "unlimited", "off"]}
    else:  # cdf: a file of "size probability" lines, or the points themselves
        point = {"type": "array", "minItems": 2, "maxItems": 2}
        out = {"anyOf": [{"type": "string"}, {"type": "array", "items": point}]}
    out["description"] = key["doc"]
    return out


def _table(keys: dict[str, dict[str, Any]], doc: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": doc,
        "properties": {name: _key(k) for name, k in keys.items()},
        "additionalProperties": False,
    }


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario as users write it (unit strings)."""
    out = _table(KEYS, "One incast experiment (incastlab scenario).")
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    out["title"] = "incastlab scenario"
    return out
