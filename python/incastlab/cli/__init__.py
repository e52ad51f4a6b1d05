"""The ``incast`` command: the parser assembled from one module per command group, and the
one place where errors become exit codes.

Each command module is light to import (argparse and these modules only); a command imports
what it needs (numpy, pyarrow, pandas, matplotlib, rich) when it runs, so ``incast --help``
answers at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.backends import BackendFailed, BackendUnavailable, UnknownBackend
from incastlab.cli import (
    jobs,
    model,
    monitor,
    plot,
    real,
    reproduce,
    scenario,
    sim,
    studies,
    sweep,
    trace,
    validate,
)
from incastlab.cli.common import Parser, UsageError, print_error
from incastlab.parallel import WorkerDied

if TYPE_CHECKING:
    from rich.console import Console

#: Subcommands with parsers of their own, read before the main parser.
NESTED: dict[tuple[str, str], Callable[[Sequence[str], Console, Console], int]] = {
    ("model", "calibrate"): model.cmd_calibrate,
    ("model", "rto-random"): model.cmd_rto_random,
}


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="incast",
        description="incastlab: predict, simulate and measure TCP incast.",
    )
    p.add_argument("--version", action="version", version=f"incastlab {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for add in (
        sim.add_sim_parser,
        scenario.add_scenario_parser,
        model.add_model_parser,
        studies.add_mitigate_parser,
        real.add_emulate_parser,
        studies.add_compare_parser,
        validate.add_validate_parser,
        sweep.add_sweep_parser,
        sweep.add_results_parser,
        plot.add_plot_parser,
        plot.add_report_parser,
        reproduce.add_reproduce_parser,
        jobs.add_jobs_parser,
        real.add_serve_parser,
        real.add_bench_parser,
        trace.add_pcap_parser,
        monitor.add_monitor_parser,
    ):
        add(sub)
    return p


def _consoles() -> tuple[Console, Console]:
    from rich.console import Console

    out = Console(highlight=False)
    if not out.is_terminal:
        out = Console(highlight=False, width=100)
    return out, Console(stderr=True, highlight=False)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    nested = NESTED.get((args[0], args[1])) if len(args) >= 2 else None
    if nested is None:
        parser = build_parser()
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
    # machinery for every `incast --help`.
    if name == "parse_senders":
        from incastlab.series import parse_senders

        return parse_senders
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
