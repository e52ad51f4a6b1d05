"""The tables of runs: `incast sim` and `emulate` (one row per sender count, the key-value
store's own), `mitigate` (the ranking) and `compare` (backends side by side). Each title line
names the transport, TCP profile and congestion control that ran; each table fits the console
(:mod:`incastlab.cli.tables`), ``wide`` prints every column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import pct_cell
from incastlab.cli.tables import ALWAYS, Col, count, header, in_unit, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from incastlab.result import Result
    from incastlab.series import SeriesRun
    from incastlab.studies.compare import Comparison
    from incastlab.studies.mitigate import Ranking
    from incastlab.studies.mitigate_rdma import RdmaRanking


def kv_columns(results: Sequence[Result], walls: Sequence[float]) -> list[Col]:
    """The key-value store, one row per run: load offered and carried, utilization (average
    and the fullest millisecond), drops and timeouts per second, get latency, goodput; units
    in the headers."""
    rows = [r.record() for r in results]
    # Fabric drops (ports between switches) and puts get their own columns only where a run
    # has any: a topology with switch-to-switch links (a star's report has no such figure), a
    # workload with puts.
    fabric = any(row["kv_fabric_drops_per_s"] is not None for row in rows)
    puts = any(row["kv_puts"] for row in rows)

    def pct(key: str) -> list[str]:
        return [f"{100 * row[key]:.1f}" for row in rows]

    def per_s(key: str) -> list[str]:
        return ["-" if row[key] is None else _rate_num(row[key]) for row in rows]

    def times(name: str, key: str, keep: int) -> Col:
        unit, cell = in_unit([row[key] for row in rows], "time")
        return Col(header(name, unit), [cell(row[key]) for row in rows], keep)

    cols = [
        Col("hosts", [str(r.senders) for r in results], ALWAYS),
        Col(header("offered", "%"), pct("kv_offered_load"), 8),
        Col(header("carried", "%"), pct("kv_carried_load"), 8),
        Col(header("util", "%"), pct("kv_utilization"), 4),
        Col(header("peak", "1ms %"), pct("kv_peak_utilization_1ms"), 3),
        Col(header("drops/s", "per host"), per_s("kv_drops_per_s_per_host"), 8),
    ]
    if fabric:
        cols.append(Col(header("drops/s", "fabric"), per_s("kv_fabric_drops_per_s"), 6))
    cols += [
        Col(header("time-", "outs/s"), per_s("kv_timeouts_per_s"), 7),
        times("get\np50", "kv_latency_p50_s", 6),
        times("get\np99", "kv_latency_p99_s", 8),
        times("get\np99.9", "kv_latency_p999_s", 5),
        Col("gets", [count(row["kv_gets"]) for row in rows], 2),
    ]
    if puts:
        cols += [
            times("put\np50", "kv_put_latency_p50_s", 4),
            times("put\np99", "kv_put_latency_p99_s", 7),
            Col("puts", [count(row["kv_puts"]) for row in rows], 1),
        ]
    rate, rate_cell = in_unit([row["kv_goodput_bps"] for row in rows], "rate")
    cols += [
        Col(header("goodput", rate), [rate_cell(row["kv_goodput_bps"]) for row in rows], 6),
        Col(header("wall", "s"), [f"{w:.2f}" for w in walls], 0),
    ]
    return cols


def flows_columns(results: Sequence[Result]) -> list[Col]:
    """A flow schedule: its flows, and the FCT slowdown (completion time over the flow's
    ideal one) of its background flows and of its incast bursts' flows, median and p99."""
    rows = [r.record() for r in results]

    def ratio(key: str) -> list[str]:
        return ["-" if row[key] is None else f"{row[key]:.2f}" for row in rows]

    flows = [str(len(r.report["flows"])) for r in results]
    return [
        Col("flows", flows, 3),
        Col(header("slowdown", "p50"), ratio("fct_slowdown_background_p50"), 8),
        Col(header("slowdown", "p99"), ratio("fct_slowdown_background_p99"), 8),
        Col(header("incast", "p50"), ratio("fct_slowdown_incast_p50"), 7),
        Col(header("incast", "p99"), ratio("fct_slowdown_incast_p99"), 7),
    ]


