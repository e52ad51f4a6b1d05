"""`incast sweep`, `results`, `plot` and `report`: run sweeps into directories, read, draw
and report them."""

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
    FIGURE,
    UsageError,
    add_workers_flag,
    backend,
    out_dir,
    out_file,
    pct_cell,
    plain,
    progress_bar,
    table,
    writing,
)
from incastlab.sweep.metrics import METRICS

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from incastlab.sweep.store import SweepStore

SWEEP_EXAMPLES = """examples:
  incast sweep examples/sweep-rto.toml        # into sweeps/rto-vs-senders/ (its [sweep] name)
  incast sweep spec.toml --out runs/a --workers 2         # resumes if runs/a has points
  incast sweep spec.toml --dask local                     # a Dask cluster on this machine
  incast sweep spec.toml --dask tcp://scheduler:8786      # an existing Dask cluster
  incast results sweeps/sweep-rto --where tcp.rto_min=1ms --csv rto.csv
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
    s.set_defaults(handler=cmd_sweep)


def add_results_parser(sub: Any) -> None:
    r = sub.add_parser(
        "results",
        help="summarize, filter and export a sweep's results",
        description="One row per stored point: the sweep's coordinates and headline numbers.",
        epilog="examples:\n  incast results sweeps/rto\n"
        "  incast results sweeps/rto --where topology.senders=16 --json\n"
        "  incast results sweeps/rto --csv rto.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("dir", help="a directory written by incast sweep")
    r.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keep points whose coordinate KEY equals VALUE, by meaning: 1000us = 1ms (repeatable)",
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
    r.set_defaults(handler=cmd_results)


def _csv_target(value: str) -> str:
    """An argparse type: ``-`` (standard output) or a .csv file that can be written."""
    return value if value == "-" else out_file(".csv")(value)


def add_plot_parser(sub: Any) -> None:
    g = sub.add_parser(
        "plot",
        help="draw a sweep's results: a metric against a coordinate, CDFs, histograms",
        description="Figures of a sweep directory. line: a metric against a coordinate, one "
        "line per --hue value, mean and 95% interval over seeds (--model overlays the "
        "analytical model); block-cdf: block completion times; timeouts: successive "
        "timeouts; fct-overhead: the last flow's completion over optimal (incast). A "
        "coordinate that varies besides --x, --hue and the seed gets a panel per value (or, "
        "with too many, the figure is refused) unless --pool averages it on purpose; the "
        "caption names every average and --where filter.",
        epilog="examples:\n  incast plot sweeps/rto --x topology.senders --y goodput "
        "--hue tcp.rto_min --model --out rto.png\n"
        "  incast plot sweeps/rto --kind block-cdf --hue tcp.rto_min --where senders=16 "
        "--out cdf.pdf\n"
        "  incast plot sweeps/rto --where tcp.rto_min=1000us --out fine.png   # = 1ms\n"
        "metrics for --y: " + ", ".join(METRICS) + " or any numeric column",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g.add_argument("dir", help="a directory written by incast sweep")
    g.add_argument(
        "--kind", choices=("line", "block-cdf", "timeouts", "fct-overhead"), default="line"
    )
    g.add_argument("--x", default="topology.senders", help="coordinate on the x axis")
    g.add_argument("--y", default="goodput", help="metric on the y axis (line)")
    g.add_argument("--hue", help="coordinate that tells the lines apart")
    g.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keep points whose coordinate KEY equals VALUE, by meaning (1000us = 1ms)",
    )
    g.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="KEY",
        help="average over this coordinate on purpose (named in the caption); without it a "
        "coordinate that varies besides --x, --hue and the seed gets a panel per value",
    )
    g.add_argument("--model", action="store_true", help="overlay the analytical model (line)")
    g.add_argument("--logy", action="store_true", help="logarithmic y axis (line)")
    g.add_argument("--title", default="", help="figure title")
    g.add_argument(
        "--out",
        type=out_file(*FIGURE),
        required=True,
        metavar="FILE",
        help="figure: .png, .pdf or .svg",
    )
    g.set_defaults(handler=cmd_plot)


def add_report_parser(sub: Any) -> None:
    h = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a sweep: figures, table, spec",
        description="Goodput against the senders (one line per value of the next coordinate, "
        "a panel per value of any other), block times and timeouts at the largest sender "
        "count, every point in a table, the spec. Captions name every average and filter.",
        epilog="examples:\n  incast report sweeps/rto-vs-senders --out rto.html\n"
        "  incast report sweeps/big --where buffer=64KB --pool tcp.initial_window",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    h.add_argument("dir", help="a directory written by incast sweep")
    h.add_argument(
        "--out", type=out_file(".html"), metavar="FILE.html", help="(default: DIR/report.html)"
    )
    h.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="report only the points whose coordinate KEY equals VALUE (by meaning)",
    )
    h.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="KEY",
        help="average the figures over this coordinate on purpose (named in the captions)",
    )

    h.set_defaults(handler=cmd_report)


def _label(params: dict[str, Any]) -> str:
    return " ".join(f"{k.split('.')[-1]}={v}" for k, v in params.items())


def cmd_sweep(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.parallel import Interrupted
    from incastlab.sweep.run import DaskMissing, run_points
    from incastlab.sweep.spec import load_spec
    from incastlab.sweep.store import SweepDirError, SweepStore

    spec = load_spec(a.spec)
    spec.backend = a.backend or spec.backend
    backend(spec.backend)
    points = spec.points()
    if a.dry_run:
        for p in points:
            out.print(f"{p.key}  {plain(_label(p.params))}", highlight=False)
        err.print(f"{len(points)} points")
        return 0
    store = SweepStore(a.out or Path("sweeps") / spec.name)
    try:
        store.create(spec.store_meta(len(points)))
    except SweepDirError as e:
        raise UsageError(f"--out: {e}") from None
    with progress_bar(err, "sweep", not a.json and not a.quiet, failures=True) as bar:
        task = bar.add_task(spec.name, total=len(points), failed=0)
        bar.update(task, completed=len(store.done() & {p.key for p in points}))
        failed = [0]

        def progress(p: Any, ok: bool) -> None:
            failed[0] += 0 if ok else 1
            bar.update(task, advance=1, failed=failed[0], description=_label(p.params))

        try:
            res = run_points(points, store, workers=a.workers, dask=a.dask, progress=progress)
        except DaskMissing as e:
            raise UsageError(str(e)) from None
        except Interrupted:
            bar.stop()
            return _interrupted(a, store, points, out, err)
    for path in res.repaired:
        err.print(
            f"[yellow]warning:[/yellow] {plain(path)} did not read back; computed that point again",
            soft_wrap=True,
        )
    if a.json:
        print(json.dumps(res.summary(store.root), indent=1))
    elif not a.quiet:
        _print_rows(store, out, err, [])
        err.print(
            f"{res.ran} run, {res.skipped} already stored, {len(res.failed)} failed "
            f"({res.wall_s:.1f}s) → {store.root}"
        )
    return 1 if res.failed else 0


def _interrupted(
    a: argparse.Namespace, store: SweepStore, points: list[Any], out: Console, err: Console
) -> int:
    """After Ctrl-C: the points stored so far (all of them kept), and how to resume."""
    stored = len(store.done() & {p.key for p in points})
    if not a.json and not a.quiet and stored:
        _print_rows(store, out, err, [])
    again = ["incast", "sweep", a.spec, "--out", str(store.root)]
    if a.backend:
        again += ["--backend", a.backend]
    err.print(
        f"[yellow]interrupted:[/yellow] {stored} of {len(points)} points are stored in "
        f"{plain(store.root)}; `{plain(shlex.join(again))}` runs the other "
        f"{len(points) - stored}",
        soft_wrap=True,
    )
    return 130


def _filters(items: list[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        if "=" not in item:
            raise UsageError(f"--where: expected KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out.append((k.strip(), v.strip()))
    return out


def resolve(flag: str, key: str, axes: set[str]) -> str:
    """A coordinate named in full (``topology.senders``) or by its last part (``senders``)."""
    if key in axes:
        return key
    matches = [a for a in axes if a.rsplit(".", 1)[-1] == key]
    if len(matches) == 1:
        return matches[0]
    what = "is ambiguous" if matches else "is not a coordinate of this sweep"
    raise UsageError(f"{flag}: {key!r} {what}: {', '.join(sorted(axes))}")


def _open(path: str) -> tuple[SweepStore, dict[str, Any]]:
    """A sweep directory and its metadata; a usage error if it is none."""
    from incastlab.sweep.store import SweepDirError, SweepStore

    store = SweepStore(path)
    try:
        return store, store.meta()
    except SweepDirError as e:
        raise UsageError(str(e)) from None


def warn_unreadable(store: SweepStore, err: Console) -> None:
    """Name the point files that did not read back (skipped here, recomputed by a rerun)."""
    for p in store.unreadable:
        err.print(
            f"[yellow]warning:[/yellow] {plain(str(p))} does not read back; skipped "
            "(rerun the sweep to compute that point again)",
            soft_wrap=True,
        )


def _selected(
    store: SweepStore, where: list[tuple[str, str]], err: Console | None = None
) -> list[dict[str, Any]]:
    rows = store.rows()
    if err is not None:
        warn_unreadable(store, err)
    keys = set().union(*(r["params"].keys() for r in rows)) if rows else set()
    if rows:
        where = [(resolve("--where", k, keys), v) for k, v in where]
    tests = [(k, _matcher(k, v)) for k, v in where]
    return [r for r in rows if all(t(r["params"].get(k)) for k, t in tests)]


def _matcher(key: str, text: str) -> Any:
    """A test of a coordinate's stored value against ``--where KEY=TEXT`` by meaning
    (``1000us`` is ``1ms``) for a scenario key, by its text for anything else."""
    from incastlab.scenario import ScenarioError, value_of
    from incastlab.series import parse_assignment

    wanted_raw = parse_assignment(f"{key}={text}", "--where")[1]
    try:
        wanted = value_of(key, wanted_raw)
    except ScenarioError:
        return lambda v: str(v) == text
    seen: dict[str, bool] = {}

    def test(v: Any) -> bool:
        k = repr(v)
        if k not in seen:
            try:
                seen[k] = value_of(key, v) == wanted
            except ScenarioError:
                seen[k] = str(v) == text
        return seen[k]

    return test


def _where_text(where: list[tuple[str, str]]) -> list[str]:
    """The filters as a caption names them: ``rto_min = 1ms``."""
    from incastlab.plot.facets import axis_label

    return [f"{axis_label(k)} = {v}" for k, v in where]


def _print_rows(
    store: SweepStore, out: Console, err: Console, where: list[tuple[str, str]]
) -> None:
    from incastlab.cli.render import count, header, in_unit
    from incastlab.sweep.order import params_key

    rows = sorted(_selected(store, where, err), key=params_key)
    meta = store.meta()
    axes = [k for k in meta.get("axes", []) if any(k in r["params"] for r in rows)]
    rate, rate_cell = in_unit([r["goodput_bps"] for r in rows], "rate")
    medians = [r.get("block_time_median_s") or r.get("model_block_time_s") for r in rows]
    unit, time_cell = in_unit(medians, "time")
    t = table()
    for k in axes:
        t.add_column(k.split(".")[-1], justify="right")
    for col in (
        header("goodput", rate),
        header("link", "%"),
        header("block p50", unit),
        header("time-", "outs"),
        header("wall", "s"),
    ):
        t.add_column(col, justify="right")
    for r, median in zip(rows, medians, strict=True):
        t.add_row(
            *[str(r["params"].get(k, "")) for k in axes],
            rate_cell(r["goodput_bps"]),
            pct_cell(r.get("goodput_fraction") or 0.0, sign=False),
            time_cell(median),
            count(r.get("timeouts")),
            f"{r['wall_s']:.2f}",
        )
    out.print(
        f"[bold]{meta.get('name', store.root.name)}[/bold] · {meta.get('backend')} · "
        f"{len(rows)} of {meta.get('points')} points"
    )
    out.print(t)
    for f in store.failures():
        err.print(f"[red]failed[/red] {plain(_label(f['params']))}: {plain(str(f['error']))}")


def _print_summary(
    store: SweepStore, summary: pd.DataFrame, axes: list[str], out: Console, err: Console
) -> None:
    """The seed-aggregated view: mean ± 95% interval half-width, units in the headers."""
    import math

    from incastlab.cli.render import header, in_unit

    def cell(m: str, kind: str, name: str) -> tuple[str, list[str]]:
        mean, half = summary.get(f"{m}_mean"), summary.get(f"{m}_ci95")
        if mean is None:
            return name, ["-"] * len(summary)
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
        return header(name, unit), cells

    t = table()
    cols: dict[str, list[str]] = {k.split(".")[-1]: [str(v) for v in summary[k]] for k in axes}
    cols["n"] = [str(n) for n in summary["n"]]
    for m, kind, name in (
        ("goodput_bps", "rate", "goodput"),
        ("goodput_fraction", "%", "link"),
        ("block_time_median_s", "time", "block p50"),
        ("timeouts", "count", "timeouts"),
    ):
        head, cells = cell(m, kind, name)
        cols[head] = cells
    for c in cols:
        t.add_column(c, justify="right")
    for i in range(len(summary)):
        t.add_row(*[v[i] for v in cols.values()])
    meta = store.meta()
    out.print(
        f"[bold]{meta.get('name', store.root.name)}[/bold] · {meta.get('backend')} · "
        f"{int(summary['n'].sum())} points over {len(summary)} configurations, "
        "mean ± 95% interval over seeds"
    )
    out.print(t)
    for f in store.failures():
        err.print(f"[red]failed[/red] {plain(_label(f['params']))}: {plain(str(f['error']))}")


def cmd_results(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.sweep.order import params_key
    from incastlab.sweep.store import results_view, write_csv

    if a.csv == "-" and a.json:
        raise UsageError("--csv -: standard output already carries --json; give a file")
    store, meta = _open(a.dir)
    where = _filters(a.where)
    rows = sorted(_selected(store, where), key=params_key)
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
        _print_rows(store, out, err, where)
    else:
        _print_summary(store, summary, [k for k in axes if k != "seed"], out, err)
    return 0


def _workload(row: dict[str, Any]) -> str:
    return str(((row.get("scenario") or {}).get("workload") or {}).get("kind", "unknown"))


def _kinds(rows: list[dict[str, Any]]) -> str:
    return ", ".join(sorted({_workload(r) for r in rows}))


def cmd_plot(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.plot import sweep as sweep_plot
    from incastlab.plot.facets import FigureRefused
    from incastlab.sweep.metrics import metric

    store, meta = _open(a.dir)
    where = _filters(a.where)
    rows = _selected(store, where, err)
    if not rows:
        raise UsageError(f"{a.dir}: no stored points match")
    axes = set(meta.get("axes", [])) | set().union(*(r["params"].keys() for r in rows))
    where = [(resolve("--where", k, axes), v) for k, v in where]
    if a.kind in ("line", "fct-overhead"):
        a.x = resolve("--x", a.x, axes)
    if a.hue is not None:
        a.hue = resolve("--hue", a.hue, axes)
    pool = [resolve("--pool", k, axes) for k in a.pool]
    filters = _where_text(where)
    try:
        if a.kind == "line":
            col = metric(a.y)[0]
            if not any(isinstance(r.get(col), int | float) for r in rows):
                raise UsageError(
                    f"--y: no numeric {a.y!r} in these results; try one of {', '.join(METRICS)}"
                )
            path = sweep_plot.line(
                rows,
                a.out,
                x=a.x,
                y=a.y,
                hue=a.hue,
                model=a.model,
                title=a.title,
                logy=a.logy,
                pool=pool,
                filters=filters,
            )
        elif a.kind == "block-cdf":
            if not any((r.get("report") or {}).get("block_times") for r in rows):
                raise UsageError(
                    f"--kind block-cdf: no block times in these points (workloads: "
                    f"{_kinds(rows)}); it draws the sync_read workload's blocks"
                )
            path = sweep_plot.block_cdf(rows, a.out, hue=a.hue, pool=pool, filters=filters)
        elif a.kind == "timeouts":
            path = sweep_plot.timeout_histogram(rows, a.out, hue=a.hue, pool=pool, filters=filters)
        else:
            if not any(_workload(r) == "incast" and r.get("fct_max_s") for r in rows):
                raise UsageError(
                    f"--kind fct-overhead: needs points of the incast workload (workload.kind "
                    f"= incast); these are {_kinds(rows)}"
                )
            path = sweep_plot.fct_overhead(
                rows, a.out, x=a.x, hue=a.hue, pool=pool, filters=filters
            )
    except FigureRefused as e:
        raise UsageError(f"incast plot: {e}") from None
    err.print(f"wrote {path}")
    return 0


def cmd_report(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.plot.report import write_report

    store, meta = _open(a.dir)
    target = a.out or store.root / "report.html"
    where = _filters(a.where)
    rows = _selected(store, where)
    axes = set(meta.get("axes", [])) | set().union(*(r["params"].keys() for r in rows))
    where = [(resolve("--where", k, axes), v) for k, v in where]
    pool = [resolve("--pool", k, axes) for k in a.pool]
    if where and not rows:
        raise UsageError(f"{a.dir}: no stored points match")
    try:
        with writing("--out", target):
            path = write_report(a.dir, target, rows=rows, filters=_where_text(where), pool=pool)
    except (FileNotFoundError, ValueError) as e:
        raise UsageError(f"incast report: {e}") from None
    store.done()
    warn_unreadable(store, err)
    err.print(f"wrote {path}")
    return 0
