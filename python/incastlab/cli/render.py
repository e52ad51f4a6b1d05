"""The tables the commands print: what a person reads (``--json`` is for machines)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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


# Tables fit an 80-column terminal: each column states its unit once, in its header, and
# its cells carry the numbers alone (three significant digits).

_RATES = (("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("bps", 1.0))
_TIMES = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def _num(x: float) -> str:
    """Three significant digits; whole numbers from 1000 on, with thousands separators."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def in_unit(values: Sequence[float | None], kind: str) -> tuple[str, Callable[[float | None], str]]:
    """The unit of a column of rates (bits per second) or times (seconds), chosen by its
    largest value (times in seconds only from 10 s), and the cell formatter in it."""
    present = [abs(v) for v in values if v is not None and math.isfinite(v)]
    top = max(present, default=0.0)
    units = _RATES if kind == "rate" else _TIMES
    floor = 10.0 if kind == "time" else 1.0
    unit, scale = next(
        ((u, k) for u, k in units if top >= k * (floor if u == units[0][0] else 1.0)),
        units[-1] if top else units[1],
    )

    def cell(v: float | None) -> str:
        return "-" if v is None or not math.isfinite(v) else _num(v / scale)

    return unit, cell


def count(n: float | None) -> str:
    """A count in at most five characters: ``4,867``, ``584k``, ``1.73M``."""
    if n is None:
        return "-"
    if abs(n) < 10_000:
        return f"{n:,.0f}" if n == int(n) else f"{n:.3g}"
    for suffix, k in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= k:
            v = n / k
            return f"{v:.0f}{suffix}" if abs(v) >= 100 else f"{v:.3g}{suffix}"
    return f"{n:.3g}"


def header(name: str, unit: str = "") -> str:
    """A column header: the name over its unit."""
    return f"{name}\n{unit}" if unit else name


def kv_table(results: Sequence[Result], walls: Sequence[float]) -> Table:
    """The key-value store, one row per run: load offered and carried, utilization (average
    and the fullest millisecond), drops and timeouts per second, get latency, goodput."""
    t = table()
    # Fabric drops (ports between switches) and puts get their own columns only where a run
    # has any: a topology with switch-to-switch links (a star's report has no such figure), a
    # workload with puts.
    fabric = any(r.record()["kv_fabric_drops_per_s"] is not None for r in results)
    puts = any(r.record()["kv_puts"] for r in results)
    cols = ["hosts", "offered", "carried", "util", "peak 1ms", "drops/s/host"]
    cols += ["fabric drops/s"] if fabric else []
    cols += ["timeouts/s", "get p50", "get p99", "get p99.9", "gets"]
    if puts:
        cols += ["put p50", "put p99", "puts"]
    cols += ["goodput", "wall"]
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
            *((f"{row['kv_fabric_drops_per_s']:,.1f}",) if fabric else ()),
            f"{row['kv_timeouts_per_s']:,.1f}",
            _s(row["kv_latency_p50_s"]),
            _s(row["kv_latency_p99_s"]),
            _s(row["kv_latency_p999_s"]),
            f"{row['kv_gets']:,}",
            *(
                (
                    _s(row["kv_put_latency_p50_s"]),
                    _s(row["kv_put_latency_p99_s"]),
                    f"{row['kv_puts']:,}",
                )
                if puts
                else ()
            ),
            format_rate(row["kv_goodput_bps"]),
            f"{wall:.2f}s",
        )
    return t


