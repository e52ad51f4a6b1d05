"""The scenario: one description of an incast experiment that every backend reads.

A scenario is a TOML file or a dict with explicit units::

    seed = 1
    [topology]
    senders = 16
    link = "1Gbps"
    rtt = "100us"
    buffer = "64KB"
    [tcp]
    rto_min = "200ms"
    [workload]
    kind = "sync_read"
    sru = "256KB"
    blocks = 20

Parsing happens once, here: unknown keys are rejected with a "did you mean", values are checked
for units, and the result is the *normalized* scenario (every default filled in, every value in
bytes, bits per second or integer picoseconds), which is what the simulator receives and what
every stored result carries. The simulator core re-checks value invariants (zero rates, a buffer
smaller than a packet...) and both report through :class:`ScenarioError`.
"""

from __future__ import annotations

import copy
import difflib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from incastlab import _core
from incastlab.size_cdf import parse_cdf_points, read_size_cdf
from incastlab.units import UnitError, parse_queue_limit, parse_rate, parse_size, parse_time

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ScenarioError = _core.ScenarioError


def _normalized(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get("normalized"))


def _unit(parse: Any) -> Any:
    def validate(value: Any, info: ValidationInfo) -> Any:
        if _normalized(info) and isinstance(value, int) and not isinstance(value, bool):
            return value
        return parse(value)

    return BeforeValidator(validate)


def _off_or(parse: Any) -> Any:
    def validate(value: Any, info: ValidationInfo) -> Any:
        if _normalized(info) and isinstance(value, int) and not isinstance(value, bool):
            return value
        if value == "off":
            return 0
        return parse(value)

    return BeforeValidator(validate)


def _limit(value: Any, info: ValidationInfo) -> Any:
    if _normalized(info) and isinstance(value, dict):
        return value
    return parse_queue_limit(value)


Size = Annotated[int, _unit(parse_size), Field(ge=0)]
Rate = Annotated[int, _unit(parse_rate), Field(ge=0)]
Time = Annotated[int, _unit(parse_time), Field(ge=0)]
TimeOrOff = Annotated[int, _off_or(parse_time), Field(ge=0)]
Count = Annotated[int, Field(strict=True, ge=0)]


def _cdf(value: Any, info: ValidationInfo) -> Any:
    if isinstance(value, str | Path):
        return read_size_cdf(value)
    if isinstance(value, list):
        return parse_cdf_points(value)
    return value


SizeCdf = Annotated[list[tuple[int, float]], BeforeValidator(_cdf)]


