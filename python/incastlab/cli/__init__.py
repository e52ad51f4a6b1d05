"""The ``incast`` command: the parser assembled from one module per command group, and the
one place where errors become exit codes.

Each command module is light to import (argparse and these modules only); a command imports
what it needs (numpy, pyarrow, pandas, matplotlib, rich) when it runs, so ``incast --help``
answers at once.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from incastlab import _core
from incastlab.backends import BackendFailed, BackendUnavailable, UnknownBackend
from incastlab.cli import model, monitor, real, sim, studies, sweep, trace, validate
from incastlab.cli.common import UsageError

if TYPE_CHECKING:
    from rich.console import Console

#: Subcommands with parsers of their own, read before the main parser.
NESTED: dict[tuple[str, str], Callable[[Sequence[str], Console, Console], int]] = {
    ("model", "calibrate"): model.cmd_calibrate,
    ("model", "rto-random"): model.cmd_rto_random,
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="incast",
        description="incastlab: predict, simulate and measure TCP incast.",
    )
    p.add_argument("--version", action="version", version=f"incastlab {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for add in (
        sim.add_sim_parser,
        model.add_model_parser,
        studies.add_mitigate_parser,
        real.add_emulate_parser,
        studies.add_compare_parser,
        validate.add_validate_parser,
        sweep.add_sweep_parser,
        sweep.add_results_parser,
        sweep.add_plot_parser,
        sweep.add_report_parser,
        studies.add_reproduce_parser,
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
        out = Console(highlight=False, width=140)
    return out, Console(stderr=True, highlight=False)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    nested = NESTED.get((args[0], args[1])) if len(args) >= 2 else None
    if nested is None:
        parser = build_parser()
        a = parser.parse_args(args)
        if a.command is None:
            parser.print_help()
            return 2
    out, err = _consoles()
    try:
        if nested is not None:
            return nested(args[2:], out, err)
        handler: Callable[[argparse.Namespace, Console, Console], int] = a.handler
        return handler(a, out, err)
    except (
        _core.ScenarioError,
        _core.TraceError,
        UsageError,
        UnknownBackend,
        BackendUnavailable,
    ) as e:
        err.print(f"[bold red]incast: error:[/bold red] {e}", soft_wrap=True)
        return 2
    except _core.SimulationError as e:
        err.print(f"[bold red]incast: simulation stopped:[/bold red] {e}", soft_wrap=True)
        return 1
    except BackendFailed as e:
        err.print(f"[bold red]incast: {e.what} failed:[/bold red] {e}", soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]")
        return 130
    except BrokenPipeError:
        return 0


def __getattr__(name: str) -> Any:
    # `from incastlab.cli import parse_senders` kept working, without importing the scenario
    # machinery for every `incast --help`.
    if name == "parse_senders":
        from incastlab.series import parse_senders

        return parse_senders
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
