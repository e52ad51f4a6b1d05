"""incastlab: the laboratory for TCP incast.

>>> import incastlab
>>> r = incastlab.simulate({"topology": {"senders": 4}, "workload": {"sru": "64KB", "blocks": 2}})
>>> r.senders, len(r.block_times_s)
(4, 2)
"""

from incastlab._core import ScenarioError, SimulationError
from incastlab._core import __version__ as __version__
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
