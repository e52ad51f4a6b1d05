"""The tables the commands print: what a person reads (``--json`` is for machines)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import pct_cell, table
from incastlab.cli.render_runs import print_comparison, print_ranking, print_runs
from incastlab.cli.tables import count, header, in_unit
from incastlab.cli.tables import seconds_cell as _s
from incastlab.units import format_rate, format_size

__all__ = [
    "count",
    "header",
    "in_unit",
    "print_bench",
    "print_calibration",
    "print_comparison",
    "print_experiments",
    "print_model",
    "print_ranking",
    "print_reproduction",
    "print_rto_random",
    "print_runs",
]

if TYPE_CHECKING:
    from rich.console import Console

    from incastlab.backends.model import ModelPoint
    from incastlab.model.calibrate import Calibration
    from incastlab.result import Result


def print_model(out: Console, err: Console, series: Sequence[tuple[str, list[ModelPoint]]]) -> None:
    """Per series: the onset and one row per sender count: the regime, the predicted RTOs per
    block and the term that dominates the block time."""
    from incastlab.plot import transport_label

    first = series[0][1][0]
    if first.ignored:
        err.print("[yellow]the model does not account for:[/yellow] " + ", ".join(first.ignored))
    chen = first.burst is None
    if not chen and first.constants is not None:
        k = first.constants
        tag = f"fitted with incastlab {k.version}" if k.version else "not fitted"
        err.print(f"burst model · constants {tag}: {k.named()} (--uncalibrated: Chen Eq. 1-4)")
        if first.correction is not None:
            err.print(
                "the mechanisms' goodput times a learned correction (learned x: regression "
                "trees fitted on random designs; --mechanisms: the mechanisms alone)"
            )
        fresh = k.fit.get("fresh")
        if fresh:
            # How far to trust it, as measured on designs no choice of the model has read.
            kept = round(fresh["points"] * (1 - fresh["flagged"]))
            err.print(
                f"validated on {fresh['points']:,} fresh random scenarios: within 1.5x of the "
                f"simulator on {fresh['within_1_5x_unflagged']:.0%} of the {kept:,} it does not "
                f"flag (!), the simulator inside its 10-90% on {fresh['inside_interval']:.0%}"
                + (" (with its learned correction)" if first.correction is None else "")
            )
    for label, ps in series:
        p0 = ps[0]
        head = f"[bold]incast model[/bold] · {transport_label([p0.scenario])}"
        head += f" · SRU {format_size(p0.sru)}"
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
        corrected = any(p.correction is not None for p in ps)
        cols = ["N", "regime", header("goodput", rate)]
        if corrected:
            cols.append(header("learned", "x"))
        if not chen:
            cols.append(header("sim 10-90%", rate))
        for col in (
            *cols,
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
            cells = [str(p.senders), regime + (" [yellow]![/yellow]" if p.outside else "")]
            cells.append(rate_cell(pr.goodput_bps))
            if corrected:
                cells.append("" if p.correction is None else f"{p.correction:.2f}")
            if not chen:
                lo, hi = p.interval or (math.nan, math.nan)
                cells.append(f"{rate_cell(lo)}-{rate_cell(hi)}")
            t.add_row(
                *cells,
                pct_cell(pr.goodput_bps / p.link_bps, sign=False),
                time_cell(pr.block_time_s),
                f"{pr.timeouts_per_block:.3g}",
                p.dominant,
            )
        out.print(t)
        flagged = sorted({f for p in ps for f in p.outside})
        if flagged:
            err.print(
                "[yellow]![/yellow] outside the domain the model was validated on (its "
                "interval is wider there): " + "; ".join(flagged),
                soft_wrap=True,
            )


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
        f"{k.named()}"
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
        needs = e.meta.get("awaits") or f"the {e.requires} transport"
        wait = f" [dim](needs {needs}; no reference run yet)[/dim]"
        t.add_row(name, e.title + (wait if e.awaiting else ""))
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
