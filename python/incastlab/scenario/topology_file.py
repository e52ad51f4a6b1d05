"""Topology files: switches, hosts and links a user describes (``topology.kind = "file"``).

A topology file is TOML; every link gives its rate, delay and buffer with units, and a
switch may share one buffer among its ports::

    # Two switches of two hosts each, joined by a trunk.
    receiver = "h4"                  # of fan-in workloads; default: the last host
    # senders = ["h1", "h2", "h3"]   # default: every other host, in order
    switches = [{ name = "s1", shared_buffer = "1MB" }, "s2"]
    hosts = ["h1", "h2", "h3", "h4"]
    links = [
      { a = "h1", b = "s1", rate = "1Gbps", delay = "25us", buffer = "unlimited" },
      { a = "h2", b = "s1", rate = "1Gbps", delay = "25us", buffer = "unlimited" },
      { a = "h3", b = "s2", rate = "1Gbps", delay = "25us", buffer = "128KB" },
      { a = "h4", b = "s2", rate = "1Gbps", delay = "25us", buffer = "128KB" },
      { a = "s1", b = "s2", rate = "10Gbps", delay = "5us", buffer = "256KB" },
    ]

A scenario names the file (``topology.file = "two.toml"``, found beside the scenario file) or
gives the same tables inline (``[topology.file]``). This module only reads the file and turns
unit strings into base units; the simulator core owns the shape and every rule (a host on
one link, every host reachable, ...) and names what is wrong. The normalized scenario carries
the tables, so a stored result needs no other file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from incastlab import files
from incastlab.units import UnitError, parse_queue_limit, parse_rate, parse_size, parse_time, shown

FIELD = "topology.file"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _convert(
    table: Mapping[str, Any], parsers: dict[str, Any], where: str, normalized: bool
) -> dict[str, Any]:
    """``table`` with the values of ``parsers``' keys in base units (others as given)."""
    out = dict(table)
    for key, parse in parsers.items():
        value = out.get(key)
        if value is None or (normalized and (_is_int(value) or isinstance(value, dict))):
            continue
        try:
            out[key] = parse(value)
        except (UnitError, ValueError) as e:
            raise ValueError(f"{where}: {key}: {e}") from None
    return out


def _link_name(i: int, link: Mapping[str, Any]) -> str:
    ends = [link.get(k) for k in ("a", "b")]
    if all(isinstance(e, str) and len(e) <= 100 for e in ends):
        return f"link {i} ({ends[0]}–{ends[1]})"
    return f"link {i}"


def topology_tables(value: Mapping[str, Any], source: str, normalized: bool) -> dict[str, Any]:
    """A topology's tables with its units in base units: link rates, delays and buffers,
    switches' shared buffers. ``source`` names it in errors (the file's name)."""
    out = dict(value)
    links = out.get("links")
    if isinstance(links, list):
        parsers = {"rate": parse_rate, "delay": parse_time, "buffer": parse_queue_limit}
        out["links"] = [
            _convert(link, parsers, f"{source}{_link_name(i, link)}", normalized)
            if isinstance(link, Mapping)
            else link
            for i, link in enumerate(links)
        ]
    switches = out.get("switches")
    if isinstance(switches, list):
        out["switches"] = [
            _convert(s, {"shared_buffer": parse_size}, f"{source}switch {i}", normalized)
            if isinstance(s, Mapping)
            else s
            for i, s in enumerate(switches)
        ]
    return out


def read_topology_file(path: str | Path) -> dict[str, Any]:
    """The tables of a topology file, in base units."""
    p = Path(path)
    data = files.read_toml(p, "topology file")  # an InputFileError is a ValueError naming it
    return topology_tables(data, f"{p.name}: ", normalized=False)


def topology_value(value: Any, normalized: bool) -> Any:
    """``topology.file`` in base units: a file name read, inline tables converted."""
    if isinstance(value, str | Path):
        return read_topology_file(value)
    if isinstance(value, Mapping):
        return topology_tables(value, "", normalized)
    raise ValueError(
        f"expected the name of a topology file or its tables inline, got {shown(value)}"
    )
