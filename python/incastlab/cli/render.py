"""The tables the commands print: what a person reads (``--json`` is for machines)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import pct_cell, table
from incastlab.units import format_rate, format_size, format_time

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from incastlab.backends.model import ModelPoint
    from incastlab.model.calibrate import Calibration
    from incastlab.result import Result
    from incastlab.series import SeriesRun
    from incastlab.studies.compare import Comparison
    from incastlab.studies.mitigate import Ranking


def _s(seconds: float | None) -> str:
    return format_time((seconds or 0) * 1e12)


def _workload_cells(kind: str, row: dict[str, Any]) -> list[str]:
    if kind == "queries":
        return [f"{row['queries']:,}", _s(row["query_fct_mean_s"]), _s(row["query_fct_p99_s"])]
    if kind == "incast":
        over = row["fct_overhead"]
        return [_s(row["fct_max_s"]), f"{100 * over:+.1f}%" if over is not None else "-"]
    timeouts = row["blocks_with_timeouts"]
    return [
        _s(row["block_time_median_s"]),
        _s(row["block_time_max_s"]),
        "-" if timeouts is None else f"{timeouts}/{row['blocks']}",
    ]


def kv_table(results: Sequence[Result], walls: Sequence[float]) -> Table:
    """The key-value store, one row per run: load offered and carried, utilization (average
    and the fullest millisecond), drops and timeouts per second, get latency, goodput."""
    t = table()
    cols = ["hosts", "offered", "carried", "util", "peak 1ms", "drops/s/host", "timeouts/s"]
    cols += ["get p50", "get p99", "get p99.9", "gets", "goodput", "wall"]
    for col in cols:
        t.add_column(col, justify="right")

    def pct(x: float) -> str:
        return f"{100 * x:.1f}%"

    for r, wall in zip(results, walls, strict=True):
        row = r.record()
        t.add_row(
            str(r.senders),
            pct(row["kv_offered_load"]),
            pct(row["kv_carried_load"]),
            pct(row["kv_utilization"]),
            pct(row["kv_peak_utilization_1ms"]),
            f"{row['kv_drops_per_s_per_host']:,.1f}",
            f"{row['kv_timeouts_per_s']:,.1f}",
            _s(row["kv_latency_p50_s"]),
            _s(row["kv_latency_p99_s"]),
            _s(row["kv_latency_p999_s"]),
            f"{row['kv_gets']:,}",
            format_rate(row["kv_goodput_bps"]),
            f"{wall:.2f}s",
        )
    return t


def results_table(results: Sequence[Result], walls: Sequence[float]) -> Table:
    """One row per sender count: goodput, the workload's times, timeouts, drops, wall time."""
    kind = results[0].report["workload"]
    if kind == "kv_gets":
        return kv_table(results, walls)
    t = table()
    middle = {
        "incast": ["last FCT", "vs optimal"],
        "queries": ["queries", "FCT mean", "FCT p99"],
    }.get(kind, ["block p50", "block max", "RTO blocks"])
    background = any(r.scenario["background"]["flows"] for r in results)
    pfc = any(r.scenario["topology"]["pfc"] for r in results)
    extra = (["background"] if background else []) + (["pauses"] if pfc else [])
    for col in ["N", "goodput", "% link", *middle, *extra, "timeouts", "drops", "events", "wall"]:
        t.add_column(col, justify="right")
    for r, wall in zip(results, walls, strict=True):
        row = r.row()
        cells = [str(r.senders), format_rate(r.goodput_bps), pct_cell(r.goodput_fraction)]
        cells += _workload_cells(kind, row)
        if background:
            cells.append(format_rate(row["background_bps"]))
        if pfc:
            cells.append(f"{row['pfc_pauses']:,}")
        cells += [f"{r.timeouts:,}", f"{r.drops:,}", f"{r.events:,}", f"{wall:.2f}s"]
        t.add_row(*cells)
    return t


def print_runs(out: Console, run: SeriesRun, command: str, suffix: str = "") -> None:
    """Each series' heading and table."""
    from incastlab.plot import scenario_line

    for (_label, rs), walls in zip(run.series, run.walls, strict=True):
        out.print(f"[bold]incast {command}[/bold] · {scenario_line(rs[0])}{suffix}")
        out.print(results_table(rs, walls))


