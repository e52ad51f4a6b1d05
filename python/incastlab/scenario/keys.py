"""The scenario's keys as the simulator core declares them, and the error that names one."""

from __future__ import annotations

import json
from typing import Any

from incastlab import _core

ScenarioError = _core.ScenarioError

# {key: {"unit", "doc", "default", "schema"[, "keys"]}}, sections nesting their own keys.
KEYS: dict[str, dict[str, Any]] = json.loads(_core.describe())

# Each section's keys.
SECTIONS: dict[str, dict[str, dict[str, Any]]] = {
    name: key["keys"] for name, key in KEYS.items() if key["unit"] == "section"
}


def scenario_error(field: str, message: str, *, prefix: bool = True) -> ScenarioError:
    """A :class:`ScenarioError` about ``field`` (a dotted path): ``"field: message"`` like the
    core's own, or ``message`` alone when it names the field itself."""
    e = ScenarioError(f"{field}: {message}" if prefix else message)
    e.field = field
    return e
