"""What every `incast` subcommand shares: the usage error (exit code 2), unit-string flags,
the table style, progress bars and the backend check. The parser class and the unit-flag type
live in :mod:`incastlab.cli.parser` (imported here too).

Light on purpose: the parser is built from the cli modules before any command runs, so rich
and everything heavy are imported inside the functions that draw.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.cli.parser import MAX_MESSAGE as MAX_MESSAGE
from incastlab.cli.parser import Parser as Parser
from incastlab.cli.parser import one_line as one_line
from incastlab.cli.parser import unit_problem as unit_problem
from incastlab.cli.parser import unit_value as unit_value
from incastlab.units import UnitError, parse_size, parse_time, shown

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table

    from incastlab.backends import Backend, ProgressFn


class UsageError(Exception):
    """Bad command-line input: exit code 2."""


def plain(text: object) -> str:
    """``text`` as rich prints it literally: square brackets are not markup."""
    from rich.markup import escape

    return escape(str(text))


def print_error(err: Console, label: str, message: object) -> None:
    """``label message`` on stderr in one line; the message is text, never markup (so
    ``incastlab[cluster]`` prints as written)."""
    from rich.markup import escape

    err.print(
        f"[bold red]{escape(label)}[/bold red] {escape(one_line(str(message)))}", soft_wrap=True
    )


def whole(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ``lo..hi`` written in ASCII digits."""

    def parse(text: str) -> int:
        t = text.strip()
        digits = t[1:] if t[:1] in "+-" else t
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 18:
            raise argparse.ArgumentTypeError(
                f"{shown(text)} is malformed; a whole number {lo}..{hi}"
            )
        n = int(t)
        if n < 0 <= lo:
            raise argparse.ArgumentTypeError(f"{n} is negative; a whole number {lo}..{hi}")
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"expected a whole number {lo}..{hi}, got {n}")
        return n

    parse.__name__ = "whole number"
    return parse


def fraction(lo: float, hi: float, what: str = "a number") -> Callable[[str], float]:
    """An argparse type: a finite number in ``[lo, hi]``."""

    def parse(text: str) -> float:
        try:
            x = float(text) if len(text) < 40 else math.nan
        except ValueError:
            x = math.nan
        if math.isfinite(x) and x < 0 <= lo:
            raise argparse.ArgumentTypeError(f"{shown(text)} is negative; {what} in {lo:g}..{hi:g}")
        if not (math.isfinite(x) and lo <= x <= hi):
            raise argparse.ArgumentTypeError(
                f"expected {what} in {lo:g}..{hi:g}, got {shown(text)}"
            )
        return x

    parse.__name__ = what
    return parse