def results_table(results: Sequence[Result], walls: Sequence[float]) -> Table:
    """One row per sender count: goodput, the workload's times, timeouts, drops, wall time;
    units in the headers."""
    kind = results[0].report["workload"]
    if kind == "kv_gets":
        return kv_table(results, walls)
    rows = [r.row() for r in results]
    rate, rate_cell = in_unit([r.goodput_bps for r in results], "rate")
    t = table()
    cols: list[tuple[str, list[str]]] = [
        ("N", [str(r.senders) for r in results]),
        (header("goodput", rate), [rate_cell(r.goodput_bps) for r in results]),
        (header("link", "%"), [pct_cell(r.goodput_fraction, sign=False) for r in results]),
    ]
    if kind == "queries":
        cols.append(("queries", [f"{row['queries']:,}" for row in rows]))
        for name, key in (("FCT mean", "query_fct_mean_s"), ("FCT p99", "query_fct_p99_s")):
            unit, cell = in_unit([row[key] for row in rows], "time")
            cols.append((header(name, unit), [cell(row[key]) for row in rows]))
    elif kind == "incast":
        unit, cell = in_unit([row["fct_max_s"] for row in rows], "time")
        cols.append((header("last FCT", unit), [cell(row["fct_max_s"]) for row in rows]))
        cols.append(
            (
                header("vs optimal", "%"),
                [
                    "-" if row["fct_overhead"] is None else f"{100 * row['fct_overhead']:+.1f}"
                    for row in rows
                ],
            )
        )
    else:
        for name, key in (("block p50", "block_time_median_s"), ("block max", "block_time_max_s")):
            unit, cell = in_unit([row[key] for row in rows], "time")
            cols.append((header(name, unit), [cell(row[key]) for row in rows]))
        cols.append(
            (
                header("RTO", "blocks"),
                [
                    "-"
                    if row["blocks_with_timeouts"] is None
                    else f"{row['blocks_with_timeouts']}/{row['blocks']}"
                    for row in rows
                ],
            )
        )
    if any(r.scenario["background"]["flows"] for r in results):
        unit, cell = in_unit([row["background_bps"] for row in rows], "rate")
        cols.append((header("backgr.", unit), [cell(row["background_bps"]) for row in rows]))
    if any(r.scenario["topology"]["pfc"] for r in results):
        cols.append(("pauses", [count(row["pfc_pauses"]) for row in rows]))
    cols += [
        (header("time-", "outs"), [count(r.timeouts) for r in results]),
        ("drops", [count(r.drops) for r in results]),
        ("events", [count(r.events) for r in results]),
        (header("wall", "s"), [f"{w:.2f}" for w in walls]),
    ]
    for name, _ in cols:
        t.add_column(name, justify="right")
    for i in range(len(results)):
        t.add_row(*[cells[i] for _, cells in cols])
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
        rate, rate_cell = in_unit([p.prediction.goodput_bps for p in ps], "rate")
        unit, time_cell = in_unit([p.prediction.block_time_s for p in ps], "time")
        t = table()
        for col in (
            "N",
            "regime",
            header("goodput", rate),
            header("link", "%"),
            header("block time", unit),
            header("RTOs/", "block"),
            "dominant",
        ):
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
                rate_cell(pr.goodput_bps),
                pct_cell(pr.goodput_bps / p.link_bps, sign=False),
                time_cell(pr.block_time_s),
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

    summary = c.summary()
    held, fitted = summary["held_out"], summary["fitted_on"]
    k = c.constants
    seeds = k.fit.get("seeds", 1)
    out.print(
        f"[bold]incast model calibrate[/bold] · {held['points'] + fitted['points']} points, "
        f"fitted on {fitted['points']}, scored on the other {held['points']} · "
        f"{seeds} seed{'s' if seeds > 1 else ''} a point · "
        f"tail_timeout {k.tail_timeout:g}, spread {k.spread:g}"
    )
    out.print(
        f"held out: median error {100 * held['median_error']:.0f}%, 90th percentile "
        f"{100 * held['p90_error']:.0f}%, regime right on {100 * held['regime_right']:.0f}% · "
        f"Chen Eq. 1-4 (papers' constants): {100 * held['chen_median_error']:.0f}%, "
        f"{100 * held['chen_p90_error']:.0f}%"
    )
    if "seed_p90_error" in held:
        out.print(
            f"the simulator against itself (its first seed against the other {seeds - 1} "
            f"pooled): median {100 * held['seed_median_error']:.0f}%, 90th percentile "
            f"{100 * held['seed_p90_error']:.0f}%"
        )
    t = table()
    for col in (
        "axis",
        "value",
        "points",
        header("median", "error %"),
        header("p90", "error %"),
        header("regime", "right %"),
        header("Chen", "median %"),
        header("Chen", "p90 %"),
    ):
        t.add_column(col, justify="right")
    for axis in ("variant", "rto_min", "buffer", "sru", "senders"):
        for v, e in c.breakdown(axis).items():
            t.add_row(
                axis,
                str(v),
                str(e["points"]),
                f"{100 * e['median_error']:.0f}",
                f"{100 * e['p90_error']:.0f}",
                f"{100 * e['regime_right']:.0f}",
                f"{100 * e['chen_median_error']:.0f}",
                f"{100 * e['chen_p90_error']:.0f}",
            )
    out.print(t)
    worst = c.worst(10)
    rate, rate_cell = in_unit([q.sim_bps for q in worst] + [q.model_bps for q in worst], "rate")
    w = table(title="where the model breaks down (worst held-out points)")
    heads = ["variant", "N", "SRU", "buffer", "RTOmin", header("sim", rate)]
    heads += [header("model", rate), header("model/", "sim"), header("RTOs", "sim")]
    for col in (*heads, header("RTOs", "model"), "dominant"):
        w.add_column(col, justify="right")
    for q in worst:
        w.add_row(
            q.variant,
            str(q.senders),
            q.sru,
            q.buffer,
            q.rto_min,
            rate_cell(q.sim_bps),
            rate_cell(q.model_bps),
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
    rate, rate_cell = in_unit([r.goodput_bps for o in ranked for r in o.results], "rate")
    p50 = [o.block_quantile(0.5) for o in ranked]
    p99 = [o.block_quantile(0.99) for o in ranked]
    unit, time_cell = in_unit(p50 + p99, "time")
    base = baseline.mean_goodput
    rows = []
    for i, o in enumerate(ranked, 1):
        cells = [str(i), o.mitigation.name]
        cells += [rate_cell(r.goodput_bps) for r in o.results]
        if len(ns) > 1:
            cells.append(rate_cell(o.mean_goodput))
        gain = o.mean_goodput / base if base else float("nan")
        cells += [
            f"{gain:.2g}×",
            time_cell(p50[i - 1]),
            time_cell(p99[i - 1]),
            f"{o.timeouts_per_block:.2f}",
        ]
        rows.append(cells)
    heads = ["#", "mitigation", *(header(f"N={n}", rate) for n in ns)]
    heads += [header("mean", rate)] if len(ns) > 1 else []
    heads += [header("vs", "base"), header("block p50", unit), header("p99", unit)]
    heads += [header("RTOs/", "block")]
    whats = [o.mitigation.what for o in ranked]
    out.print(with_text_column(out, heads, rows, "what", whats))
    for name, why in ranking.skipped:
        err.print(f"[yellow]skipped {name}:[/yellow] {why}")


def with_text_column(
    out: Console, heads: list[str], rows: list[list[str]], name: str, texts: list[str]
) -> Table:
    """A table of ``rows`` (numbers, right-aligned, never wrapped) and a last column of
    ``texts`` cut to the width the console has left (left out if under 12 characters)."""
    from rich.measure import Measurement

    def build(extra: int | None) -> Table:
        t = table()
        for h in heads:
            t.add_column(h, justify="right" if h != heads[1] else "left", no_wrap=True)
        if extra:
            t.add_column(name, style="dim", no_wrap=True, overflow="ellipsis", max_width=extra)
        for cells, text in zip(rows, texts, strict=True):
            t.add_row(*cells, *([text] if extra else []))
        return t

    used = Measurement.get(out, out.options, build(None)).maximum
    room = out.width - used - 2
    return build(room if room >= 12 else None)


def print_comparison(out: Console, c: Comparison, rows: Sequence[dict[str, Any]]) -> None:
    """One row per sender count; with repetitions, medians, real TCP's min-max and whether
    the simulator's median lies inside it. Units in the headers."""
    repeated = c.repeat > 1
    rate_keys = [k for k in rows[0] if k.endswith("_bps")]
    rate, rate_cell = in_unit([row[k] for row in rows for k in rate_keys], "rate")
    time_keys = [k for k in rows[0] if k.endswith("_block_time_median_s")]
    unit, time_cell = in_unit([row[k] for row in rows for k in time_keys], "time")
    t = table()
    t.add_column("N", justify="right")
    for b in c.runs:
        t.add_column(header(b + (" p50" if repeated else ""), rate), justify="right")
        if repeated and f"{b}_goodput_min_bps" in rows[0]:
            t.add_column(header(f"{b} min–max", rate), justify="right")
        t.add_column(header(f"{b} block", unit), justify="right")
    for b in c.predictions:
        t.add_column(header(b, rate), justify="right")
    versus = [k for k in rows[0] if "_vs_" in k]
    for k in versus:
        t.add_column(header(k.replace("_", " "), "%"), justify="right")
    within = [k for k in rows[0] if "_inside_" in k]
    for k in within:
        t.add_column(k.replace("_", " "), justify="right")
    for row in rows:
        cells = [str(row["senders"])]
        for b in c.runs:
            cells.append(rate_cell(row[f"{b}_goodput_bps"]))
            if repeated and f"{b}_goodput_min_bps" in row:
                lo, hi = row[f"{b}_goodput_min_bps"], row[f"{b}_goodput_max_bps"]
                cells.append(f"{rate_cell(lo)}–{rate_cell(hi)}")
            cells.append(time_cell(row[f"{b}_block_time_median_s"]))
        cells += [rate_cell(row[f"{b}_goodput_bps"]) for b in c.predictions]
        cells += [f"{100 * row[k]:+.0f}" for k in versus]
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
    """The verdict of one experiment, claim by claim, each with its grade and tolerance."""
    from incastlab.reproductions.findings import MARKS

    style = {"agrees": "green", "shape only": "yellow", "disagrees": "red"}
    g = rep.grade
    name, title = rep.experiment.name, rep.experiment.title
    out.print(f"[bold]{name}[/bold] · {title} · [{style[g]}]{g}[/{style[g]}] ({rep.wall_s:.1f}s)")
    for c in rep.findings.claims:
        mark = f"[{style[c.grade]}]{MARKS[c.grade]}[/{style[c.grade]}]"
        out.print(f"  {mark} {c.text}: {c.measured} [dim](agrees if {c.tolerance})[/dim]")
    out.print(f"  [dim]→ {rep.out / 'verdict.md'}[/dim]")
