from collections.abc import Callable

__version__: str
#: Bytes of the block protocol's header, ahead of every request and every response.
PROTOCOL_HEADER_BYTES: int

class ScenarioError(ValueError):
    field: str

class SimulationError(RuntimeError): ...
class TraceError(ValueError): ...
class MonitorError(ValueError): ...

class Monitor:
    def __init__(
        self,
        iface: str,
        interval_ns: int,
        netns: str | None = None,
        duration_ns: int | None = None,
    ) -> None: ...
    def poll(self) -> str: ...
    def stop(self) -> str: ...

def simulate(
    scenario_json: str,
    progress: Callable[[int, float], None] | None = None,
    slice_events: int = 2_000_000,
    pcap: str | None = None,
    pcap_at: str | None = None,
) -> str: ...
def validate(scenario_json: str) -> None: ...
def normalize(scenario_json: str) -> str: ...
def defaults() -> str: ...
def describe() -> str: ...
def report_columns() -> str: ...
def block_split(block: int, n: int) -> list[int]: ...
def rto_timer(scenario_json: str, queue: int = 0, samples: int = 0) -> dict[str, int]: ...
def size_cdf(source: str | list[tuple[str, str]]) -> list[tuple[int, float]]: ...
def serve(
    addr: str,
    max_request: int,
    max_conns: int,
    idle_timeout_s: float,
    nodelay: bool = True,
    send_buffer: int | None = None,
    congestion: str | None = None,
    on_ready: Callable[[str], None] | None = None,
    max_conns_per_peer: int = 128,
    first_request_timeout_s: float = 5.0,
    write_timeout_s: float = 30.0,
    allow: str | None = None,
    token: str | None = None,
) -> None: ...
def check_congestion(name: str) -> None: ...
def check_token(text: str) -> None: ...
def netns_read(names: list[str], files: list[str]) -> list[list[str]]: ...

class BlockServers:
    def __init__(
        self,
        listen: list[tuple[str | None, str]],
        congestion: str | None = None,
        max_request: int = 64 << 20,
        max_conns: int = 1024,
        idle_timeout_s: float = 60.0,
        first_request_timeout_s: float = 60.0,
        write_timeout_s: float = 30.0,
        nodelay: bool = True,
        send_buffer: int | None = None,
    ) -> None: ...
    def addresses(self) -> list[str]: ...
    def logs(self) -> list[str]: ...
    def stats(self) -> dict[str, int]: ...
    def stop(self) -> None: ...

def host_rate_cap_bps(scenario_json: str, link_bps: int) -> int | None: ...
def nearest_rank(values: list[int], q: float) -> int: ...

class Mesh:
    """A mesh workload's hosts, connected on creation; ``run`` once."""

    def run(self, start_monotonic_ns: int, time_limit_s: float) -> str: ...

class KvCluster(Mesh):
    def __init__(
        self,
        scenario_json: str,
        hosts: list[tuple[str | None, str]],
        congestion: str | None = None,
        connect_timeout_s: float = 10.0,
    ) -> None: ...
    def planned(self) -> int: ...
    def gets_per_s(self) -> float: ...
    def quorum(self) -> int: ...

def shuffle_layout(scenario_json: str) -> str: ...

class ShuffleCluster(Mesh):
    def __init__(
        self,
        scenario_json: str,
        hosts: list[tuple[str | None, str]],
        congestion: str | None = None,
        connect_timeout_s: float = 10.0,
    ) -> None: ...

def bench(config_json: str) -> str: ...
def analyze_pcap(
    path: str,
    receiver: str | None = None,
    rto_min: int = 200_000_000_000,
    interval: int = 1_000_000_000,
    rto_gap: float = 0.8,
    min_flows: int = 3,
    progress: Callable[[int], None] | None = None,
) -> str: ...