class QueueLimit(BaseModel):
    """A drop-tail limit in bytes and/or packets (``None``: no limit of that kind)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    bytes: int | None = None
    packets: int | None = None


Limit = Annotated[QueueLimit, BeforeValidator(_limit)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class Topology(_Section):
    """Hosts, links and switch buffers."""

    kind: Literal["star", "leaf_spine", "fat_tree"] = Field(
        "star",
        description="star: one switch; leaf_spine: leaves and spines; fat_tree: k-ary fat tree",
    )
    senders: Count = Field(1, description="number of servers answering the receiver")
    hosts: Count = Field(
        0, description="hosts of a leaf-spine or fat tree (0: just enough; fat tree: k³/4)"
    )
    fat_tree_k: Count = Field(0, description="fat tree k, even (0: smallest that holds hosts)")
    hosts_per_leaf: Count = Field(16, description="leaf-spine: hosts under each leaf")
    spines: Count = Field(0, description="leaf-spine: spines (0: as many as hosts_per_leaf)")
    link_delay: Time = Field(
        "0us", description="propagation delay per link (0: rtt over the longest round trip)"
    )
    placement: Literal["spread", "packed"] = Field(
        "spread",
        description="spread: consecutive hosts in different leaves/ToRs and pods; "
        "packed: fill switch by switch",
    )
    link: Rate = Field("1Gbps", description="rate of every access link")
    receiver_link: Rate | None = Field(None, description="receiver's link rate (default: link)")
    rtt: Time = Field("100us", description="base round-trip time without queueing")
    buffer: Limit = Field("64KB", description="drop-tail limit per switch port: 64KB, 42pkt")
    shared_buffer: Size | None = Field(
        None, description="one buffer shared by all switch ports (dynamic threshold), e.g. 1MB"
    )
    buffer_alpha: float = Field(1.0, description="shared buffer: a port may use α × free space")
    red_min: Size | None = Field(None, description="RED at switch ports: min average queue")
    red_max: Size = Field("0B", description="RED: average queue where p reaches red_max_p")
    red_max_p: float = Field(0.1, description="RED: signal probability at red_max")
    red_weight: float = Field(0.002, description="RED: EWMA weight of the average queue")
    red_ecn: bool = Field(False, strict=True, description="RED marks ECN-capable packets")
    nic_buffer: Limit = Field("unlimited", description="host NIC queue limit")
    ecn_threshold: Limit = Field(
        "off", description="ECN marking threshold K per switch port (DCTCP): 30KB, 20pkt, off"
    )
    pfc: bool = Field(
        False,
        strict=True,
        description="PFC/802.3x: pause a sender when its bytes in the switch reach XOFF "
        "(lossless; each ingress holds up to `buffer`)",
    )
    pfc_xoff: Size | None = Field(
        None, description="PFC XOFF per ingress (default: buffer minus headroom)"
    )
    pfc_xon: Size | None = Field(None, description="PFC XON per ingress (default: XOFF − 2 frames)")
    host_jitter: Time = Field("1us", description="random host delay per packet, [0, jitter]")


class Tcp(_Section):
    """TCP parameters shared by every connection."""

    mss: Size = Field("1448B", description="maximum segment size (payload)")
    header_bytes: Size = Field("70B", description="frame bytes beyond the payload")
    phy_overhead: Size = Field("20B", description="preamble and inter-frame gap per frame")
    initial_window: Count = Field(10, description="initial congestion window, segments")
    rto_min: Time = Field("200ms", description="minimum retransmission timeout")
    rto_max: Time = Field("120s", description="maximum retransmission timeout")
    rto_initial: Time = Field("1s", description="RTO before any RTT sample")
    clock_granularity: Time = Field("1us", description="timer and RTT clock tick")
    rto_formula: Literal["linux", "rfc6298"] = Field(
        "linux",
        description="linux: RTO = SRTT + max(4·RTTVAR, RTOmin); "
        "rfc6298: RTO = max(RTOmin, SRTT + 4·RTTVAR)",
    )
    recovery_cwnd: Literal["prr", "halve"] = Field(
        "prr", description="prr: RFC 6937 (Linux, ns-3); halve: RFC 6675 cwnd = ssthresh"
    )
    congestion_control: Literal["reno", "cubic", "dctcp"] = Field(
        "reno", description="reno, cubic (RFC 9438) or dctcp (needs topology.ecn_threshold)"
    )
    ecn: bool | None = Field(
        None,
        strict=True,
        description="negotiate ECN (RFC 3168): mark instead of drop, halve once per window "
        "on an echo (default: on for dctcp, off otherwise)",
    )
    dctcp_g: float = Field(1 / 16, description="DCTCP's gain g for α")
    frto: bool = Field(
        True, strict=True, description="F-RTO (RFC 5682): detect spurious timeouts and undo"
    )
    rto_randomization: Literal["none", "uniform", "tda", "maa", "fsa"] = Field(
        "none",
        description="RTO randomization (Hafeez): uniform in RTO±Δ/2; tda: interval ×ω per "
        "successive timeout; maa: ⌊N/(σ ln N)⌋·Δ; fsa: tda with ω_long for long flows",
    )
    rto_delta: Time = Field("0us", description="Δ: randomization interval (MAA: its unit)")
    rto_omega: float = Field(2.0, description="ω: interval growth per successive timeout")
    rto_omega_long: float = Field(4.0, description="FSA: ω for long flows")
    rto_sigma: float = Field(1.0, description="MAA: σ")
    fsa_long_after: Size = Field("100KB", description="FSA: a flow is long after this many bytes")
    delayed_ack: TimeOrOff = Field("off", description="delayed-ACK timeout, or off")
    sack: bool = Field(True, strict=True, description="SACK + RFC 6675 (off: NewReno)")
    limited_transmit: bool = Field(True, strict=True, description="RFC 3042 limited transmit")
    receive_window: Size = Field("4MiB", description="receiver's advertised window")
    cwnd_restart: Literal["idle", "block", "never"] = Field(
        "idle", description="idle: Linux restart after idle; block: slow start every response"
    )
    dupthresh: Count = Field(3, description="duplicate ACKs that signal a loss")


class Workload(_Section):
    """What the application does."""

    kind: Literal["sync_read", "incast", "queries"] = Field(
        "sync_read", description="sync_read, incast (N flows at once) or queries (Poisson)"
    )
    sru: Size | None = Field("256KB", description="bytes each server returns per block")
    block: Size | None = Field(None, description="block striped over the servers (S/N each)")
    blocks: Count = Field(20, description="number of blocks read")
    request_size: Size = Field("100B", description="request message size")
    jitter: Time = Field("0us", description="server response delay, uniform in [0, jitter]")
    flow_size: Size | None = Field(None, description="bytes per flow (incast)")
    fanout_window: Count = Field(
        0, description="servers asked at once, the next when a fragment completes (0: all)"
    )
    request_stagger: Time = Field("0us", description="the k-th request goes out k·stagger later")
    queries: Count = Field(1000, description="number of Poisson queries (queries)")
    query_load: float = Field(0.5, description="offered load, share of the receiver's link")
    query_size_min: Size = Field("10KB", description="smallest query response (queries)")
    query_size_max: Size = Field("50KB", description="largest query response (queries)")
    query_size_cdf: SizeCdf = Field(
        [],
        description="empirical CDF of query sizes: a file of 'size probability' lines, or "
        "[[size, p], ...] (replaces query_size_min/max)",
    )
    tasks: Count = Field(
        1, description="concurrent tasks, each reading from every server on its own connections"
    )

    @model_validator(mode="before")
    @classmethod
    def _block_replaces_default_sru(cls, data: Any) -> Any:
        # Giving `block` means "stripe it": the default SRU must not also apply.
        if isinstance(data, dict) and data.get("block") is not None and "sru" not in data:
            return {**data, "sru": None}
        return data


class Background(_Section):
    """Long-lived background flows."""

    flows: Count = Field(0, description="number of long-lived background flows")
    source: Literal["own_hosts", "senders"] = Field(
        "own_hosts", description="own_hosts: a host each; senders: from server i mod N's host"
    )
    destination: Literal["receiver", "sink"] = Field(
        "receiver", description="receiver: share the incast bottleneck; sink: a host of their own"
    )
    ecn: bool | None = Field(
        None, strict=True, description="background hosts negotiate ECN (default: tcp.ecn)"
    )
    warmup: Time = Field("10ms", description="background runs this long before the workload")


class Ndp(_Section):
    """NDP: trimming switches and receiver pulls (transport = "ndp")."""

    mtu: Size = Field("9000B", description="payload bytes per data packet")
    header_bytes: Size = Field("64B", description="bytes of a header, ACK, NACK or PULL")
    initial_window: Count = Field(10, description="packets sent before the first pull")
    data_queue: Count = Field(8, description="data packets a switch port queues before trimming")
    header_queue: Size = Field("72KB", description="header bytes a port queues before bouncing")
    header_weight: Count = Field(10, description="headers served per data packet when both wait")
    return_to_sender: bool = Field(
        True, strict=True, description="bounce headers from a full header queue (else drop)"
    )
    rto: Time = Field("1ms", description="a sender that hears nothing this long resends")


class Run(_Section):
    """Budgets and optional outputs."""

    max_events: Count = Field(
        2_000_000_000, description="stop with an error after this many events"
    )
    max_time: Time = Field("3600s", description="stop with an error at this simulated time")
    sample_interval: TimeOrOff = Field("off", description="time-series sampling interval, or off")
    max_samples: Count = Field(100_000, description="most time-series samples kept")


class Scenario(_Section):
    """One incast experiment."""

    seed: Count = Field(1, description="seed of every random stream")
    transport: Literal["tcp", "ndp"] = Field("tcp", description="tcp, or ndp (incast only)")
    ndp: Ndp = Field(default_factory=Ndp)  # type: ignore[arg-type]
    topology: Topology = Field(default_factory=Topology)  # type: ignore[arg-type]
    tcp: Tcp = Field(default_factory=Tcp)  # type: ignore[arg-type]
    workload: Workload = Field(default_factory=Workload)  # type: ignore[arg-type]
    background: Background = Field(default_factory=Background)  # type: ignore[arg-type]
    run: Run = Field(default_factory=Run)  # type: ignore[arg-type]

    def normalized(self) -> dict[str, Any]:
        """Every value in base units, every default filled in."""
        d = self.model_dump()
        if d["topology"]["receiver_link"] is None:
            d["topology"]["receiver_link"] = d["topology"]["link"]
        if d["tcp"]["ecn"] is None:
            d["tcp"]["ecn"] = d["tcp"]["congestion_control"] == "dctcp"
        return d

    def to_json(self) -> str:
        """The normalized scenario as canonical JSON."""
        return json.dumps(self.normalized(), sort_keys=True, separators=(",", ":"))

    @property
    def senders(self) -> int:
        return self.topology.senders


SECTIONS: dict[str, type[BaseModel]] = {
    "topology": Topology,
    "tcp": Tcp,
    "workload": Workload,
    "background": Background,
    "run": Run,
    "ndp": Ndp,
}


def _suggest(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f"; allowed: {', '.join(choices)}"


def _explain(e: ValidationError) -> str:
    errors = e.errors()
    first = errors[0]
    loc = [str(x) for x in first["loc"] if not isinstance(x, int)]
    # Drop pydantic's internal tags for Annotated/union branches (e.g. 'function-before[...]').
    loc = [x for x in loc if "[" not in x]
    path = ".".join(loc) or "scenario"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    if first["type"] == "extra_forbidden":
        parent: type[BaseModel] = Scenario
        if len(loc) >= 2 and loc[0] in SECTIONS:
            parent = SECTIONS[loc[0]]
        if len(loc) >= 3 and loc[1] in ("buffer", "nic_buffer"):
            parent = QueueLimit
        choices = list(parent.model_fields)
        prefix = ".".join(loc[:-1])
        hint = _suggest(loc[-1], choices)
        if prefix and "did you mean" in hint:
            hint = hint.replace("'", f"'{prefix}.", 1)
        return f"unknown key '{path}'{hint}{more}"
    if first["type"] == "missing":
        return f"{path}: required{more}"
    ctx = first.get("ctx") or {}
    err = ctx.get("error")
    if isinstance(err, UnitError | ValueError):
        return f"{path}: {err}{more}"
    msg = first["msg"]
    return f"{path}: {msg[0].lower() + msg[1:]} (got {first.get('input')!r}){more}"


def _check_sections(data: Mapping[str, Any]) -> None:
    for key, value in data.items():
        if key in SECTIONS and not isinstance(value, Mapping):
            raise ScenarioError(f"{key}: expected a table of settings, got {value!r}")


def from_dict(data: Mapping[str, Any], *, normalized: bool = False) -> Scenario:
    """Validate a scenario given as a (nested) dict with unit strings.

    With ``normalized=True``, plain integers in base units are accepted too (the form stored
    with every result).
    """
    if not isinstance(data, Mapping):
        raise ScenarioError(f"scenario: expected a table of settings, got {type(data).__name__}")
    _check_sections(data)
    try:
        sc = Scenario.model_validate(dict(data), context={"normalized": normalized})
    except ValidationError as e:
        raise ScenarioError(_explain(e)) from None
    _core.validate(sc.to_json())
    return sc


def read_toml(path: str | Path) -> dict[str, Any]:
    """The raw contents of a scenario file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioError(f"cannot read scenario file {str(p)!r}: {e.strerror}") from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p.name}: not valid TOML: {e}") from None
    workload = data.get("workload")
    if isinstance(workload, dict) and isinstance(workload.get("query_size_cdf"), str):
        # A CDF file named in a scenario file is found beside it.
        cdf = Path(workload["query_size_cdf"])
        if not cdf.is_absolute():
            workload["query_size_cdf"] = str(p.parent / cdf)
    return data


def load(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    return from_dict(read_toml(path))


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` with dotted keys (``"topology.buffer"``) replaced."""
    out: dict[str, Any] = copy.deepcopy(dict(data))
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        node = out
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ScenarioError(f"{part}: expected a table of settings, got {child!r}")
            node = child
        node[parts[-1]] = value
    return out
