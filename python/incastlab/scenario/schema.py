"""What users read about scenario keys, built from what the core declares: the JSON Schema for
editors and the key reference (``docs/scenario.md``, written by
``incast scenario > docs/scenario.md``)."""

from __future__ import annotations

import json
from typing import Any

from incastlab.scenario.keys import KEYS
from incastlab.units import RATE_UNITS, SIZE_UNITS, TIME_UNITS

# Largest unit first; a default is shown in the largest unit that writes it exactly.
_SHOW = {
    "size": sorted(SIZE_UNITS.items(), key=lambda u: -u[1]),
    "rate": sorted(RATE_UNITS.items(), key=lambda u: -u[1]),
    "time": sorted(((u, v) for u, v in TIME_UNITS.items() if u != "µs"), key=lambda u: -u[1]),
}


def with_unit(kind: str, value: int) -> str:
    """``65536, "size"`` → ``"64KiB"``: a base-unit value as users write it."""
    if value == 0:
        return {"size": "0B", "rate": "0bps", "time": "0us"}[kind]
    for unit, scale in _SHOW[kind]:
        if value % scale == 0:
            return f"{value // scale}{unit}"
    return f"{value}{_SHOW[kind][-1][0]}"  # pragma: no cover - the smallest unit is 1


def shown_default(key: dict[str, Any]) -> str:
    """A key's default as users would write it."""
    unit, d = key["unit"], key["default"]
    if d is None:
        return "none"
    if unit in _SHOW:
        return with_unit(unit, d)
    if unit == "time_or_off":
        return "off" if d == 0 else with_unit("time", d)
    if unit == "limit":
        if d["bytes"] is None and d["packets"] is None:
            return "unlimited"
        parts = [with_unit("size", d["bytes"])] if d["bytes"] is not None else []
        return " or ".join([*parts, *([f"{d['packets']}pkt"] if d["packets"] is not None else [])])
    if unit == "cdf":
        return "none" if not d else json.dumps(d)
    if unit == "size_cdf":
        return d if isinstance(d, str) else "(points)"
    if unit == "times":
        return "none" if not d else json.dumps([with_unit("time", t) for t in d])
    if unit == "hosts":
        return "none" if not d else json.dumps(d)
    if unit == "sizes":
        return "none" if not d else json.dumps([with_unit("size", b) for b in d])
    if unit == "topology_file":
        return "none" if d is None else "(tables)"
    if unit == "rate_cap":
        return f"{100 * d['share']:g}%" if d["share"] is not None else with_unit("rate", d["bps"])
    return json.dumps(d)


_NUMBER = r"\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\s*"
_UNITS = {
    "size": ("|".join(SIZE_UNITS), "64KB"),
    "rate": ("|".join(RATE_UNITS), "1Gbps"),
    "time": ("|".join(TIME_UNITS), "200ms"),
}


def _with_unit(kind: str, default: Any) -> dict[str, Any]:
    units, example = _UNITS[kind]
    schema: dict[str, Any] = {
        "type": "string",
        "pattern": f"^{_NUMBER}({units})\\s*$",
        "examples": [example],
    }
    if isinstance(default, int):
        schema["default"] = with_unit(kind, default)
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
    elif unit == "rate_cap":
        cap = {"type": "string", "examples": ["80%", "800Mbps", "off"]}
        out = {"anyOf": [cap, {"type": "null"}]}
    elif unit == "topology_file":
        # A file name, or the tables inline (unit strings; the core checks their shape).
        out = {"anyOf": [{"type": "string", "examples": ["cluster.toml"]}, {"type": "object"}]}
    elif unit == "hosts":
        out = dict(key["schema"])
        out["default"] = default
    elif unit == "times":
        out = {"type": "array", "items": _with_unit("time", None)}
        out["default"] = [with_unit("time", t) for t in default]
    elif unit == "sizes":
        out = {"type": "array", "items": _with_unit("size", None)}
        out["default"] = [with_unit("size", b) for b in default]
    elif unit == "limit":
        out = {"type": "string", "examples": ["64KB", "42pkt", "unlimited", "off"]}
        if default is not None:
            out["default"] = shown_default(key)
    elif unit == "size_cdf":  # a built-in name, a file of "size probability" lines, points
        names = key["schema"]["anyOf"][0]
        point = {"type": "array", "minItems": 2, "maxItems": 2}
        out = {"anyOf": [names, {"type": "string"}, {"type": "array", "items": point}]}
        out["default"] = default
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


def _profile_defaults() -> dict[str, Any]:
    """The [tcp] keys whose value a scenario that names no profile gets from the default
    profile's bundle rather than from the key's own default, with that value."""
    from incastlab import _core

    bare = json.loads(_core.defaults())["tcp"]
    applied = json.loads(_core.normalize("{}"))["tcp"]
    return {k: v for k, v in applied.items() if k != "profile" and v != bare.get(k)}


def reference_markdown() -> str:
    """Every key of every section with its default and doc, as Markdown."""
    lines = [
        "# Scenario keys",
        "",
        "Generated from the simulator's config (`crates/incast-sim/src/config/`), which owns",
        "every key, default and rule: `incast scenario > docs/scenario.md`.",
        'Sizes, rates and times are written with units (`"64KB"`, `"1Gbps"`, `"200ms"`).',
        "",
    ]
    # One table per section, its nested sections (roce.dcqcn) after it as tables of their own.
    tables: list[tuple[str, dict[str, Any]]] = []

    def add(title: str, path: str, keys: dict[str, dict[str, Any]]) -> None:
        tables.append((title, {k: v for k, v in keys.items() if v["unit"] != "section"}))
        for k, v in keys.items():
            if v["unit"] == "section":
                name = f"{path}.{k}" if path else k
                add(f"[{name}]", name, v["keys"])

    add("(top level)", "", KEYS)
    profiled = _profile_defaults()
    for title, keys in tables:
        lines += [f"## {title}", "", "| key | default | meaning |", "|---|---|---|"]
        for name, key in keys.items():
            doc = key["doc"].replace("|", "\\|")
            if "enum" in key["schema"]:
                doc += " One of " + ", ".join(f"`{v}`" for v in key["schema"]["enum"]) + "."
            default = f"`{shown_default(key)}`"
            if title == "[tcp]" and name in profiled:
                shown = shown_default({**key, "default": profiled[name]})
                default += f" (`{shown}` under the default profile)"
            lines.append(f"| `{name}` | {default} | {doc} |")
        lines.append("")
    return "\n".join(lines)
