"""Shared helpers: build scenarios from dotted overrides."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import settings

import incastlab
from incastlab.real import capacity
from incastlab.result import Result
from incastlab.scenario import Scenario, apply_overrides, from_dict

GBPS = 1e9

# Property tests draw the same examples on every run, so the suite's verdict does not depend on
# luck. A search with fresh examples: HYPOTHESIS_PROFILE=campaign pytest tests/test_hardening.py
settings.register_profile("suite", derandomize=True)
settings.register_profile("campaign", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

#: A machine that holds anything: each test lowers one of its limits.
ROOMY = capacity.Machine(
    mem_available=64 * 10**9,
    nofile_soft=1024,
    nofile_hard=1 << 20,
    netns_max=100_000,
    netns_in_use=1,
    neigh_gc_thresh3=1 << 20,
    neigh_entries=2,
)


def _emulation_unavailable() -> str:
    """Why this machine cannot emulate ("" if it can)."""
    from incastlab.real.testbed import build

    try:
        build.check_can_emulate()
    except build.EmulationError as e:
        return str(e)
    return ""


#: Tests that build network namespaces: skipped, with the reason, where that is impossible.
needs_root = pytest.mark.skipif(
    bool(_emulation_unavailable()), reason=f"cannot emulate here: {_emulation_unavailable()}"
)

#: Hafeez et al.'s setup (ns-2): 1 Gbps, 100 us RTT (the default), 1 KB packets, 32 KB per
#: port, RTOmin 10 ms, responses jittered U[0, 20] us. The paper does not give the block size;
#: incastlab's tests use 1 MB striped over the senders.
HAFEEZ = dict(
    workload__block="1MB",
    topology__buffer="32KB",
    tcp__rto_min="10ms",
    tcp__mss="1000B",
    workload__jitter="20us",
)


def scenario(**overrides: Any) -> Scenario:
    """A scenario from keyword overrides, ``topology__senders=4`` meaning topology.senders."""
    data = apply_overrides({}, {k.replace("__", "."): v for k, v in overrides.items()})
    return from_dict(data)


def run(**overrides: Any) -> Result:
    return incastlab.simulate(scenario(**overrides))


def sweep(senders: list[int], **overrides: Any) -> dict[int, Result]:
    return {n: run(topology__senders=n, **overrides) for n in senders}
