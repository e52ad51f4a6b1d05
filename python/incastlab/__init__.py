"""incastlab: the laboratory for TCP incast.

>>> import incastlab
>>> r = incastlab.simulate({"topology": {"senders": 4}, "workload": {"sru": "64KB", "blocks": 2}})
>>> r.senders, len(r.block_times_s)
(4, 2)

``incastlab.load(path)`` reads stored results (a file, a sweep directory or several) as a
pandas DataFrame; ``incastlab.load_scenario(path)`` reads a scenario file.
"""

from incastlab._core import ScenarioError, SimulationError
from incastlab._core import __version__ as __version__
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
