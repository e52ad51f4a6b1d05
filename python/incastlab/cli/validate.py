"""`incast validate`: the simulator against real Linux TCP on the validation grid
(:mod:`incastlab.validation`), and its two other studies: `incast validate kv` (a key-value
store's incast) and `incast validate shuffle` (what RTOmin costs a MapReduce shuffle)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import UsageError, seconds, whole
from incastlab.cli.json_text import print_json

if TYPE_CHECKING:
    from rich.console import Console

    from incastlab.backends import Backend
    from incastlab.validation.shuffle_points import Kernel

EXAMPLES = """examples:
  sudo incast validate                                    # the full grid, into docs/validation
  sudo incast validate --quick --real-dir quick/real --out quick    # a smaller grid, apart
  sudo incast validate --real-only                        # only the kernel's runs (resumable)
  incast validate --skip-real --profiles classic,linux    # the stored kernel runs, re-simulated
  incast validate --skip-real --profiles classic,paced --profile-set paced:tcp.profile=linux
  sudo incast validate kv --seeds 1,2                     # a key-value store's incast
  incast validate shuffle --skip-real                     # a shuffle's RTOmin cost, re-simulated
"""

KV_EXAMPLES = """examples:
  sudo incast validate kv --out docs/validation/kv --seeds 1,2
  incast validate kv --skip-real --seeds 1,2              # the stored kernel runs, no root
"""

SHUFFLE_EXAMPLES = """examples:
  sudo incast validate shuffle --out docs/validation/shuffle
  incast validate shuffle --skip-real                     # the stored kernel runs, no root
