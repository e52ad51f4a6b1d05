"""incastlab: the laboratory for TCP incast.

>>> import incastlab
>>> r = incastlab.simulate({"topology": {"senders": 4}, "workload": {"sru": "64KB", "blocks": 2}})
>>> r.senders, len(r.block_times_s)
(4, 2)

``incastlab.load(path)`` reads stored results (a file, a sweep directory or several) as a
pandas DataFrame; ``incastlab.load_scenario(path)`` reads a scenario file.
"""

from typing import TYPE_CHECKING, Any

from incastlab._core import ScenarioError, SimulationError
from incastlab._core import __version__ as __version__

if TYPE_CHECKING:
    from incastlab.backends.sim import simulate, simulate_many
    from incastlab.result import Result, aggregate, load
    from incastlab.scenario import Scenario, from_dict
    from incastlab.scenario import load as load_scenario

__all__ = [
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "aggregate",
    "from_dict",
    "load",
    "load_scenario",
    "simulate",
    "simulate_many",
]

#: Public names imported on first use, so that `import incastlab.cli` (and `incast --help`)
#: does not pay for pyarrow, pandas and the extension's scenario tables.
_LAZY = {
    "simulate": ("incastlab.backends.sim", "simulate"),
    "simulate_many": ("incastlab.backends.sim", "simulate_many"),
    "Result": ("incastlab.result", "Result"),
    "aggregate": ("incastlab.result", "aggregate"),
    "load": ("incastlab.result", "load"),
    "Scenario": ("incastlab.scenario", "Scenario"),
    "from_dict": ("incastlab.scenario", "from_dict"),
    "load_scenario": ("incastlab.scenario", "load"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'incastlab' has no attribute {name!r}")
