"""What every `incast` subcommand shares: the usage error (exit code 2), unit-string flags,
SIGTERM handling and the table style."""

from __future__ import annotations

import signal

from rich.table import Table

from incastlab.units import UnitError, parse_size, parse_time


class UsageError(Exception):
    """Bad command-line input: exit code 2."""


def size_arg(flag: str, value: str | None) -> int | None:
    """A size flag (``"64KB"``) in bytes, or ``None`` if not given."""
    if value is None:
        return None
    try:
        return parse_size(value)
    except UnitError as e:
        raise UsageError(f"{flag}: {e}") from None


def seconds_arg(flag: str, value: str) -> float:
    """A time flag (``"200ms"``) in seconds."""
    try:
        return parse_time(value) / 1e12
    except UnitError as e:
        raise UsageError(f"{flag}: {e}") from None


def sigterm_as_interrupt() -> None:
    """Let SIGTERM stop a command the way Ctrl-C does (through KeyboardInterrupt)."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def table() -> Table:
    """The compact table every command prints."""
    return Table(header_style="bold", show_edge=False, pad_edge=False)


def require_emulation() -> None:
    """Stop with a usage error naming what emulation needs here (root, iproute2...)."""
    from incastlab.real.emulate import EmulationError, check_can_emulate

    try:
        check_can_emulate()
    except EmulationError as e:
        raise UsageError(str(e)) from None