"""


def add_validate_parser(sub: Any) -> None:
    v = sub.add_parser(
        "validate",
        help="the simulator against real Linux TCP on the validation grid (root for the kernel)",
        description="Run the validation grid (100 Mbps, 64 KB SRU, 32 KB and 128 KB ports, "
        "N = 1..32, RTOmin 200 ms and 1 ms, CUBIC and BBR) on the real kernel with the "
        "emulator, several times per point, storing each run as it finishes (a rerun runs only "
        "what is missing); simulate the same points with the testbed's measured RTT and the "
        "kernel's 4 ms clock, once per profile; write the table, the figure and the summary "
        "(median |sim/real - 1|, share of points inside the kernel's min-max, BBR against "
        "CUBIC). Two more studies are subcommands: kv and shuffle.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument(
        "--real-dir",
        default="docs/validation/real",
        metavar="DIR",
        help="the kernel's runs, one Parquet file per point and repetition (default: %(default)s)",
    )
    v.add_argument(
        "--out", default="docs/validation", metavar="DIR", help="README, figure, CSV (%(default)s)"
    )
    v.add_argument(
        "--profiles",
        default="classic,linux",
        metavar="A,B",
        help="simulator profiles to compare (classic: the incast papers' kernels; linux: "
        "Linux 5.x/6.x; another name sets tcp.profile = NAME) (default: %(default)s)",
    )
    v.add_argument(
        "--profile-set",
        action="append",
        default=[],
        metavar="NAME:KEY=VALUE",
        help="a scenario override of a profile, e.g. paced:tcp.profile=linux (repeatable)",
    )
    v.add_argument(
        "--repeat", type=whole(1, 1000), help="kernel runs per point (default 10; quick: 2)"
    )
    v.add_argument("--blocks", type=whole(1, 10**6), help="blocks per run (default 30; quick: 5)")
    v.add_argument("--quick", action="store_true", help="a tiny grid: 32 KB, 200 ms, N = 1, 4")
    g = v.add_mutually_exclusive_group()
    g.add_argument("--real-only", action="store_true", help="only run the kernel's grid")
    g.add_argument(
        "--skip-real", action="store_true", help="run nothing on the kernel: use stored runs"
    )
    v.add_argument(
        "--warmup",
        type=whole(0, 10**6),
        help="blocks run first and not measured (default 1), by both",
    )
    v.add_argument(
        "--time-limit", type=seconds(0.001, 86400), default=300.0, help="emulation: seconds per run"
    )
    v.add_argument("--json", action="store_true", help="print the table's rows as JSON")
    v.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    v.set_defaults(handler=cmd_validate)
    studies = v.add_subparsers(dest="study", metavar="STUDY")
    add_kv_parser(studies)
    add_shuffle_parser(studies)


def add_kv_parser(sub: Any) -> None:
    from incastlab.validation.kv_points import LINK, SEED

    k = sub.add_parser(
        "kv",
        help="a key-value store's drops and get latency against utilization, real and simulated",
        description="The key-value store's drops and get latency against utilization, with and "
        "without an 80% sender rate cap: real Linux TCP (the emulator, root) beside the "
        "simulator, the same plan of gets on both. The kernel's runs are stored under OUT/real "
        "(a rerun runs only what is missing); the simulator's are rerun every time.",
        epilog=KV_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    k.add_argument(
        "--out",
        default="docs/validation/kv",
        metavar="DIR",
        help="the README, the figure and the kernel's runs (default: %(default)s)",
    )
    k.add_argument(
        "--scenario",
        default="examples/riak-emulated.toml",
        metavar="FILE",
        help="the cluster; its link is replaced by --link (default: %(default)s)",
    )
    k.add_argument("--link", default=LINK, help="the hosts' link rate (default: %(default)s)")
    add_study_flags(k, str(SEED))
    k.set_defaults(handler=cmd_validate_kv)


def add_shuffle_parser(sub: Any) -> None:
    from incastlab.validation.shuffle_points import SEEDS

    s = sub.add_parser(
        "shuffle",
        help="what RTOmin 200 ms costs an all-to-all MapReduce shuffle, real and simulated",
        description="What RTOmin 200 ms costs an all-to-all MapReduce shuffle (Eq. 5): real "
        "Linux TCP (the emulator, root; on a fabric slowed down 10 times) beside the simulator, "
        "the simulator's fetches in the simulator's order on both. The kernel's runs are stored "
        "under OUT/real (a rerun runs only what is missing); the simulator's are rerun every "
        "time.",
        epilog=SHUFFLE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument(
        "--out",
        default="docs/validation/shuffle",
        metavar="DIR",
        help="the README, the figure and the kernel's runs (default: %(default)s)",
    )
    add_study_flags(s, ",".join(map(str, SEEDS)))
    s.set_defaults(handler=cmd_validate_shuffle)


def add_study_flags(p: argparse.ArgumentParser, seeds: str) -> None:
    """The flags the kv and shuffle studies share."""
    p.add_argument(
        "--seeds",
        default=seeds,
        metavar="A,B",
        help="seeds of every point, comma-separated (default: %(default)s)",
    )
    p.add_argument(
        "--skip-real", action="store_true", help="only the stored kernel runs (no root needed)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def seed_list(text: str) -> list[int]:
    """``--seeds``: whole numbers, comma-separated."""
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"--seeds: expected integers such as 1,2, got {text!r}") from None


def study_outcome(readme: Path | None, failures: list[str], out_dir: Path, err: Console) -> int:
    """What a kv or shuffle study says when done: its kernel failures and its README."""
    for f in failures:
        err.print(f"[yellow]kernel run failed:[/yellow] {f}", soft_wrap=True)
    if readme is None:
        raise UsageError(
            f"--out: no kernel runs stored in {out_dir / 'real'} (run without --skip-real, as root)"
        )
    err.print(f"wrote {readme}")
    return 0


def cmd_validate_kv(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.cli.common import backend
    from incastlab.validation import kv

    seeds = seed_list(a.seeds)

    def say(message: str) -> None:
        if not a.quiet:
            err.print(f"[dim]{message}[/dim]", soft_wrap=True)

    emulation = None if a.skip_real else backend("emulate")
    out_dir = Path(a.out)
    readme, failures = kv.run(
        out_dir, Path(a.scenario), a.link, seeds, emulation=emulation, say=say
    )
    return study_outcome(readme, failures, out_dir, err)


def cmd_validate_shuffle(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.cli.common import backend
    from incastlab.validation import shuffle

    seeds = seed_list(a.seeds)

    def say(message: str) -> None:
        if not a.quiet:
            err.print(f"[dim]{message}[/dim]", soft_wrap=True)

    def emulation(k: Kernel) -> Backend:
        return backend("emulate", sysctls=k.sysctls)

    out_dir = Path(a.out)
    readme, failures = shuffle.run(
        out_dir, seeds, emulation=None if a.skip_real else emulation, say=say
    )
    return study_outcome(readme, failures, out_dir, err)


def cmd_validate(a: argparse.Namespace, out: Console, err: Console) -> int:
    from dataclasses import replace

    from incastlab.cli.common import backend
    from incastlab.validation import grid as grids
    from incastlab.validation import report, runs, table

    grid = grids.QUICK if a.quick else grids.FULL
    if a.repeat is not None:
        if a.repeat < 1:
            raise UsageError("--repeat: at least 1")
        grid = replace(grid, repeat=a.repeat)
    if a.blocks is not None:
        if a.blocks < 1:
            raise UsageError("--blocks: at least 1")
        grid = replace(grid, blocks=a.blocks)
    if a.warmup is not None:
        if a.warmup < 0:
            raise UsageError("--warmup: at least 0")
        grid = replace(grid, warmup=a.warmup)
    names = [n.strip() for n in a.profiles.split(",") if n.strip()]
    try:
        profiles = grids.profile_overrides(names, a.profile_set)
    except ValueError as e:
        raise UsageError(str(e)) from None
    real_dir, out_dir = Path(a.real_dir), Path(a.out)

    def say(message: str) -> None:
        if not a.quiet:
            err.print(f"[dim]{message}[/dim]", soft_wrap=True)

    if not a.skip_real:
        emulation = backend("emulate", warmup=grid.warmup, time_limit_s=a.time_limit)
        failures = runs.run_real(grid, real_dir, emulation, say=say)
        for f in failures:
            err.print(f"[yellow]kernel run failed:[/yellow] {f}", soft_wrap=True)
    if a.real_only:
        return 0
    try:
        v = table.validate(grid, real_dir, profiles, say=say)
    except ValueError as e:  # the kernel's runs contradict what the simulator is given
        raise UsageError(str(e)) from None
    if not v.rows:
        raise UsageError(f"--real-dir: no kernel runs in {real_dir} (run without --skip-real)")
    command = report.command_line(grid, list(profiles), a.real_dir, a.out)
    for extra in a.profile_set:
        command += f" --profile-set {extra}"
    written = report.write(v, out_dir, command)
    if a.json:
        print_json([r.record(v.names) for r in v.rows])
        return 0
    from incastlab.cli.common import table as new_table

    t = new_table()
    for col in ("profile", "points", "missing", "median |sim/real-1|", "inside min-max"):
        t.add_column(col, justify="right")
    for s in v.summary():
        t.add_row(
            s.profile,
            str(s.points),
            str(s.missing),
            "-" if s.median_abs_error is None else f"{100 * s.median_abs_error:.0f}%",
            "-" if s.inside_share is None else f"{100 * s.inside_share:.0f}%",
        )
    out.print(t)
    for p in written:
        err.print(f"wrote {p}")
    return 0
