"""What every `incast` subcommand shares: the usage error (exit code 2), unit-string flags,
the table style, progress bars and the backend check.

Light on purpose: the parser is built from the cli modules before any command runs, so rich
and everything heavy are imported inside the functions that draw.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from incastlab.units import UnitError, parse_size, parse_time, shown

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table

    from incastlab.backends import Backend, ProgressFn


class UsageError(Exception):
    """Bad command-line input: exit code 2."""


#: Longest error message printed: the field and what is allowed fit well within it.
MAX_MESSAGE = 600


def one_line(message: str) -> str:
    """A message as the one line a command ends with: newlines folded, overlong text cut."""
    text = " ".join(message.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


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


#: A value that starts like a negative number (``-64KB``, ``-3``, ``-.5s``), which argparse would
#: otherwise take for a flag ("expected one argument").
_NEGATIVE = re.compile(r"-\s*[0-9.]")
#: Where a subcommand's parser leaves itself when it met flags it does not know.
_UNKNOWN_FROM = "_incast_unknown_from"


class Parser(argparse.ArgumentParser):
    """argparse with its usage errors in one line (the usage stays in ``--help``), values
    echoed cut short, "did you mean" for an unknown flag, and ``--flag -VALUE`` read as the
    flag's (negative) value, which the flag's type then names. Every subcommand's parser is
    one (argparse builds subparsers with the parent's class)."""

    def error(self, message: str) -> NoReturn:
        # "argument --buffer: ..." -> "--buffer: ...": the flag first, as in every other error.
        message = re.sub(r"^argument ([^ :]+): ", r"\1: ", message)
        sys.stderr.write(f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")
        raise SystemExit(2)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        argv = list(sys.argv[1:] if args is None else args)
        ns, extras = super().parse_known_args(self._values_joined(argv), namespace)
        if extras and getattr(ns, _UNKNOWN_FROM, None) is None:
            setattr(ns, _UNKNOWN_FROM, self)  # the innermost parser that met them
        return ns, extras

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        where = vars(ns).pop(_UNKNOWN_FROM, None) or self
        if extras:
            where.unknown(extras)
        return ns

    def _value_flag(self, token: str) -> argparse.Action | None:
        """The flag ``token`` names if it takes one value (exactly, or as the one long flag
        it abbreviates)."""
        if not token.startswith("--") or "=" in token:
            return None
        action = self._option_string_actions.get(token)
        if action is None and self.allow_abbrev:
            found = {a for s, a in self._option_string_actions.items() if s.startswith(token)}
            action = found.pop() if len(found) == 1 else None
        return action if action is not None and action.nargs is None else None

    def _values_joined(self, argv: list[str]) -> list[str]:
        """``--flag -VALUE`` as ``--flag=-VALUE`` when the flag takes a value and ``-VALUE``
        starts like a negative number and is no flag here: the flag's type then says what is
        wrong with it, instead of argparse's "expected one argument"."""
        out: list[str] = []
        i = 0
        while i < len(argv):
            token = argv[i]
            if token == "--":
                out += argv[i:]
                break
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if (
                nxt is not None
                and _NEGATIVE.match(nxt)
                and nxt not in self._option_string_actions
                and self._value_flag(token) is not None
            ):
                out.append(f"{token}={nxt}")
                i += 2
                continue
            out.append(token)
            i += 1
        return out

    def suggestion(self, flag: str) -> str:
        """`` (did you mean --rto-min?)`` for ``--rto_min`` or ``--bufer``, else ``""``."""
        # Compared without the leading dashes, which every flag shares.
        longs = [s[2:] for s in self._option_string_actions if s.startswith("--")]
        name = flag.lstrip("-").replace("_", "-").lower()
        close = [name] if name in longs else []
        if not close and len(name) < 100:
            close = difflib.get_close_matches(name, longs, n=1, cutoff=0.6)
        return f" (did you mean --{close[0]}?)" if close else ""

    def unknown(self, extras: list[str]) -> NoReturn:
        """The usage error for arguments no flag or positional took: the first unknown flag
        named, with the closest known one."""
        flags = [t for t in extras if t.startswith("-") and t != "-" and not _NEGATIVE.match(t)]
        if not flags:
            self.error(f"unrecognized arguments: {' '.join(shown(t) for t in extras)}")
        flag = flags[0].split("=", 1)[0]
        more = f" (and {len(flags) - 1} more)" if len(flags) > 1 else ""
        self.error(f"unknown flag {shown(flag)[1:-1]}{self.suggestion(flag)}{more}")


#: What each kind of unit value is, for a message saying what is allowed.
ALLOWED = {
    "size": "a size such as 64KB or 64KiB",
    "sizes": "a size such as 64KB, or several: 16KB,64KB",
    "limit": "a size such as 64KB or 64KiB, a packet count such as 42pkt, or unlimited",
    "rate": "a rate such as 1Gbps or 100Mbps",
    "time": "a time such as 200ms or 100us",
    "time_or_off": "a time such as 40ms, or off",
    "senders": "sender counts such as 1,2,4 or 1..48 or 4..64:4",
}


def _unit_parsers() -> dict[str, Callable[[str], object]]:
    from incastlab.units import parse_queue_limit, parse_rate

    def sizes(text: str) -> None:
        for part in text.split(","):
            if _NEGATIVE.match(part.strip()):
                raise UnitError(f"{shown(part.strip())} in {shown(text)} is negative")
            parse_size(part.strip())

    def time_or_off(text: str) -> object:
        return None if text == "off" else parse_time(text)

    return {
        "size": parse_size,
        "sizes": sizes,
        "limit": parse_queue_limit,
        "rate": parse_rate,
        "time": parse_time,
        "time_or_off": time_or_off,
    }


def unit_problem(kind: str, value: str) -> str | None:
    """What is wrong with ``value`` as a ``kind`` (see :data:`ALLOWED`): negative, malformed
    or out of range, and what is allowed; ``None`` if nothing."""
    allowed = ALLOWED[kind]
    text = value.strip()
    if _NEGATIVE.match(text):
        return f"{shown(value)} is negative; {allowed}"
    if kind == "senders":
        return None  # read by incastlab.series.parse_senders, whose errors name --senders
    try:
        _unit_parsers()[kind](text)
    except UnitError as e:
        why = str(e)
        if why.startswith("expected"):
            return f"{shown(value)} is malformed; {allowed}"
        return f"{why}; {allowed}"
    return None


def unit_value(kind: str) -> Callable[[str], str]:
    """An argparse type for a unit-string flag (``kind`` as in :data:`ALLOWED`): the value as
    given, once it reads as one; otherwise a usage error saying it is negative or malformed
    and what is allowed."""

    def parse(value: str) -> str:
        problem = unit_problem(kind, value)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value

    parse.__name__ = kind
    return parse


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
    err: Console, verb: str, total: int, show: bool, *, ticks: bool = False
) -> Iterator[BarTracker]:
    """A tracker for ``total`` runs on a transient progress bar."""
    with progress_bar(err, verb, show) as bar:
        yield BarTracker(bar, bar.add_task("", total=total), ticks)