def _rate_num(x: float) -> str:
    """A count per second: one decimal under 100, whole numbers (with separators) above."""
    return f"{x:.1f}" if abs(x) < 100 else f"{x:,.0f}"


def results_columns(
    results: Sequence[Result], walls: Sequence[float], *, wide: bool = False
) -> list[Col]:
    """One row per sender count: goodput, the workload's times, timeouts, probe stalls (when
    some run has one: then without the event count, unless ``wide``), drops, wall time; units
    in the headers."""
    kind = results[0].report["workload"]
    if kind == "kv_gets":
        return kv_columns(results, walls)
    rows = [r.row() for r in results]
    rate, rate_cell = in_unit([r.goodput_bps for r in results], "rate")
    cols = [
        Col("N", [str(r.senders) for r in results], ALWAYS),
        Col(header("goodput", rate), [rate_cell(r.goodput_bps) for r in results], 8),
        Col(header("link", "%"), [pct_cell(r.goodput_fraction, sign=False) for r in results], 8),
    ]

    def times(name: str, key: str, keep: int) -> Col:
        unit, cell = in_unit([row[key] for row in rows], "time")
        return Col(header(name, unit), [cell(row[key]) for row in rows], keep)

    if kind == "flows":
        cols += flows_columns(results)
    elif kind == "queries":
        cols.append(Col("queries", [f"{row['queries']:,}" for row in rows], 3))
        cols += [times("FCT mean", "query_fct_mean_s", 6), times("FCT p99", "query_fct_p99_s", 7)]
    elif kind == "incast":
        cols.append(times("last FCT", "fct_max_s", 7))
        over = [
            "-" if row["fct_overhead"] is None else f"{100 * row['fct_overhead']:+.1f}"
            for row in rows
        ]
        cols.append(Col(header("vs optimal", "%"), over, 6))
    else:
        cols += [
            times("block p50", "block_time_median_s", 6),
            times("block max", "block_time_max_s", 7),
        ]
        rto = [
            "-"
            if row["blocks_with_timeouts"] is None
            else f"{row['blocks_with_timeouts']}/{row['blocks']}"
            for row in rows
        ]
        cols.append(Col(header("RTO", "blocks"), rto, 7))
    stalled = any(row["probe_stalls"] for row in rows)
    if stalled:
        # Waits of RTOmin/2 or more that no timeout ended (a loss probe capped at the RTO):
        # shown only when some run has one, so the tables of runs without read as before.
        if kind == "sync_read":
            blocks = [f"{row['blocks_with_probe_stalls'] or 0}/{row['blocks']}" for row in rows]
            cols.append(Col(header("stall", "blocks"), blocks, 7))
        else:
            stalls = [count(row["probe_stalls"] or 0) for row in rows]
            cols.append(Col(header("probe", "stalls"), stalls, 7))
    if any(r.scenario["background"]["flows"] for r in results):
        unit, cell = in_unit([row["background_bps"] for row in rows], "rate")
        cols.append(Col(header("backgr.", unit), [cell(row["background_bps"]) for row in rows], 5))
    if any(r.scenario["topology"]["pfc"] for r in results):
        cols.append(Col("pauses", [count(row["pfc_pauses"]) for row in rows], 4))
    cols += [
        Col(header("time-", "outs"), [count(r.timeouts) for r in results], 6),
        Col("drops", [count(r.drops) for r in results], 5),
        Col("events", [count(r.events) for r in results], 1),
        Col(header("wall", "s"), [f"{w:.2f}" for w in walls], 0),
    ]
    if stalled and not wide:
        # The stalls take the simulator's event count's place: the table still fits 80
        # columns.
        cols = [c for c in cols if c.head != "events"]
    return cols


