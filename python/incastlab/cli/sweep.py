"""`incast sweep` and `results`: run sweeps into directories and read them back (`incast plot`
and `report` draw them: :mod:`incastlab.cli.plot`)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab import backends
from incastlab.cli.common import (
    UsageError,
    add_workers_flag,
    backend,
    out_dir,
    out_file,
    pct_cell,
    plain,
    progress_bar,
    writing,
)
from incastlab.cli.json_text import print_json
from incastlab.cli.stored import open_sweep, parse_where, point_label, selected, warn_unreadable
from incastlab.cli.tables import add_wide_flag

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from incastlab.sweep.store import SweepStore

SWEEP_EXAMPLES = """examples:
  incast sweep examples/sweep-rto.toml        # into sweeps/rto-vs-senders/ (its [sweep] name)
  incast sweep examples/sweep-rto.toml --out runs/a --workers 2   # resumes if runs/a has points
  incast sweep examples/sweep-rto.toml --dask local       # a Dask cluster on this machine
  incast sweep examples/sweep-rto.toml --dask tcp://scheduler:8786   # an existing Dask cluster
  incast results sweeps/rto-vs-senders --where tcp.rto_min_s=1ms --csv rto.csv
"""


def add_sweep_parser(sub: Any) -> None:
    s = sub.add_parser(
        "sweep",
        help="run a sweep spec (lists and ranges of scenario values) into a results directory",
        description="Run every point of a sweep spec: a scenario TOML file in which any value "
        "may be a list or a range, with an optional [sweep] table (seeds, zip, backend). Each "
        "finished point is stored at once; rerunning skips the points already stored.",
        epilog=SWEEP_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("spec", help="sweep spec (TOML)")
    s.add_argument(
        "--out",
        type=out_dir,
        metavar="DIR",
        help="results directory (default: sweeps/NAME, NAME being the spec's [sweep] name, "
        "else its file name without .toml)",
    )
    s.add_argument(
        "--backend",
        choices=backends.names(),
        help="override sweep.backend (emulate: real Linux TCP, root, one point at a time)",
    )
    add_workers_flag(s)
    s.add_argument(
        "--dask", metavar="ADDR", help="run on a Dask cluster: tcp://host:8786, or 'local'"
    )
    s.add_argument("--dry-run", action="store_true", help="list the points, run nothing")
    s.add_argument("--json", action="store_true", help="print the outcome as JSON")
    s.add_argument("-q", "--quiet", action="store_true", help="no table, no progress")
    add_wide_flag(s)
    s.set_defaults(handler=cmd_sweep)


def add_results_parser(sub: Any) -> None:
    r = sub.add_parser(
        "results",
        help="summarize, filter and export a sweep's results",
        description="One row per stored point: the sweep's coordinates and headline numbers.",
        epilog="examples (the sweep of examples/sweep-rto.toml):\n"
        "  incast results sweeps/rto-vs-senders\n"
        "  incast results sweeps/rto-vs-senders --where topology.senders=16 --json\n"
        "  incast results sweeps/rto-vs-senders --csv rto.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("dir", help="a directory written by incast sweep")
    r.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keep points whose column KEY (as in the CSV: topology.buffer.bytes, tcp.rto_min_s) "
        "equals VALUE, in base units or with a unit: 32KB, 1ms = 1000us (repeatable)",
    )
    r.add_argument(
        "--per-seed", action="store_true", help="one row per point, not aggregated over seeds"
    )
    r.add_argument(
        "--csv",
        type=_csv_target,
        metavar="FILE",
        help="write the rows as CSV to FILE.csv, or to standard output with -",
    )
    r.add_argument("--json", action="store_true", help="print the rows as JSON")
    r.add_argument(
        "--verify",
        action="store_true",
        help="check every point's data against its checksum and name the damaged ones "
        "(exit 1 if any); DIR may also be a results file of `incast sim --out`",
    )
    add_wide_flag(r)
    r.set_defaults(handler=cmd_results)


def _csv_target(value: str) -> str:
    """An argparse type: ``-`` (standard output) or a .csv file that can be written."""
    return value if value == "-" else out_file(".csv")(value)


#: Exit status of a sweep the machines stopped (a full or read-only disk, a lost Dask
#: scheduler): sysexits' EX_TEMPFAIL, "try again later", as a rerun completes it.
STOPPED = 75
#: Highest exit status counting failed points (a status of 63 means 63 or more).
MAX_FAILED_STATUS = 63


def failed_status(failed: int) -> int:
    """A sweep's exit status: 0 when every point ran, else how many failed (up to 63)."""
    return min(failed, MAX_FAILED_STATUS)