def seconds(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds in ``[lo, hi]``."""
    return fraction(lo, hi, "seconds")


#: What a figure may be written as.
FIGURE = (".png", ".pdf", ".svg")


def out_file(*suffixes: str) -> Callable[[str], str]:
    """An argparse type: an output file checked before any work is done: named with one of
    ``suffixes``, in a directory that exists and can be written, not a directory itself."""

    def parse(value: str) -> str:
        bad = argparse.ArgumentTypeError
        p = Path(value)
        if p.suffix.lower() not in suffixes or len(value) > 4096 or "\0" in value:
            kinds = ", ".join(suffixes[:-1]) + (" or " if len(suffixes) > 1 else "") + suffixes[-1]
            raise bad(f"a {kinds} file, got {shown(value)}")
        if p.is_dir():
            raise bad(f"{shown(value)} is a directory")
        parent = p.parent
        if not parent.is_dir():
            raise bad(f"no directory {shown(str(parent))} to write {shown(p.name)} in")
        if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
            raise bad(f"{shown(value)} cannot be written (permission denied)")
        return value

    parse.__name__ = "output file"
    return parse


def out_dir(value: str) -> str:
    """An argparse type: a directory to write into (made if missing), not a file."""
    p = Path(value)
    if len(value) > 4096 or "\0" in value:
        raise argparse.ArgumentTypeError(f"not a directory name: {shown(value)}")
    if p.exists() and not p.is_dir():
        raise argparse.ArgumentTypeError(f"{shown(value)} is a file, not a directory")
    return value


@contextmanager
def writing(flag: str, path: object) -> Iterator[None]:
    """Turn a failed write of ``path`` (disk full, a device, permissions) into one line
    naming ``flag``."""
    try:
        yield
    except OSError as e:
        why = e.strerror or str(e)
        raise UsageError(f"{flag}: cannot write {shown(str(path))}: {why}") from None


def size_arg(flag: str, value: str | None) -> int | None:
    """A size flag (``"64KB"``) in bytes, or ``None`` if not given."""
    if value is None:
        return None
    problem = unit_problem("size", value)
    if problem:
        raise UsageError(f"{flag}: {problem}")
    try:
        return parse_size(value)
    except UnitError as e:
        raise UsageError(f"{flag}: {e}") from None


def seconds_arg(flag: str, value: str, most: float = 365 * 86400.0) -> float:
    """A time flag (``"200ms"``) in seconds, at most ``most`` (a year unless told)."""
    problem = unit_problem("time", value)
    if problem:
        raise UsageError(f"{flag}: {problem}")
    try:
        s = parse_time(value) / 1e12
    except UnitError as e:
        raise UsageError(f"{flag}: {e}") from None
    if s > most:
        raise UsageError(f"{flag}: at most {most:g}s, got {shown(value)}")
    return s


def add_workers_flag(p: argparse.ArgumentParser) -> None:
    """--workers: how many processes run independent points (the default: every core)."""
    p.add_argument(
        "--workers",
        type=whole(1, 1024),
        metavar="N",
        help="processes for independent points (default: every core)",
    )


def add_capture_args(p: argparse.ArgumentParser) -> None:
    """The capture to read and its receiver, as every command that reads a capture names
    them (pcap, doctor)."""
    p.add_argument("capture", metavar="FILE", help="a pcap or pcapng file")
    p.add_argument(
        "--receiver", metavar="IP", help="the receiver's IPv4 address (default: inferred)"
    )


def add_result_flags(p: argparse.ArgumentParser) -> None:
    """--json, --out and --plot of a command that runs one point per sender count (sim,
    emulate): the same names, types and help everywhere."""
    p.add_argument("--json", action="store_true", help="print a JSON array, one object per point")
    p.add_argument(
        "--out",
        type=out_file(".parquet"),
        metavar="FILE.parquet",
        help="write the results as Parquet",
    )
    p.add_argument(
        "--plot", type=out_file(*FIGURE), metavar="FILE.png", help="draw goodput versus senders"
    )


def table(title: str | None = None) -> Table:
    """The compact table every command prints: a rule under the header, two spaces between
    columns and none at the edges (an 80-column terminal holds ten numeric columns)."""
    from rich import box
    from rich.table import Table

    return Table(
        title=title,
        header_style="bold",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1),
        collapse_padding=True,
    )


def pct_cell(fraction: float, *, sign: bool = True) -> str:
    """A share of the link, red below 40%, yellow below 70%; without ``sign`` the number
    alone (the column's header says %)."""
    pct = 100 * fraction
    style = "red" if pct < 40 else ("yellow" if pct < 70 else "green")
    return f"[{style}]{pct:.1f}{'%' if sign else ''}[/{style}]"


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
def progress_bar(
    err: Console, verb: str, show: bool, *, failures: bool = False
) -> Iterator[Progress]:
    """The progress bar every long command shows on stderr, to a person at a terminal only:
    what runs, runs done of all, (with ``failures`` the task's ``failed`` field), time taken
    and the estimated time left. Transient: the table replaces it."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns: list[Any] = [
        TextColumn(f"[bold]{verb}[/bold] {{task.description}}"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
    ]
    if failures:
        columns.append(TextColumn("[red]{task.fields[failed]} failed"))
    columns += [TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
    with Progress(
        *columns,
        console=err,
        disable=not (show and err.is_terminal),
        transient=True,
    ) as bar:
        yield bar


class QuietTracker:
    """A :class:`~incastlab.series.Tracker` that shows nothing: no bar was asked for."""

    def start(self, what: str) -> ProgressFn | None:
        return None

    def done(self, runs: int = 1, what: str = "") -> None:
        return None


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

    def done(self, runs: int = 1, what: str = "") -> None:
        if what:
            self.bar.update(self.task, advance=runs, description=what)
        else:
            self.bar.advance(self.task, runs)


@contextmanager
def tracking(
    err: Console, verb: str, total: int | None, show: bool, *, ticks: bool = False
) -> Iterator[BarTracker | QuietTracker]:
    """A tracker for ``total`` runs (None: not known ahead) on a transient progress bar;
    without ``show`` one that draws nothing and imports nothing (``--json`` of a single run
    need not load rich)."""
    if not show:
        yield QuietTracker()
        return
    with progress_bar(err, verb, show) as bar:
        yield BarTracker(bar, bar.add_task("", total=total), ticks)