def print_runs(
    out: Console, run: SeriesRun, command: str, suffix: str = "", *, wide: bool = False
) -> None:
    """Each series' title line and table."""
    from incastlab.plot import scenario_line

    for (_label, rs), walls in zip(run.series, run.walls, strict=True):
        title = f"[bold]incast {command}[/bold] · {scenario_line(rs[0])}{suffix}"
        print_table(out, title, results_columns(rs, walls, wide=wide), wide=wide)


def print_ranking(out: Console, err: Console, ranking: Ranking, *, wide: bool = False) -> None:
    """The mitigations, best first, against the baseline, each with what it does; then the
    skipped ones."""
    from incastlab.plot import scenario_line

    ranked, baseline = ranking.ranked, ranking.baseline
    ns = [r.senders for r in ranked[0].results]
    rate, rate_cell = in_unit([r.goodput_bps for o in ranked for r in o.results], "rate")
    p50 = [o.block_quantile(0.5) for o in ranked]
    p99 = [o.block_quantile(0.99) for o in ranked]
    unit, time_cell = in_unit(p50 + p99, "time")
    base = baseline.mean_goodput
    cols = [
        Col("#", [str(i) for i in range(1, len(ranked) + 1)], ALWAYS),
        Col("mitigation", [o.mitigation.name for o in ranked], ALWAYS, left=True),
    ]
    # With several sender counts the mean ranks them; each count's goodput goes first.
    each = 3 if len(ns) > 1 else ALWAYS
    cols += [
        Col(header(f"N={n}", rate), [rate_cell(o.results[k].goodput_bps) for o in ranked], each)
        for k, n in enumerate(ns)
    ]
    if len(ns) > 1:
        cols.append(Col(header("mean", rate), [rate_cell(o.mean_goodput) for o in ranked], 8))
    gains = [f"{o.mean_goodput / base:.2g}×" if base else "-" for o in ranked]
    cols += [
        Col(header("vs", "base"), gains, 8),
        Col(header("block", f"p50 {unit}"), [time_cell(v) for v in p50], 5),
        Col(header("block", f"p99 {unit}"), [time_cell(v) for v in p99], 7),
        Col(header("RTOs/", "block"), [f"{o.timeouts_per_block:.2f}" for o in ranked], 6),
    ]
    title = f"[bold]incast mitigate[/bold] · {scenario_line(baseline.results[0])}"
    what = ("what", [o.mitigation.what for o in ranked])
    print_table(out, title, cols, wide=wide, text=what)
    for name, why in ranking.skipped:
        err.print(f"[yellow]skipped {name}:[/yellow] {why}")


def print_rdma_ranking(
    out: Console, err: Console, ranking: RdmaRanking, *, wide: bool = False
) -> None:
    """The RDMA remedies, earliest last flow first: completions (means over the sender
    counts), PFC's pauses and paused time, victims, peak buffer, drops; then each remedy's
    keys and its effect against the baseline, and the skipped ones."""
    from incastlab.plot import scenario_line
    from incastlab.studies.mitigate_rdma import effect

    ranked, base = ranking.ranked, ranking.baseline
    last = [o.last_s for o in ranked]
    mean = [o.mean_s for o in ranked]
    unit, time_cell = in_unit(last + mean, "time")
    paused = [o.paused_s for o in ranked]
    p_unit, p_cell = in_unit(paused, "time")
    gains = [_times(o.last_s / base.last_s) if o.last_s and base.last_s else "-" for o in ranked]
    cols = [
        Col("#", [str(i) for i in range(1, len(ranked) + 1)], ALWAYS),
        Col("remedy", [o.remedy.name for o in ranked], ALWAYS, left=True),
        Col(header("last flow", unit), [time_cell(v) for v in last], ALWAYS),
        Col(header("vs", "base"), gains, 8),
        Col(header("mean flow", unit), [time_cell(v) for v in mean], 7),
        Col("pauses", [count(o.pauses) for o in ranked], ALWAYS),
        Col(header("paused", p_unit), [p_cell(v) for v in paused], 5),
        Col("victims", [count(o.victims) for o in ranked], 4),
        Col(header("peak buf", "KB"), [count(_kb(o.peak_bytes)) for o in ranked], 6),
        Col("drops", [count(o.drops) for o in ranked], 6),
    ]
    ns = ",".join(str(r.senders) for r in base.results)
    title = f"[bold]incast mitigate[/bold] · {scenario_line(base.results[0])}"
    if len(base.results) > 1:
        title += f" · means over N = {ns}"
    print_table(out, title, cols, wide=wide)
    for o in ranked:
        if o is base:
            continue
        keys = ", ".join(f"{k} = {_shown(v)}" for k, v in o.changed.items())
        out.print(f"[bold]{o.remedy.name}[/bold] · {o.remedy.what} · {keys}")
        out.print(f"  [dim]{effect(o, base)}; {o.remedy.why}[/dim]")
    for name, why in ranking.skipped:
        err.print(f"[yellow]skipped {name}:[/yellow] {why}")


