"""The scenario: one description of an incast experiment that every backend reads.

A scenario is a TOML file or a dict with explicit units::

    seed = 1
    [topology]
    senders = 16
    link = "1Gbps"
    rtt = "100us"
    buffer = "64KB"
    [tcp]
    rto_min = "200ms"
    [workload]
    kind = "sync_read"
    sru = "256KB"
    blocks = 20

The simulator core (``incastlab._core``, the ``config`` module of the Rust crate) owns every
key, default, derived default and rule; this package keeps only what Python must do: unit
strings in (using the unit each key declares in the core), "did you mean" for unknown keys,
reading CDF files, friendly errors (:class:`ScenarioError` with ``.field``), and the JSON
Schema for editors (:func:`json_schema`). Parsing ends in one call of ``_core.normalize``,
which fills the defaults and validates once; its result, the *normalized* scenario (every value
in bytes, bits per second or integer picoseconds), is what the simulator receives and what
every stored result carries.
"""

from __future__ import annotations

from incastlab.scenario.keys import KEYS, SECTIONS, ScenarioError, scenario_error
from incastlab.scenario.parse import apply_overrides, from_dict, load, read_toml, value_of
from incastlab.scenario.schema import json_schema, reference_markdown
from incastlab.scenario.view import Scenario, Section

__all__ = [
    "KEYS",
    "SECTIONS",
    "Scenario",
    "ScenarioError",
    "Section",
    "apply_overrides",
    "from_dict",
    "json_schema",
    "load",
    "read_toml",
    "reference_markdown",
    "scenario_error",
    "value_of",
]
