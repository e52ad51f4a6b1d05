"""`incast reproduce`: the papers' experiments (:mod:`incastlab.reproductions`)."""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import UsageError, add_workers_flag, out_dir, plain, tracking
from incastlab.cli.json_text import print_json

if TYPE_CHECKING:
    from rich.console import Console


def add_reproduce_parser(sub: Any) -> None:
    x = sub.add_parser(
        "reproduce",
        help="reproduce a paper's experiment: run its sweeps, draw its figure, compare",
        description="Run an experiment of the papers (experiments/NAME: its sweep specs and the "
        "paper's numbers), draw its figure and write a verdict comparing incastlab's numbers "
        "with the paper's. Results are stored per sweep, so a rerun resumes.",
        epilog="examples:\n  incast reproduce --list\n  incast reproduce chen-fig3\n"
        "  incast reproduce --all --out reproductions\n"
        "  incast reproduce hadoop-jobs\n"
        "  incast reproduce fb2009-replay --trace FB-2009_samples_24_times_1hr_0.tsv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    x.add_argument("names", nargs="*", metavar="NAME", help="experiments to reproduce")
    x.add_argument("--list", action="store_true", help="list the experiments")
    x.add_argument("--all", action="store_true", help="reproduce every experiment")
    x.add_argument(
        "--out", type=out_dir, default="reproductions", metavar="DIR", help="(default: %(default)s)"
    )
    add_workers_flag(x)
    x.add_argument(
        "--update-expected",
        action="store_true",
        help="also copy the figures and verdict into experiments/NAME/expected/",
    )
    x.add_argument(
        "--trace",
        metavar="FILE.tsv",
        help="SWIM trace to replay (fb2009-replay; default: the small generated trace shipped "
        "with incastlab)",
    )
    x.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    x.set_defaults(handler=cmd_reproduce)


def cmd_reproduce(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.parallel import Interrupted
    from incastlab.reproductions.reproduce import experiments, reproduce

    exps = experiments(awaiting=True)  # an awaiting one runs when named, not with --all
    if a.list:
        from incastlab.cli.render import print_experiments

        print_experiments(out, exps)
        return 0
    names = [n for n, e in exps.items() if not e.awaiting] if a.all else a.names
    if not names:
        raise UsageError("name an experiment (incast reproduce --list), or give --all")
    for n in names:
        if n not in exps:
            raise UsageError(f"unknown experiment {n!r}; known: {', '.join(exps)}")
    if a.trace is not None:
        if not any(exps[n].meta.get("takes_trace") for n in names):
            takers = [n for n, e in exps.items() if e.meta.get("takes_trace")]
            raise UsageError(f"--trace: only for {', '.join(takers)}")
        from incastlab.jobs.swim import TraceError, load

        try:
            load(a.trace)  # one clear line now, not after the other experiments ran
        except TraceError as e:
            raise UsageError(f"--trace: {e}") from None
    total = sum(exps[n].point_count() for n in names)
    reports = []
    try:
        with tracking(err, "reproducing", total, not a.json) as tracker:
            for n in names:
                rep = reproduce(
                    n,
                    a.out,
                    workers=a.workers,
                    update_expected=a.update_expected,
                    tracker=tracker,
                    trace=a.trace if exps[n].meta.get("takes_trace") else None,
                )
                reports.append(rep)
                if not a.json:
                    from incastlab.cli.render import print_reproduction

                    print_reproduction(out, rep)
    except Interrupted:
        done = [r.experiment.name for r in reports]
        again = ["incast", "reproduce", *[n for n in names if n not in done], "--out", a.out]
        err.print(
            "[yellow]interrupted:[/yellow] every finished point is stored under "
            f"{plain(a.out)}; `{plain(shlex.join(again))}` resumes from them",
            soft_wrap=True,
        )
        if a.json and reports:
            print_json([r.to_json() for r in reports])
        return 130
    if a.json:
        print_json([r.to_json() for r in reports])
    return 0