def _times(x: float) -> str:
    return f"{x:.2f}×" if x < 10 else f"{x:.3g}×"


def _kb(b: float | None) -> float | None:
    return None if b is None else round(b / 1000)


def _shown(v: Any) -> str:
    """A scenario value as TOML writes it (``none`` for an unset key)."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return f'"{v}"' if isinstance(v, str) else str(v)


def print_comparison(
    out: Console, c: Comparison, rows: Sequence[dict[str, Any]], *, wide: bool = False
) -> None:
    """One row per sender count; with repetitions, medians, real TCP's min-max and whether
    the simulator's median lies inside it. Units in the headers."""
    from incastlab.plot import scenario_line

    repeated = c.repeat > 1
    rate_keys = [k for k in rows[0] if k.endswith("_bps")]
    rate, rate_cell = in_unit([row[k] for row in rows for k in rate_keys], "rate")
    time_keys = [k for k in rows[0] if k.endswith("_block_time_median_s")]
    unit, time_cell = in_unit([row[k] for row in rows for k in time_keys], "time")
    cols = [Col("N", [str(row["senders"]) for row in rows], ALWAYS)]
    for b in c.runs:
        good = [rate_cell(row[f"{b}_goodput_bps"]) for row in rows]
        cols.append(Col(header(b + (" p50" if repeated else ""), rate), good, 8))
        if repeated and f"{b}_goodput_min_bps" in rows[0]:
            span = [
                f"{rate_cell(row[f'{b}_goodput_min_bps'])}–{rate_cell(row[f'{b}_goodput_max_bps'])}"
                for row in rows
            ]
            cols.append(Col(header(f"{b} min–max", rate), span, 6))
        block = [time_cell(row[f"{b}_block_time_median_s"]) for row in rows]
        cols.append(Col(header(f"{b} block", unit), block, 4))
    for b in c.predictions:
        cols.append(Col(header(b, rate), [rate_cell(row[f"{b}_goodput_bps"]) for row in rows], 7))
    for k in [k for k in rows[0] if "_vs_" in k]:
        cells = [f"{100 * row[k]:+.0f}" for row in rows]
        cols.append(Col(header(k.replace("_", " "), "%"), cells, 5))
    for k in [k for k in rows[0] if "_inside_" in k]:
        cols.append(Col(k.replace("_", " "), ["yes" if row[k] else "no" for row in rows], 3))
    first = next((rs[0] for rs in (*c.runs.values(), *c.predictions.values()) if rs), None)
    title = "[bold]incast compare[/bold]" + (f" · {scenario_line(first)}" if first else "")
    if repeated:
        title += f"\n[dim]medians of {c.repeat} runs per point and backend[/dim]"
    print_table(out, title, cols, wide=wide)
