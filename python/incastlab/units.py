"""Explicit units for scenario values.

Sizes: ``"64KB"`` is 64 000 bytes (SI), ``"64KiB"`` is 65 536 bytes; ``"1448B"``; packets as
``"42pkt"``. Rates: ``"1Gbps"``, ``"100Mbps"``, ``"2.5Gbps"``. Times: ``"200ms"``, ``"100us"``
(or ``"100µs"``), ``"1.5s"``, ``"800ns"``, ``"5ps"``. Internally: bytes, bits per second and
integer picoseconds. A bare number is an error: the unit is the part people get wrong.
"""

from __future__ import annotations

import math
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

#: Largest value in base units: what the simulator core holds (an unsigned 64-bit integer).
MAX_VALUE = 2**64 - 1
#: Most characters of a user's value repeated in a message.
SHOWN_CHARS = 60


class UnitError(ValueError):
    """A value without a unit, with an unknown unit, or of the wrong kind."""


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)``, cut to about ``limit`` characters: what a message repeats of a user's
    value (a 10 MB bad value is named, not echoed)."""
    size = len(value) if isinstance(value, str) else None
    if isinstance(value, str) and size is not None and size > 4 * limit:
        value = value[: 4 * limit]  # the repr of a huge string is never built
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}…" + (f" ({size:,} characters)" if size else "")


# ASCII digits only: int() would take '²' or Arabic-Indic digits; at most 18 of them, so every
# bound is read without Python's long-integer machinery and fits the core's integers.
_INT = r"[0-9]{1,18}"
_INT_RANGE = re.compile(rf"\s*({_INT})\s*\.\.\s*({_INT})\s*(?::\s*({_INT})\s*)?")
_ONE_INT = re.compile(rf"\s*({_INT})\s*")
#: The same with a minus sign allowed on any number: what is read only to say it is negative
#: ("1-4", a range written with a dash, stays unreadable rather than negative).
_SIGNED = rf"-?\s*{_INT}"
_SIGNED_RANGES = re.compile(rf"\s*{_SIGNED}\s*(?:\.\.\s*{_SIGNED}\s*(?::\s*{_SIGNED}\s*)?)?")


def is_int_ranges(text: str) -> bool:
    """Whether ``text`` holds at least one ``low..high`` range."""
    return any(_INT_RANGE.fullmatch(part) for part in text.split(","))


def parse_int_ranges(text: str, what: str, limit: int) -> list[int]:
    """``"1,2,4"``, ``"1..48"``, ``"4..64:4"`` or a mix (``"1..8,16,32"``), sorted and without
    repeats; at most ``limit`` values, counted before any range is expanded. Errors start
    with ``what``."""
    out: list[int] = []
    if len(text) > 20 * limit:
        raise UnitError(f"{what}: more than {limit} values")
    for part in (p.strip() for p in text.split(",")):
        m = _INT_RANGE.fullmatch(part)
        if m:
            lo, hi, step = int(m[1]), int(m[2]), int(m[3] or 1)
            if lo > hi or step == 0:
                raise UnitError(f"{what}: empty range {shown(part)} (write low..high[:step])")
            span = range(lo, hi + 1, step)
            if len(out) + len(span) > limit:
                raise UnitError(
                    f"{what}: more than {limit} values ({shown(part)} has {len(span):,})"
                )
            out.extend(span)
        elif _ONE_INT.fullmatch(part):
            out.append(int(part))
        elif _SIGNED_RANGES.fullmatch(part):
            where = f" in {shown(text)}" if part != text.strip() else ""
            raise UnitError(
                f"{what}: {shown(part)}{where} is negative; use whole numbers from 0 and ranges "
                "like 1,2,4 or 1..48:2"
            )
        else:
            raise UnitError(
                f"{what}: cannot read {shown(part)}; use whole numbers (at most 18 digits) "
                "and ranges like 1,2,4 or 1..48:2"
            )
        if len(out) > limit:
            raise UnitError(f"{what}: more than {limit} values")
    if not out:
        raise UnitError(f"{what}: no values given")
    return sorted(set(out))


#: Longest text read as a value: more is never a size, a rate or a time.
_MAX_TEXT = 100


def format_int_ranges(values: list[int]) -> str:
    """The inverse of :func:`parse_int_ranges` for sorted whole numbers: runs of three or more
    consecutive values as ``low..high`` (``[1, 2, 3, 5]`` -> ``"1..3,5"``)."""
    parts: list[str] = []
    k = 0
    while k < len(values):
        j = k
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j - k >= 2:
            parts.append(f"{values[k]}..{values[j]}")
        else:
            parts += [str(v) for v in values[k : j + 1]]
        k = j + 1
    return ",".join(parts)


def _split(text: object, kind: str, units: dict[str, int], example: str) -> tuple[Decimal, int]:
    if isinstance(text, bool) or not isinstance(text, str):
        raise UnitError(f"expected a {kind} with a unit such as {example!r}, got {shown(text)}")
    m = _RE.match(text) if len(text) <= _MAX_TEXT else None
    if not m:
        raise UnitError(f"expected a {kind} with a unit such as {example!r}, got {shown(text)}")
    unit = m.group("unit")
    if unit not in units:
        allowed = ", ".join(units)
        raise UnitError(f"unknown {kind} unit {shown(unit)} in {shown(text)}; allowed: {allowed}")
    exp = int(m.group("exp") or 0)  # at most _MAX_TEXT digits: always readable
    digits = len(m.group("num").replace(".", "").lstrip("0"))
    if exp > 40 or digits + exp > 40:
        raise UnitError(f"{shown(text)} is too large for a {kind}")
    if exp < -40:
        raise UnitError(f"{shown(text)} is too small for a {kind}")
    try:
        num = Decimal(m.group("num")).scaleb(exp)
    except InvalidOperation as e:  # pragma: no cover - the regex admits only numbers
        raise UnitError(f"not a number in {shown(text)}") from e
    return num, units[unit]


def _exact(num: Decimal, scale: int, text: str, what: str) -> int:
    value = num * scale
    if value != value.to_integral_value():
        raise UnitError(f"{shown(text)} is not a whole number of {what}")
    if value > MAX_VALUE:
        raise UnitError(f"{shown(text)} is too large: at most {MAX_VALUE} {what}")
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
                raise UnitError(f"a packet count must be a whole number, got {shown(text)}")
            if len(m.group("num")) > 18:
                raise UnitError(f"a packet count of at most 18 digits, got {shown(text)}")
            return {"bytes": None, "packets": int(m.group("num"))}
    try:
        return {"bytes": parse_size(text), "packets": None}
    except UnitError as e:
        raise UnitError(
            f"expected a limit such as '64KB', '64KiB', '42pkt', 'unlimited' or 'off', "
            f"got {shown(text)}"
        ) from e


def parse_rate_cap(text: object) -> dict[str, float | int | None] | None:
    """A cap on a host's egress: ``"80%"`` of its link, a rate (``"800Mbps"``), or ``"off"``."""
    if text in ("off", "none"):
        return None
    if isinstance(text, str) and text.strip().endswith("%"):
        num = text.strip()[:-1].strip()
        try:
            share = float(num)
        except ValueError:
            share = float("nan")
        if not math.isfinite(share) or not 0 < share <= 100:
            raise UnitError(f"expected a share of the link in (0%, 100%], got {shown(text)}")
        return {"share": share / 100, "bps": None}
    try:
        return {"share": None, "bps": parse_rate(text)}
    except UnitError as e:
        raise UnitError(
            f"expected a share of the link ('80%'), a rate ('800Mbps') or 'off', got {shown(text)}"
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
