"""The ``incast`` command: the parser assembled from one module per command group, and the
one place where errors become exit codes.

Each command module is light to import (argparse and these modules only); a command imports
what it needs (numpy, pyarrow, pandas, matplotlib) when it runs, so ``incast --help`` answers
at once. A run of one command imports that command's module and builds its parser alone (the
others' flags cost as much to build as a small simulation to run), and rich only once there is
something to print.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from incastlab import _core
from incastlab.backends import BackendFailed, BackendUnavailable, UnknownBackend
from incastlab.cli.common import Parser, UsageError, print_error
from incastlab.parallel import WorkerDied

if TYPE_CHECKING:
    from rich.console import Console

#: Each command: the module of ``incastlab.cli`` and its function that adds the command's
#: parser, in the order ``incast --help`` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "sim": ("sim", "add_sim_parser"),
    "scenario": ("scenario", "add_scenario_parser"),
    "model": ("model", "add_model_parser"),
    "mitigate": ("studies", "add_mitigate_parser"),
    "emulate": ("real", "add_emulate_parser"),
    "compare": ("studies", "add_compare_parser"),
    "validate": ("validate", "add_validate_parser"),
    "sweep": ("sweep", "add_sweep_parser"),
    "results": ("sweep", "add_results_parser"),
    "plot": ("plot", "add_plot_parser"),
    "report": ("plot", "add_report_parser"),
    "reproduce": ("reproduce", "add_reproduce_parser"),
    "jobs": ("jobs", "add_jobs_parser"),
    "serve": ("real", "add_serve_parser"),
    "bench": ("real", "add_bench_parser"),
    "pcap": ("trace", "add_pcap_parser"),
    "doctor": ("doctor", "add_doctor_parser"),
    "monitor": ("monitor", "add_monitor_parser"),
}

#: Subcommands with parsers of their own, read before the main parser: their module and
#: function.
NESTED: dict[tuple[str, str], tuple[str, str]] = {
    ("model", "calibrate"): ("model", "cmd_calibrate"),
    ("model", "rto-random"): ("model", "cmd_rto_random"),
}


def _function(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f"incastlab.cli.{module}"), name)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone (all a run of it reads)."""
    p = Parser(
        prog="incast",
        description="incastlab: predict, simulate and measure TCP incast.",
    )
    p.add_argument("--version", action="version", version=f"incastlab {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, add) in COMMANDS.items():
        if command is None or name == command:
            _function(module, add)(sub)
    return p


class _LazyConsole:
    """A rich ``Console`` made on first use: importing rich costs about as much as starting
    Python, and ``incast sim --json`` may never print through one."""

    def __init__(self, make: Callable[[], Console]) -> None:
        self._make = make
        self._console: Console | None = None

    def real(self) -> Console:
        if self._console is None:
            self._console = self._make()
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)

    # Special methods are looked up on the type, not through __getattr__: rich's Live enters
    # its console (`with self.console:`) to hold its render lock.
    def __enter__(self) -> Console:
        return self.real().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.real().__exit__(*exc)


def _out() -> Console:
    from rich.console import Console

    out = Console(highlight=False)
    return out if out.is_terminal else Console(highlight=False, width=100)


def _err() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _consoles() -> tuple[Console, Console]:
    return cast("Console", _LazyConsole(_out)), cast("Console", _LazyConsole(_err))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    sub = NESTED.get((args[0], args[1])) if len(args) >= 2 else None
    nested: Callable[[Sequence[str], Console, Console], int] | None = (
        _function(*sub) if sub else None
    )
    if nested is None:
        parser = build_parser(args[0] if args and args[0] in COMMANDS else None)
        try:
            a = parser.parse_args(args)
        except SystemExit as e:  # --help, --version, or a usage error already printed
            return e.code if isinstance(e.code, int) else 2
        if a.command is None:
            parser.print_help()
            return 2
    out, err = _consoles()
    try:
        if nested is not None:
            try:
                return nested(args[2:], out, err)
            except SystemExit as e:  # the nested parser's --help or usage error
                return e.code if isinstance(e.code, int) else 2
        handler: Callable[[argparse.Namespace, Console, Console], int] = a.handler
        return handler(a, out, err)
    except (
        _core.ScenarioError,
        _core.TraceError,
        UsageError,
        UnknownBackend,
        BackendUnavailable,
    ) as e:
        print_error(err, "incast: error:", e)
        return 2
    except _core.SimulationError as e:
        print_error(err, "incast: simulation stopped:", e)
        return 1
    except BackendFailed as e:
        print_error(err, f"incast: {e.what} failed:", e)
        return 1
    except WorkerDied as e:
        print_error(err, "incast: error:", e)
        return 1
    except BrokenPipeError:
        # The reader went away (`incast results ... --csv - | head`): nothing to say, and
        # nothing for Python's final flush of stdout to fail on (the documented recipe).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        # The machine refused a read or a write (a full disk, a vanished directory): one
        # line, exit 1. Inputs and outputs named by flags are checked before this.
        where = f"{e.filename}: " if e.filename else ""
        print_error(err, "incast: error:", f"{where}{e.strerror or e}")
        return 1
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]")
        return 130


def __getattr__(name: str) -> Any:
    # `from incastlab.cli import parse_senders` kept working, without importing the scenario
    # machinery for every `incast --help`; a command's module is imported when first named.
    if name == "parse_senders":
        from incastlab.series import parse_senders

        return parse_senders
    if name in {module for module, _ in COMMANDS.values()}:
        return importlib.import_module(f"incastlab.cli.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
