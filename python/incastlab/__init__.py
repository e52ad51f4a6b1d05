"""incastlab: the laboratory for TCP incast.

>>> import incastlab
>>> r = incastlab.simulate({"topology": {"senders": 4}, "workload": {"sru": "64KB", "blocks": 2}})
>>> r.senders, len(r.block_times_s)
(4, 2)
"""

from typing import TYPE_CHECKING, Any

from incastlab._core import ScenarioError, SimulationError
from incastlab._core import __version__ as __version__

if TYPE_CHECKING:
    from incastlab.backends.sim import simulate, simulate_many
    from incastlab.result import Result
    from incastlab.scenario import Scenario, from_dict, load

__all__ = [
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "from_dict",
    "load",
    "simulate",
    "simulate_many",
]

#: Public names imported on first use, so that `import incastlab.cli` (and `incast --help`)
#: does not pay for pydantic.
_LAZY = {
    "simulate": "incastlab.backends.sim",
    "simulate_many": "incastlab.backends.sim",
    "Result": "incastlab.result",
    "Scenario": "incastlab.scenario",
    "from_dict": "incastlab.scenario",
    "load": "incastlab.scenario",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'incastlab' has no attribute {name!r}")
