"""Real TCP: run the block client against real servers and report in the simulator's schema.

The server and client are Rust (``incastlab._core.serve`` / ``bench``, from the
``incast-net`` crate); this module turns a client run into a :class:`Result`, so that real
runs, simulations and model predictions of one scenario line up in the same tables, stores
and figures.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from incastlab import _core
from incastlab.files import InputFileError, read_text
from incastlab.result import Result
from incastlab.units import shown

PS_PER_US = 1_000_000


def parse_servers(spec: str | None, file: str | None) -> list[str]:
    """``host:port`` addresses from a comma-separated list and/or a file (one per line, ``#``
    comments)."""
    out: list[str] = []
    if spec:
        out += [s.strip() for s in spec.split(",") if s.strip()]
    if file:
        try:
            text = read_text(file, "servers file")
        except InputFileError as e:
            raise ValueError(f"--servers-file: {e}") from None
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    if not out:
        raise ValueError("--servers: give host:port addresses or --servers-file")
    for s in out:
        host, _, port = s.rpartition(":")
        if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port[:6]) < 65536:
            raise ValueError(f"--servers: expected host:port such as 10.0.0.2:9000, got {shown(s)}")
    return out


def config(
    servers: Sequence[str],
    *,
    sru: int,
    sizes: Sequence[int] = (),
    blocks: int,
    warmup: int = 1,
    time_limit_s: float = 600.0,
    fanout_window: int = 0,
    stagger_s: float = 0.0,
    nodelay: bool = True,
    recv_buffer: int | None = None,
    congestion: str | None = None,
    connect_timeout_s: float = 5.0,
    token: str | None = None,
) -> dict[str, Any]:
    """The Rust client's configuration (what ``_core.bench`` reads as JSON)."""
    return {
        "servers": list(servers),
        "sru": sru,
        "sizes": list(sizes),
        "blocks": blocks,
        "warmup": warmup,
        "time_limit_s": time_limit_s,
        "fanout_window": fanout_window,
        "stagger_s": stagger_s,
        "nodelay": nodelay,
        "recv_buffer": recv_buffer,
        "congestion": congestion,
        "connect_timeout_s": connect_timeout_s,
        "token": token,
    }


def bench(servers: Sequence[str], **options: Any) -> dict[str, Any]:
    """Run the client (options as :func:`config`); the raw result (times in µs)."""
    out: dict[str, Any] = json.loads(_core.bench(json.dumps(config(servers, **options))))
    return out


def to_result(
    raw: dict[str, Any],
    scenario: dict[str, Any],
    *,
    backend: str,
    extra: dict[str, Any] | None = None,
) -> Result:
    """A client run as a :class:`Result`. ``scenario`` is the normalized scenario it ran
    (or, for a cluster, the one it stands for); counters a real network does not expose
    are left out of the report."""
    n = scenario["topology"]["senders"]
    w = scenario["workload"]
    sizes = [w["sru"]] * n if w["sru"] is not None else _core.block_split(w["block"], n)
    duration = raw["duration_us"] * PS_PER_US
    responses = raw["response_us"]
    report: dict[str, Any] = {
        "senders": n,
        "workload": "sync_read",
        "app_bytes": raw["bytes"],
        "start": 0,
        "duration": duration,
        "goodput_bps": raw["bytes"] * 8 / (duration / 1e12) if duration else 0.0,
        "link_bps": scenario["topology"]["receiver_link"],
        "base_latency": 0,
        "block_times": [t * PS_PER_US for t in raw["block_times_us"]],
        "response_times": [[t * PS_PER_US for t in b] for b in responses],
        "flows": [
            {"flow": i, "background": False, "bytes": size * len(responses), "fct": None}
            for i, size in enumerate(sizes)
        ],
        "truncated": raw["truncated"],
    }
    if extra:
        report.update(extra)
    return Result(scenario=scenario, report=report, version=_core.__version__, backend=backend)


def run(
    servers: Sequence[str],
    *,
    link_bps: int,
    block: int | None = None,
    request_stagger: str = "0us",
    **options: Any,
) -> Result:
    """Run the client against real servers (options as :func:`config`) and report it as a
    :class:`Result` of backend ``bench``, with the scenario it stands for. With ``block``,
    each block is striped over the servers by the engine's one rule (``_core.block_split``),
    so a block is read exactly, as the simulator and the model assume; else every server
    returns ``sru`` bytes."""
    from incastlab.scenario import from_dict

    load: dict[str, Any] = {"sru": f"{options['sru']}B"}
    if block is not None:
        options["sizes"] = _core.block_split(block, len(servers))
        options["sru"] = max(options["sizes"])
        load = {"block": f"{block}B"}
    scenario = from_dict(
        {
            "topology": {"senders": len(servers), "link": f"{link_bps}bps"},
            "workload": {
                **load,
                "blocks": options["blocks"],
                "fanout_window": options.get("fanout_window", 0),
                "request_stagger": request_stagger,
            },
        }
    ).normalized()
    raw = bench(servers, **options)
    return to_result(raw, scenario, backend="bench", extra={"servers": list(servers)})
