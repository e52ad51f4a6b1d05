"""What every `incast` subcommand shares: the usage error (exit code 2), unit-string flags,
the table style, progress bars and the backend check.

Light on purpose: the parser is built from the cli modules before any command runs, so rich
and everything heavy are imported inside the functions that draw.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from incastlab.units import UnitError, parse_size, parse_time

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table

    from incastlab.backends import Backend, ProgressFn


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


def table() -> Table:
    """The compact table every command prints."""
    from rich.table import Table

    return Table(header_style="bold", show_edge=False, pad_edge=False)


def pct_cell(fraction: float) -> str:
    """A share of the link, red below 40%, yellow below 70%."""
    pct = 100 * fraction
    style = "red" if pct < 40 else ("yellow" if pct < 70 else "green")
    return f"[{style}]{pct:.1f}%[/{style}]"


def backend(name: str, **options: Any) -> Backend:
    """The backend ``name``, checked to run here; a usage error naming what is missing."""
    from incastlab import backends

    b = backends.get(name, **options)
    try:
        b.check()
    except backends.BackendUnavailable as e:
        raise UsageError(str(e)) from None
    return b


@contextmanager
def progress_bar(err: Console, verb: str, show: bool) -> Iterator[Progress]:
    """A transient progress bar on stderr, shown only to a person at a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(f"[bold]{verb}[/bold] {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not (show and err.is_terminal),
        transient=True,
    ) as bar:
        yield bar


@dataclass
class BarTracker:
    """A :class:`~incastlab.series.Tracker` drawing on a progress bar."""

    bar: Progress
    task: TaskID
    ticks: bool = False

    def start(self, what: str) -> ProgressFn | None:
        self.bar.update(self.task, description=what)
        if not self.ticks:
            return None

        def tick(events: int, secs: float) -> None:
            self.bar.update(self.task, description=f"{what} · {events:,} events · t={secs:.3f}s")

        return tick

    def done(self, runs: int = 1) -> None:
        self.bar.advance(self.task, runs)


@contextmanager
def tracking(
    err: Console, verb: str, total: int, show: bool, *, ticks: bool = False
) -> Iterator[BarTracker]:
    """A tracker for ``total`` runs on a transient progress bar."""
    with progress_bar(err, verb, show) as bar:
        yield BarTracker(bar, bar.add_task("", total=total), ticks)
