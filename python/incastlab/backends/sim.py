"""The simulator backend: run scenarios through the Rust engine."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from incastlab import _core
from incastlab import scenario as sc_mod
from incastlab.backends import ProgressFn
from incastlab.result import Result
from incastlab.scenario import Scenario


def _as_scenario(scenario: Scenario | Mapping[str, Any] | str | Path) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, str | Path):
        return sc_mod.load(scenario)
    return sc_mod.from_dict(scenario)


def simulate(
    scenario: Scenario | Mapping[str, Any] | str | Path,
    *,
    progress: ProgressFn | None = None,
    pcap: str | Path | None = None,
    pcap_at: str | None = None,
) -> Result:
    """Run one scenario (a :class:`Scenario`, a dict with unit strings, or a TOML path).

    ``progress(events, simulated_seconds)`` is called now and then during long runs. Ctrl-C
    interrupts the run promptly with :class:`KeyboardInterrupt`. With ``pcap``, the frames
    seen at ``pcap_at`` (comma-separated points; default ``"receiver"``: what tcpdump on the
    receiver would see) are written to that file as a pcap.
    """
    sc = _as_scenario(scenario)
    text = _core.simulate(
        sc.to_json(), progress, pcap=None if pcap is None else str(pcap), pcap_at=pcap_at
    )
    return Result(scenario=sc.normalized(), report=json.loads(text), version=_core.__version__)


def simulate_many(
    scenarios: Iterable[Scenario],
    *,
    on_result: Callable[[Result], None] | None = None,
    progress: ProgressFn | None = None,
) -> list[Result]:
    """Run several scenarios one after the other."""
    out = []
    for s in scenarios:
        r = simulate(s, progress=progress)
        out.append(r)
        if on_result is not None:
            on_result(r)
    return out


@dataclass(frozen=True)
class SimBackend:
    """The packet-level simulator as a :class:`~incastlab.backends.Backend`: honours every
    scenario field, runs anywhere, in parallel."""

    name: str = "sim"
    title: str = "simulator"
    needs_root: bool = False
    predicts: bool = False
    parallel: bool = True
    #: Write a pcap of each run here (one run only: see ``incast sim --pcap``).
    pcap: str | None = None
    #: Where to capture (comma-separated points; None: the receiver).
    pcap_at: str | None = None

    def check(self) -> None:
        """The simulator needs nothing beyond the extension module."""

    def unsupported(self, scenario: Scenario) -> list[str]:
        return []

    def run(self, scenario: Scenario, *, progress: ProgressFn | None = None) -> Result:
        return simulate(scenario, progress=progress, pcap=self.pcap, pcap_at=self.pcap_at)
