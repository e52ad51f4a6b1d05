"""`incast jobs`: the job-level workloads of :mod:`incastlab.jobs` (SWIM traces)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import out_file, seconds, whole, writing

if TYPE_CHECKING:
    from rich.console import Console

SWIM_EXAMPLES = """\
examples:
  incast jobs swim --jobs 500 --seed 7 --out day.tsv
  incast reproduce fb2009-replay --trace day.tsv
  incast jobs swim --out python/incastlab/jobs/swim-small.tsv   # the shipped trace, again
"""


def add_jobs_parser(sub: Any) -> None:
    j = sub.add_parser(
        "jobs",
        help="job-level workloads: write a SWIM job trace",
        description="The MapReduce job model's inputs. `incast reproduce hadoop-jobs` and "
        "`incast reproduce fb2009-replay` run the model itself.",
        epilog="example:\n  incast jobs swim --out day.tsv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    jobs = j.add_subparsers(dest="jobs_command", metavar="COMMAND")
    s = jobs.add_parser(
        "swim",
        help="write a SWIM trace drawn from a seeded sampler shaped like FB-2009",
        description="Write a SWIM-format job trace (tab-separated: job, submit time, gap, map "
        "input, shuffle and reduce output bytes, at the 600-machine scale of FB-2009) drawn "
        "from a seeded sampler: exponential submission gaps and log-normal sizes in three "
        "classes. Same seed, same bytes; with no flags, the trace shipped with incastlab "
        "(fb2009-replay's default).",
        epilog=SWIM_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # No defaults here: the generator's own are the shipped trace's.
    s.add_argument(
        "--jobs", type=whole(1, 10**6), metavar="N", help="jobs (default: the shipped trace's)"
    )
    s.add_argument(
        "--seed", type=whole(0, 2**32), help="the sampler's seed (default: the shipped trace's)"
    )
    s.add_argument(
        "--mean-gap",
        type=seconds(0.001, 86400),
        metavar="SECONDS",
        help="mean time between submissions (default: the shipped trace's, FB-2009's)",
    )
    s.add_argument(
        "-o",
        "--out",
        type=out_file(".tsv"),
        metavar="FILE.tsv",
        help="write the trace here (default: standard output)",
    )
    s.set_defaults(handler=cmd_swim)

    def usage(a: argparse.Namespace, out: Console, err: Console) -> int:
        j.print_help()
        return 2

    j.set_defaults(handler=usage)


def cmd_swim(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.jobs.swim import generate

    given = {"jobs": a.jobs, "seed": a.seed, "mean_gap_s": a.mean_gap}
    text = generate(**{k: v for k, v in given.items() if v is not None})
    if a.out is None:
        print(text, end="")
        return 0
    with writing("--out", a.out):
        Path(a.out).write_text(text, encoding="utf-8")
    err.print(f"wrote {a.out}")
    return 0