def cmd_sweep(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.parallel import Interrupted
    from incastlab.sweep.run import DaskMissing, SweepStopped, run_points
    from incastlab.sweep.spec import load_spec
    from incastlab.sweep.store import SweepDirError, SweepStore

    spec = load_spec(a.spec)
    spec.backend = a.backend or spec.backend
    backend(spec.backend)
    points = spec.points()
    if a.dry_run:
        for p in points:
            out.print(f"{p.key}  {plain(point_label(p.params))}", highlight=False)
        err.print(f"{len(points)} points")
        return 0
    store = SweepStore(a.out or Path("sweeps") / spec.name)
    try:
        store.create(spec.store_meta(len(points)))
    except SweepDirError as e:
        raise UsageError(f"--out: {e}") from None
    except OSError as e:  # a read-only or full results disk, before any point ran
        from incastlab.sweep.run import SweepStopped, disk_error

        return _stopped(a, store, points, err, SweepStopped(disk_error(e, store), 0))
    with progress_bar(err, "sweep", not a.json and not a.quiet, failures=True) as bar:
        task = bar.add_task(spec.name, total=len(points), failed=0)
        bar.update(task, completed=len(store.done() & {p.key for p in points}))
        failed = [0]

        def progress(p: Any, ok: bool) -> None:
            failed[0] += 0 if ok else 1
            bar.update(task, advance=1, failed=failed[0], description=point_label(p.params))

        try:
            res = run_points(points, store, workers=a.workers, dask=a.dask, progress=progress)
        except DaskMissing as e:
            raise UsageError(str(e)) from None
        except Interrupted:
            bar.stop()
            return _interrupted(a, store, points, out, err)
        except SweepStopped as e:
            bar.stop()
            return _stopped(a, store, points, err, e)
    for path in res.repaired:
        err.print(
            f"[yellow]warning:[/yellow] {plain(path)} was damaged (did not read back or did "
            "not match its checksum); computed that point again",
            soft_wrap=True,
        )
    if a.json:
        print_json(res.summary(store.root))
    elif not a.quiet:
        _print_rows(store, out, err, [], a.wide)
        again = f" ({len(res.repaired)} of them damaged before)" if res.repaired else ""
        err.print(
            f"{res.ran} run{again}, {res.skipped} already stored, {len(res.failed)} failed "
            f"({res.wall_s:.1f}s) → {store.root}"
        )
    else:
        # Quiet is no table and no progress, never silence about what failed.
        from incastlab.sweep.order import params_key

        keys = set(res.failed)
        for f in sorted(store.failures(), key=params_key):
            if f.get("key") in keys:
                err.print(
                    f"[red]failed[/red] {plain(point_label(f['params']))}: "
                    f"{plain(str(f['error']))}",
                    soft_wrap=True,
                )
        if res.failed:
            err.print(
                f"{len(res.failed)} of {len(points)} points failed → {plain(store.root)}",
                soft_wrap=True,
                highlight=False,
            )
    return failed_status(len(res.failed))


def _stopped(
    a: argparse.Namespace, store: SweepStore, points: list[Any], err: Console, e: Exception
) -> int:
    """The machines stopped the sweep: one line saying what, what is kept, how to finish."""
    from incastlab.sweep.run import SweepStopped

    stored = e.stored if isinstance(e, SweepStopped) else 0
    err.print(
        f"[red]incast: sweep stopped:[/red] {plain(str(e))}; this run stored {stored} "
        f"point{'s' if stored != 1 else ''} in {plain(store.root)}, every one whole; rerun "
        f"`{plain(shlex.join(_again(a, store)))}` to complete it",
        soft_wrap=True,
        highlight=False,
    )
    return STOPPED


def _again(a: argparse.Namespace, store: SweepStore) -> list[str]:
    """The command that resumes this sweep."""
    again = ["incast", "sweep", a.spec, "--out", str(store.root)]
    if a.backend:
        again += ["--backend", a.backend]
    if a.dask:
        again += ["--dask", a.dask]
    return again


def _interrupted(
    a: argparse.Namespace, store: SweepStore, points: list[Any], out: Console, err: Console
) -> int:
    """After Ctrl-C: the points stored so far (all of them kept), and how to resume."""
    stored = len(store.done() & {p.key for p in points})
    if not a.json and not a.quiet and stored:
        _print_rows(store, out, err, [], a.wide)
    again = _again(a, store)
    err.print(
        f"[yellow]interrupted:[/yellow] {stored} of {len(points)} points are stored in "
        f"{plain(store.root)}; `{plain(shlex.join(again))}` runs the other "
        f"{len(points) - stored}",
        soft_wrap=True,
    )
    return 130


def _title(meta: dict[str, Any], root: Path, rows: list[dict[str, Any]], what: str) -> str:
    """A sweep table's title line: its name, backend, transport and TCP, and ``what``."""
    from incastlab.plot import transport_label

    tcp = transport_label([r["scenario"] for r in rows if r.get("scenario")])
    return (
        f"[bold]{plain(meta.get('name', root.name))}[/bold] · {meta.get('backend')} · "
        + (f"{tcp} · " if tcp else "")
        + what
    )


def _print_rows(
    store: SweepStore,
    out: Console,
    err: Console,
    where: list[tuple[str, str]],
    wide: bool = False,
) -> None:
    from incastlab.cli.tables import ALWAYS, Col, count, header, in_unit, print_table
    from incastlab.sweep.order import params_key

    rows = sorted(selected(store, where, err)[0], key=params_key)
    meta = store.meta()
    axes = [k for k in meta.get("axes", []) if any(k in r["params"] for r in rows)]
    rate, rate_cell = in_unit([r["goodput_bps"] for r in rows], "rate")
    medians = [r.get("block_time_median_s") or r.get("model_block_time_s") for r in rows]
    unit, time_cell = in_unit(medians, "time")
    cols = [
        Col(k.split(".")[-1], [str(r["params"].get(k, "")) for r in rows], ALWAYS) for k in axes
    ]
    cols += [
        Col(header("goodput", rate), [rate_cell(r["goodput_bps"]) for r in rows], 8),
        Col(
            header("link", "%"),
            [pct_cell(r.get("goodput_fraction") or 0.0, sign=False) for r in rows],
            7,
        ),
        Col(header("block p50", unit), [time_cell(m) for m in medians], 6),
        Col(header("time-", "outs"), [count(r.get("timeouts")) for r in rows], 5),
        Col(header("wall", "s"), [f"{r['wall_s']:.2f}" for r in rows], 0),
    ]
    what = f"{len(rows)} of {meta.get('points')} points"
    print_table(out, _title(meta, store.root, rows, what), cols, wide=wide)
    for f in store.failures():
        err.print(f"[red]failed[/red] {plain(point_label(f['params']))}: {plain(str(f['error']))}")


def _print_summary(
    store: SweepStore,
    summary: pd.DataFrame,
    axes: list[str],
    out: Console,
    err: Console,
    rows: list[dict[str, Any]],
    wide: bool = False,
) -> None:
    """The seed-aggregated view: mean ± 95% interval half-width, units in the headers."""
    import math

    from incastlab.cli.tables import ALWAYS, Col, header, in_unit, print_table

    def cell(m: str, kind: str, name: str, keep: int) -> Col:
        mean, half = summary.get(f"{m}_mean"), summary.get(f"{m}_ci95")
        if mean is None:
            return Col(name, ["-"] * len(summary), keep)
        fmt: Callable[[float | None], str]
        if kind == "%":
            unit, fmt = "%", lambda x: "-" if x is None else f"{100 * x:.1f}"
        elif kind == "count":
            unit, fmt = "", lambda x: "-" if x is None else f"{x:,.1f}"
        else:
            unit, fmt = in_unit(list(mean), kind)
        cells = [
            "-" if math.isnan(x) else fmt(x) + ("" if math.isnan(h) else f" ±{fmt(h)}")
            for x, h in zip(mean, half, strict=True)
        ]
        return Col(header(name, unit), cells, keep)

    from incastlab.sweep.store import LABEL

    cols = [Col(k.split(".")[-1], [str(v) for v in summary[LABEL + k]], ALWAYS) for k in axes]
    cols.append(Col("n", [str(n) for n in summary["n"]], ALWAYS))
    cols += [
        cell("goodput_bps", "rate", "goodput", 8),
        cell("goodput_fraction", "%", "link", 7),
        cell("block_time_median_s", "time", "block p50", 6),
        cell("timeouts", "count", "timeouts", 5),
    ]
    meta = store.meta()
    what = (
        f"{int(summary['n'].sum())} points over {len(summary)} configurations, "
        "mean ± 95% interval over seeds"
    )
    print_table(out, _title(meta, store.root, rows, what), cols, wide=wide)
    for f in store.failures():
        err.print(f"[red]failed[/red] {plain(point_label(f['params']))}: {plain(str(f['error']))}")


def cmd_results(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.sweep.order import params_key
    from incastlab.sweep.store import results_view, write_csv

    if a.csv == "-" and a.json:
        raise UsageError("--csv -: standard output already carries --json; give a file")
    if a.verify:
        if a.csv or a.where or a.per_seed:
            raise UsageError("--verify: checks the stored files; give it without --csv, --where")
        from incastlab.cli.stored import verify

        return verify(a.dir, a.json, out, err)
    store, meta = open_sweep(a.dir)
    where = parse_where(a.where)
    selection, where = selected(store, where)
    rows = sorted(selection, key=params_key)
    if a.csv or a.json:
        warn_unreadable(store, err)
    axes = [k for k in meta.get("axes", []) if any(k in r["params"] for r in rows)]
    view, summary = results_view(rows, axes, per_seed=a.per_seed)
    if a.csv == "-":
        write_csv(view, sys.stdout)
    elif a.csv:
        with writing("--csv", a.csv):
            write_csv(view, a.csv)
        err.print(f"wrote {len(view)} rows to {a.csv}")
    if a.json:
        json.dump(view, sys.stdout, indent=1, default=str)
        print()
    if a.csv or a.json:
        return 0
    if summary is None:
        _print_rows(store, out, err, where, a.wide)
    else:
        _print_summary(store, summary, [k for k in axes if k != "seed"], out, err, rows, a.wide)
    return 0
