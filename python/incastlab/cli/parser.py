"""How every ``incast`` command reads its command line: one-line usage errors, "did you
mean" for an unknown flag, ``--flag -VALUE`` read as a (negative) value, and the argparse type
of unit-string flags, which says a value is negative or malformed and what is allowed.

:class:`Parser` is the class of the main parser, of every subcommand's (argparse builds
subparsers with the parent's class) and of the nested ``model calibrate`` and
``model rto-random`` parsers, so this behaviour has this one place.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from incastlab.units import UnitError, parse_size, parse_time, shown

#: Longest error message printed: the field and what is allowed fit well within it.
MAX_MESSAGE = 600


def one_line(message: str) -> str:
    """A message as the one line a command ends with: newlines folded, overlong text cut."""
    text = " ".join(message.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


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
