"""Shared helpers: build scenarios from dotted overrides."""

from __future__ import annotations

from typing import Any

import incastlab
from incastlab.result import Result
from incastlab.scenario import Scenario, apply_overrides, from_dict

GBPS = 1e9


def scenario(**overrides: Any) -> Scenario:
    """A scenario from keyword overrides, ``topology__senders=4`` meaning topology.senders."""
    data = apply_overrides({}, {k.replace("__", "."): v for k, v in overrides.items()})
    return from_dict(data)


def run(**overrides: Any) -> Result:
    return incastlab.simulate(scenario(**overrides))


def sweep(senders: list[int], **overrides: Any) -> dict[int, Result]:
    return {n: run(topology__senders=n, **overrides) for n in senders}
