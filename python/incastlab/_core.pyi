from collections.abc import Callable

__version__: str

class ScenarioError(ValueError): ...
class SimulationError(RuntimeError): ...

def simulate(
    scenario_json: str,
    progress: Callable[[int, float], None] | None = None,
    slice_events: int = 2_000_000,
) -> str: ...
def validate(scenario_json: str) -> None: ...
def serve(
    addr: str,
    max_request: int,
    max_conns: int,
    idle_timeout_s: float,
    nodelay: bool = True,
    send_buffer: int | None = None,
    congestion: str | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None: ...
def bench(config_json: str) -> str: ...
