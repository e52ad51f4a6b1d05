"""`incast plot` and `report`: draw a sweep directory's stored points, as figures or as one
HTML page."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import FIGURE, UsageError, out_file, writing
from incastlab.cli.stored import (
    open_sweep,
    parse_where,
    resolve,
    selected,
    warn_unreadable,
    where_caption,
)
from incastlab.sweep.metrics import METRICS

if TYPE_CHECKING:
    from rich.console import Console


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
        epilog="examples (the sweep of examples/sweep-rto.toml):\n"
        "  incast plot sweeps/rto-vs-senders --x topology.senders --y goodput "
        "--hue tcp.rto_min --pool topology.buffer --model --out rto.png\n"
        "  incast plot sweeps/rto-vs-senders --kind block-cdf --hue tcp.rto_min "
        "--where topology.senders=16 --where topology.buffer.bytes=64KB --out cdf.pdf\n"
        "  incast plot sweeps/rto-vs-senders --where tcp.rto_min_s=1000us --out fine.png  # = 1ms\n"
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
        help="keep points whose column KEY (as in the CSV: topology.buffer.bytes, "
        "tcp.rto_min_s) equals VALUE, in base units or with a unit: 32KB, 1ms",
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
        "  incast report sweeps/rto-vs-senders --where topology.buffer.bytes=64KB --out b64.html",
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
        help="report only the points whose column KEY equals VALUE (as for incast plot)",
    )
    h.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="KEY",
        help="average the figures over this coordinate on purpose (named in the captions)",
    )

    h.set_defaults(handler=cmd_report)


def _workload(row: dict[str, Any]) -> str:
    return str(((row.get("scenario") or {}).get("workload") or {}).get("kind", "unknown"))


def _kinds(rows: list[dict[str, Any]]) -> str:
    return ", ".join(sorted({_workload(r) for r in rows}))


def cmd_plot(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.plot import sweep as sweep_plot
    from incastlab.plot.facets import FigureRefused
    from incastlab.sweep.metrics import metric

    store, meta = open_sweep(a.dir)
    where = parse_where(a.where)
    rows, where = selected(store, where, err)
    if not rows:
        raise UsageError(f"{a.dir}: no stored points match")
    axes = set(meta.get("axes", [])) | set().union(*(r["params"].keys() for r in rows))
    if a.kind in ("line", "fct-overhead"):
        a.x = resolve("--x", a.x, axes)
    if a.hue is not None:
        a.hue = resolve("--hue", a.hue, axes)
    pool = [resolve("--pool", k, axes) for k in a.pool]
    filters = where_caption(where)
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

    store, meta = open_sweep(a.dir)
    target = a.out or store.root / "report.html"
    where = parse_where(a.where)
    rows, where = selected(store, where)
    axes = set(meta.get("axes", [])) | set().union(*(r["params"].keys() for r in rows))
    pool = [resolve("--pool", k, axes) for k in a.pool]
    if where and not rows:
        raise UsageError(f"{a.dir}: no stored points match")
    try:
        with writing("--out", target):
            path = write_report(a.dir, target, rows=rows, filters=where_caption(where), pool=pool)
    except (FileNotFoundError, ValueError) as e:
        raise UsageError(f"incast report: {e}") from None
    store.done()
    warn_unreadable(store, err)
    err.print(f"wrote {path}")
    return 0
