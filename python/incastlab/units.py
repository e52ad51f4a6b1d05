"""Explicit units for scenario values.

Sizes: ``"64KB"`` is 64 000 bytes (SI), ``"64KiB"`` is 65 536 bytes; ``"1448B"``; packets as
``"42pkt"``. Rates: ``"1Gbps"``, ``"100Mbps"``, ``"2.5Gbps"``. Times: ``"200ms"``, ``"100us"``
(or ``"100µs"``), ``"1.5s"``, ``"800ns"``, ``"5ps"``. Internally: bytes, bits per second and
integer picoseconds. A bare number is an error: the unit is the part people get wrong.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_NUMBER = r"(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]+))?"
_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>[A-Za-zµ]+)\s*$")

SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
RATE_UNITS: dict[str, int] = {
    "bps": 1,
    "Kbps": 10**3,
    "Mbps": 10**6,
    "Gbps": 10**9,
    "Tbps": 10**12,
}
TIME_UNITS: dict[str, int] = {
    "ps": 1,
    "ns": 10**3,
    "us": 10**6,
    "µs": 10**6,
    "ms": 10**9,
    "s": 10**12,
}
PACKET_UNITS = ("pkt", "pkts", "packet", "packets")

PS_PER_S = 10**12


class UnitError(ValueError):
    """A value without a unit, with an unknown unit, or of the wrong kind."""


_INT_RANGE = re.compile(r"\s*(\d+)\s*\.\.\s*(\d+)\s*(?::\s*(\d+)\s*)?")


def is_int_ranges(text: str) -> bool:
    """Whether ``text`` holds at least one ``low..high`` range."""
    return any(_INT_RANGE.fullmatch(part) for part in text.split(","))


def parse_int_ranges(text: str, what: str, limit: int) -> list[int]:
    """``"1,2,4"``, ``"1..48"``, ``"4..64:4"`` or a mix (``"1..8,16,32"``), sorted and without
    repeats; at most ``limit`` values. Errors start with ``what``."""
    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        m = _INT_RANGE.fullmatch(part)
        if m:
            lo, hi, step = int(m[1]), int(m[2]), int(m[3] or 1)
            if lo > hi or step == 0:
                raise UnitError(f"{what}: empty range {part!r} (write low..high[:step])")
            out.extend(range(lo, hi + 1, step))
        elif part.isdigit():
            out.append(int(part))
        else:
            raise UnitError(
                f"{what}: cannot read {part!r}; use a list and ranges like 1,2,4 or 1..48:2"
            )
        if len(out) > limit:
            raise UnitError(f"{what}: more than {limit} values")
    if not out:
        raise UnitError(f"{what}: no values given")
    return sorted(set(out))


def _split(text: object, kind: str, units: dict[str, int], example: str) -> tuple[Decimal, int]:
    if isinstance(text, bool) or not isinstance(text, str):
        raise UnitError(f"expected a {kind} with a unit such as {example!r}, got {text!r}")
    m = _RE.match(text)
    if not m:
        raise UnitError(f"expected a {kind} with a unit such as {example!r}, got {text!r}")
    unit = m.group("unit")
    if unit not in units:
        allowed = ", ".join(units)
        raise UnitError(f"unknown {kind} unit {unit!r} in {text!r}; allowed: {allowed}")
    try:
        num = Decimal(m.group("num"))
        if m.group("exp"):
            num = num.scaleb(int(m.group("exp")))
    except InvalidOperation as e:  # pragma: no cover - the regex admits only numbers
        raise UnitError(f"not a number in {text!r}") from e
    return num, units[unit]


def _exact(num: Decimal, scale: int, text: str, what: str) -> int:
    value = num * scale
    if value != value.to_integral_value():
        raise UnitError(f"{text!r} is not a whole number of {what}")
    return int(value)


def parse_size(text: object) -> int:
    """Bytes in ``"64KB"``, ``"64KiB"``, ``"1448B"``."""
    num, scale = _split(text, "size", SIZE_UNITS, "64KB")
    return _exact(num, scale, str(text), "bytes")


def parse_rate(text: object) -> int:
    """Bits per second in ``"1Gbps"``."""
    num, scale = _split(text, "rate", RATE_UNITS, "1Gbps")
    return _exact(num, scale, str(text), "bits per second")


def parse_time(text: object) -> int:
    """Picoseconds in ``"200ms"``, ``"100us"``; ``"off"`` and ``"0"`` are not accepted here."""
    num, scale = _split(text, "duration", TIME_UNITS, "200ms")
    return _exact(num, scale, str(text), "picoseconds")


def parse_queue_limit(text: object) -> dict[str, int | None]:
    """A drop-tail limit: ``"64KB"`` (bytes), ``"42pkt"`` (packets) or ``"unlimited"``."""
    if text in ("unlimited", "off"):
        return {"bytes": None, "packets": None}
    if isinstance(text, str):
        m = _RE.match(text)
        if m and m.group("unit") in PACKET_UNITS:
            if m.group("exp") or "." in m.group("num"):
                raise UnitError(f"a packet count must be a whole number, got {text!r}")
            return {"bytes": None, "packets": int(m.group("num"))}
    try:
        return {"bytes": parse_size(text), "packets": None}
    except UnitError as e:
        raise UnitError(
            f"expected a limit such as '64KB', '64KiB', '42pkt', 'unlimited' or 'off', got {text!r}"
        ) from e


def format_rate(bps: float) -> str:
    """``941.2 Mbps``."""
    for unit, scale in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3)):
        if abs(bps) >= scale:
            return f"{bps / scale:.4g} {unit}"
    return f"{bps:.4g} bps"


def format_time(ps: float) -> str:
    """``2.29 ms``."""
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("µs", 1e6), ("ns", 1e3)):
        if abs(ps) >= scale:
            return f"{ps / scale:.3g} {unit}"
    return f"{ps:.3g} ps"


def format_size(n: float) -> str:
    """``64 KB`` (SI)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n:.4g} B"