def print_model(out: Console, err: Console, series: Sequence[tuple[str, list[ModelPoint]]]) -> None:
    """Per series: the onset and one row per sender count: the regime, the predicted RTOs per
    block and the term that dominates the block time."""
    first = series[0][1][0]
    if first.ignored:
        err.print("[yellow]the model does not account for:[/yellow] " + ", ".join(first.ignored))
    chen = first.burst is None
    if not chen and first.constants is not None:
        k = first.constants
        tag = f"fitted with incastlab {k.version}" if k.version else "not fitted"
        err.print(
            f"burst model · constants {tag}: tail_timeout {k.tail_timeout:g}, spread "
            f"{k.spread:g} (--uncalibrated: Chen Eq. 1-4)"
        )
    for label, ps in series:
        p0 = ps[0]
        head = f"[bold]incast model[/bold] · SRU {format_size(p0.sru)}"
        if label and "sru" not in label:
            head += f" · {label}"
        if chen:
            head += f" · collapse predicted from N = {p0.onset} (Eq. 3)"
        elif p0.onset is not None:
            head += f" · collapse predicted from N = {p0.onset}"
        out.print(head)
        t = table()
        for col in ("N", "regime", "goodput", "% link", "block time", "RTOs/block", "dominant"):
            t.add_column(col, justify="right")
        for p in ps:
            pr = p.prediction
            if chen:
                regime = (
                    "ideal (Eq. 1)"
                    if pr.regime == "ideal"
                    else ("RTO (Eq. 2)" if pr.timeouts_per_block == 1 else "partial RTO (Eq. 4)")
                )
            else:
                regime = pr.regime
            t.add_row(
                str(p.senders),
                regime,
                format_rate(pr.goodput_bps),
                pct_cell(pr.goodput_bps / p.link_bps),
                _s(pr.block_time_s),
                f"{pr.timeouts_per_block:.3g}",
                p.dominant,
            )
        out.print(t)


