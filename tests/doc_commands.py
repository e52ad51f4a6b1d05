"""The `incast` commands the documentation shows a reader, extracted from where they are written:
the README's and the docs pages' shell blocks, and every ``--help`` epilog of the parser tree.
tests/test_documented_commands.py runs them.

A command is named by where it is written (``docs/sweeps.md:12``, ``incast sim --help:3``), so a
failing one says which text to fix.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: A fenced shell block, at any indentation (admonitions and list items indent theirs).
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?:sh|bash|console|shell)\s*$")


@dataclass(frozen=True)
class Command:
    """One documented command line."""

    where: str  # "docs/sweeps.md:12" or "incast sim --help:3"
    text: str  # the command as written, continuations joined, comment dropped
    argv: tuple[str, ...]  # the arguments after `incast`
    sudo: bool  # written with sudo: it needs root (real TCP in network namespaces)
    stdout: str | None = None  # the file `> FILE` sends the output to
    pipe: tuple[str, ...] = ()  # the command `| ...` gives the output to

    @property
    def command(self) -> str:
        """The command (and subcommand of a group) it runs: "sim", "jobs swim"."""
        words = [a for a in self.argv[:2] if not a.startswith("-")]
        group = {"jobs", "validate", "model"}
        if len(words) == 2 and words[0] in group and re.fullmatch(r"[a-z][a-z-]*", words[1]):
            return " ".join(words)
        return words[0] if words else ""


def _commands_of_line(where: str, line: str) -> Iterator[Command]:
    """The `incast` commands of one shell line (`a && b` gives both); nothing for other tools."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote: not a shell line
        return
    parts: list[list[str]] = [[]]
    for w in words:
        if w in ("&&", ";", "||"):
            parts.append([])
        else:
            parts[-1].append(w)
    n = 0
    for part in parts:
        sudo = bool(part) and part[0] == "sudo"
        if sudo:
            part = part[1:]
        if not part or part[0] != "incast":
            continue
        n += 1
        text = " ".join(["sudo", *part] if sudo else part)
        stdout, pipe = None, ()
        if "|" in part:
            part, pipe = part[: part.index("|")], tuple(part[part.index("|") + 1 :])
        if ">" in part:
            part, stdout = part[: part.index(">")], part[part.index(">") + 1]
        # A second command on one line (`incast sim ... && incast pcap run.pcap`) is its own.
        yield Command(
            where if n == 1 else f"{where}+{n}", text, tuple(part[1:]), sudo, stdout, pipe
        )


def from_markdown(path: Path) -> list[Command]:
    """The `incast` lines of a page's shell blocks, backslash continuations joined, each named
    by the page and the line it starts on."""
    rel = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Command] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        i += 1
        if not m:
            continue
        indent = m.group("indent")
        while i < len(lines) and lines[i].strip() != "```":
            start = i
            line = lines[i].removeprefix(indent)
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            out.extend(_commands_of_line(f"{rel}:{start + 1}", line.removeprefix("$ ")))
            i += 1
        i += 1
    return out


def from_comments(path: Path) -> list[Command]:
    """The `incast` lines of a TOML file's comments (an example says how to run it)."""
    rel = path.relative_to(ROOT).as_posix()
    out: list[Command] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("#"):
            out.extend(_commands_of_line(f"{rel}:{n}", line.lstrip("#").strip()))
    return out


def documented_pages() -> list[Path]:
    """The README and every written page of the docs (the recorded real-TCP data aside)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in pages if "real" not in p.relative_to(ROOT).parts]


def help_parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the `incast` tree, named as its help is asked for: the main parser, each
    command, each command of a group (`incast jobs swim`) and the nested ones
    (`incast model calibrate`), which have parsers of their own."""
    from incastlab.cli import build_parser
    from incastlab.cli import model as model_cli

    def walk(
        name: str, parser: argparse.ArgumentParser
    ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, p in action.choices.items():
                    yield from walk(f"{name} {sub}", p)

    yield from walk("incast", build_parser())
    yield "incast model calibrate", model_cli.build_calibrate_parser()
    yield "incast model rto-random", model_cli.build_rto_random_parser()


def from_help() -> list[Command]:
    """The example lines of every ``--help`` epilog, named by the help and the line in it."""
    out: list[Command] = []
    for name, parser in help_parsers():
        for n, line in enumerate((parser.epilog or "").splitlines(), start=1):
            out.extend(_commands_of_line(f"{name} --help:{n}", line.strip()))
    return out


def documented_commands() -> list[Command]:
    """Every documented command: the pages' in reading order, the helps', the examples'."""
    pages = [c for page in documented_pages() for c in from_markdown(page)]
    examples = [c for f in sorted((ROOT / "examples").glob("*.toml")) for c in from_comments(f)]
    return pages + from_help() + examples


def stray_lines() -> list[str]:
    """Lines of the pages that start with `incast` outside a shell block (an indented code
    block, say): commands this extraction would miss, so the test asks for a fence."""
    out: list[str] = []
    for page in documented_pages():
        fenced = False
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip().startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"\s*(\$ )?(sudo )?incast \S", line):
                out.append(f"{page.relative_to(ROOT).as_posix()}:{n}: {line.strip()}")
    return out
