"""Backends: what answers a scenario with a :class:`~incastlab.result.Result`.

Every backend (the packet simulator, the analytical model, real Linux TCP in network
namespaces, and whatever comes next) follows one :class:`Backend` protocol, and sweeps,
``compare``, ``mitigate`` and the CLI find them through one registry::

    from incastlab import backends
    r = backends.get("sim").run(scenario)
    backends.names()            # ("sim", "model", "chen", "emulate")

This module stays light (no numpy, no pyarrow): the CLI builds its ``--backend`` choices from
it before any scenario is read. Each adapter module is imported only when asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from incastlab.result import Result
    from incastlab.scenario import Scenario

#: ``progress(events, simulated_seconds)``, called now and then during a long run.
ProgressFn = Callable[[int, float], None]


class UnknownBackend(ValueError):
    """A backend name that is not registered; the message names the allowed ones."""


class BackendUnavailable(RuntimeError):
    """The backend cannot run on this machine (not root, a tool missing...); says what."""


class BackendFailed(RuntimeError):
    """A run failed for a reason outside the scenario (a testbed that did not come up)."""

    #: What failed, for the one-line message: "emulation failed: ...".
    what = "run"


@runtime_checkable
class Backend(Protocol):
    """One way to answer a scenario."""

    #: The registry name, also stored as ``Result.backend``.
    name: str
    #: What it is, for legends: "simulator", "real Linux TCP (namespaces)".
    title: str
    #: Whether it needs root (network namespaces, qdiscs).
    needs_root: bool
    #: A closed-form prediction rather than a run: drawn as a curve over measured points.
    predicts: bool
    #: Whether its points may run in parallel on one machine (real TCP shares the CPUs).
    parallel: bool

    def check(self) -> None:
        """Raise :class:`BackendUnavailable` naming what this machine lacks."""

    def unsupported(self, scenario: Scenario) -> list[str]:
        """Scenario fields set away from their defaults that this backend cannot honour."""

    def run(self, scenario: Scenario, *, progress: ProgressFn | None = None) -> Result:
        """Answer one scenario (one sender count)."""


#: name -> "module:factory". Factories take the backend's options as keywords.
_REGISTRY: dict[str, str] = {
    "sim": "incastlab.backends.sim:SimBackend",
    "model": "incastlab.backends.model:ModelBackend",
    "chen": "incastlab.backends.model:chen_backend",
    "emulate": "incastlab.real.emulate:EmulateBackend",
}


def names() -> tuple[str, ...]:
    """The registered backends, in the order they are documented."""
    return tuple(_REGISTRY)


def get(name: str, **options: Any) -> Backend:
    """The backend called ``name``, configured by those of ``options`` it takes (``warmup``
    means something to emulation only; the simulator ignores it)."""
    where = _REGISTRY.get(name)
    if where is None:
        raise UnknownBackend(f"unknown backend {name!r}; one of {', '.join(_REGISTRY)}")
    module, factory_name = where.split(":")
    factory = getattr(importlib.import_module(module), factory_name)
    import inspect

    takes = inspect.signature(factory).parameters
    backend: Backend = factory(**{k: v for k, v in options.items() if k in takes})
    return backend


def register(name: str, where: str) -> None:
    """Add a backend: ``where`` is ``"package.module:Factory"``, imported on first use."""
    _REGISTRY[name] = where


def off_defaults(scenario: Scenario, honoured: set[str]) -> list[str]:
    """Dotted keys of ``scenario`` set away from its TCP profile's defaults and not in
    ``honoured``.

    A profile is one choice (``tcp.profile``) that sets a bundle of keys; the keys it sets are
    the scenario's defaults, so a backend that honours the profile is not told about each of
    them, only about keys the user set away from the profile's values."""
    from incastlab.scenario import KEYS, from_dict

    mine = scenario.normalized()
    profile = mine.get("tcp", {}).get("profile")
    default = from_dict({"tcp": {"profile": profile}} if profile else {}).normalized()
    off = []
    for name, key in KEYS.items():
        if key["unit"] != "section":
            if name not in honoured and mine.get(name) != default.get(name):
                off.append(name)
            continue
        for sub in key["keys"]:
            path = f"{name}.{sub}"
            if path not in honoured and mine[name].get(sub) != default[name].get(sub):
                off.append(path)
    return sorted(off)