def print_rto_random(
    out: Console, rows: Sequence[dict[str, Any]], rto_min: float, delta: float
) -> None:
    lo, hi = _s(rto_min - delta / 2), _s(rto_min + delta / 2)
    out.print(f"[bold]incast model rto-random[/bold] · RTO ~ U({lo}, {hi}) · E[X] → {hi}")
    t = table()
    for col in ("N", "E[X] (Eq. 6)", "sd(X) (Eq. 7)", "P(X > RTOmin + Δ/4)"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(
            str(r["senders"]),
            _s(r["expected_max_rto_s"]),
            _s(r["sd_max_rto_s"]),
            f"{r['p_exceeds_rto_min_plus_quarter_delta']:.3f}",
        )
    out.print(t)


def print_calibration(out: Console, c: Calibration) -> None:
    """The fitted constants, the held-out error per axis (next to Chen's) and the worst
    held-out points."""
    from rich.table import Table

    summary = c.summary()
    held, fitted = summary["held_out"], summary["fitted_on"]
    k = c.constants
    out.print(
        f"[bold]incast model calibrate[/bold] · {held['points'] + fitted['points']} points, "
        f"fitted on {fitted['points']}, scored on the other {held['points']} · "
        f"tail_timeout {k.tail_timeout:g}, spread {k.spread:g}"
    )
    out.print(
        f"held out: median error {100 * held['median_error']:.0f}%, 90th percentile "
        f"{100 * held['p90_error']:.0f}%, regime right on {100 * held['regime_right']:.0f}% · "
        f"Chen Eq. 1-4 (papers' constants): {100 * held['chen_median_error']:.0f}%, "
        f"{100 * held['chen_p90_error']:.0f}%"
    )
    t = table()
    for col in ("axis", "value", "points", "median", "p90", "regime", "Chen median", "Chen p90"):
        t.add_column(col, justify="right")
    for axis in ("variant", "rto_min", "buffer", "sru", "senders"):
        for v, e in c.breakdown(axis).items():
            t.add_row(
                axis,
                str(v),
                str(e["points"]),
                f"{100 * e['median_error']:.0f}%",
                f"{100 * e['p90_error']:.0f}%",
                f"{100 * e['regime_right']:.0f}%",
                f"{100 * e['chen_median_error']:.0f}%",
                f"{100 * e['chen_p90_error']:.0f}%",
            )
    out.print(t)
    w = Table(title="where the model breaks down (worst held-out points)", header_style="bold")
    cols = ("variant", "N", "SRU", "buffer", "RTOmin", "sim", "model", "model/sim")
    for col in (*cols, "RTOs/block sim", "model", "dominant"):
        w.add_column(col, justify="right")
    for q in c.worst(10):
        w.add_row(
            q.variant,
            str(q.senders),
            q.sru,
            q.buffer,
            q.rto_min,
            format_rate(q.sim_bps),
            format_rate(q.model_bps),
            f"{q.model_bps / q.sim_bps:.3g}×",
            f"{q.sim_timeouts_per_block:.3g}",
            f"{q.timeouts_per_block:.3g}",
            q.dominant,
        )
    out.print(w)
    if c.unfinished:
        out.print(
            f"left out: {len(c.unfinished)} points the simulator did not finish within "
            f"run.max_time ({'; '.join(c.unfinished[:3])}{' ...' if len(c.unfinished) > 3 else ''})"
        )


def print_ranking(out: Console, err: Console, ranking: Ranking) -> None:
    """The mitigations, best first, against the baseline; then the skipped ones."""
    from incastlab.plot import scenario_line

    ranked, baseline = ranking.ranked, ranking.baseline
    ns = [r.senders for r in ranked[0].results]
    out.print(f"[bold]incast mitigate[/bold] · {scenario_line(baseline.results[0])}")
    t = table()
    t.add_column("#", justify="right")
    t.add_column("mitigation")
    for n in ns:
        t.add_column(f"N={n}", justify="right")
    if len(ns) > 1:
        t.add_column("mean", justify="right")
    for col in ("vs base", "block p50", "block p99", "RTOs/block"):
        t.add_column(col, justify="right")
    t.add_column("what", style="dim")
    base = baseline.mean_goodput
    for i, o in enumerate(ranked, 1):
        cells = [str(i), o.mitigation.name]
        cells += [format_rate(r.goodput_bps) for r in o.results]
        if len(ns) > 1:
            cells.append(format_rate(o.mean_goodput))
        gain = o.mean_goodput / base if base else float("nan")
        cells += [
            f"{gain:.2g}×",
            _s(o.block_quantile(0.5)),
            _s(o.block_quantile(0.99)),
            f"{o.timeouts_per_block:.2f}",
            o.mitigation.what,
        ]
        t.add_row(*cells)
    out.print(t)
    for name, why in ranking.skipped:
        err.print(f"[yellow]skipped {name}:[/yellow] {why}")


def print_comparison(out: Console, c: Comparison, rows: Sequence[dict[str, Any]]) -> None:
    """One row per sender count; with repetitions, medians, real TCP's min-max and whether
    the simulator's median lies inside it."""
    repeated = c.repeat > 1
    t = table()
    t.add_column("N", justify="right")
    for b in c.runs:
        t.add_column(f"{b} goodput" + (" p50" if repeated else ""), justify="right")
        if repeated and f"{b}_goodput_min_bps" in rows[0]:
            t.add_column(f"{b} min–max", justify="right")
        t.add_column(f"{b} block p50", justify="right")
    for b in c.predictions:
        t.add_column(f"{b} goodput", justify="right")
    versus = [k for k in rows[0] if "_vs_" in k]
    for k in versus:
        t.add_column(k.replace("_", " "), justify="right")
    within = [k for k in rows[0] if "_inside_" in k]
    for k in within:
        t.add_column(k.replace("_", " "), justify="right")
    for row in rows:
        cells = [str(row["senders"])]
        for b in c.runs:
            cells.append(format_rate(row[f"{b}_goodput_bps"]))
            if repeated and f"{b}_goodput_min_bps" in row:
                lo, hi = row[f"{b}_goodput_min_bps"], row[f"{b}_goodput_max_bps"]
                cells.append(f"{format_rate(lo)}–{format_rate(hi)}")
            cells.append(_s(row[f"{b}_block_time_median_s"]))
        cells += [format_rate(row[f"{b}_goodput_bps"]) for b in c.predictions]
        cells += [f"{100 * row[k]:+.0f}%" for k in versus]
        cells += ["yes" if row[k] else "no" for k in within]
        t.add_row(*cells)
    if repeated:
        out.print(f"[dim]medians of {c.repeat} runs per point and backend[/dim]")
    out.print(t)


def print_bench(out: Console, r: Result, sru: int, servers: int) -> None:
    """One row: goodput and the block-time distribution of a real-cluster run."""
    import statistics

    blocks = r.block_times_s
    t = table()
    for col in ("servers", "goodput", "% link", "block p50", "block p99", "block max", "blocks"):
        t.add_column(col, justify="right")
    p99 = sorted(blocks)[min(len(blocks) - 1, int(0.99 * len(blocks)))]
    t.add_row(
        str(servers),
        format_rate(r.goodput_bps),
        f"{100 * r.goodput_fraction:.1f}%",
        _s(statistics.median(blocks)),
        _s(p99),
        _s(max(blocks)),
        f"{len(blocks)}" + (" (time limit)" if r.report["truncated"] else ""),
    )
    out.print(f"[bold]incast bench[/bold] · SRU {sru:,} B · {servers} servers")
    out.print(t)


def print_experiments(out: Console, exps: dict[str, Any]) -> None:
    t = table()
    t.add_column("name")
    t.add_column("reproduces")
    for name, e in exps.items():
        t.add_row(name, e.title)
    out.print(t)


def print_reproduction(out: Console, rep: Any) -> None:
    """The verdict of one experiment, claim by claim."""
    mark = "[green]agrees[/green]" if rep.agrees else "[yellow]differs[/yellow]"
    name, title = rep.experiment.name, rep.experiment.title
    out.print(f"[bold]{name}[/bold] · {title} · {mark} ({rep.wall_s:.1f}s)")
    for c in rep.findings.claims:
        sign = "[green]✓[/green]" if c.ok else "[red]✗[/red]"
        out.print(f"  {sign} {c.text}: {c.measured}")
    out.print(f"  [dim]→ {rep.out / 'verdict.md'}[/dim]")
