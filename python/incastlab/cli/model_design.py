"""`incast model calibrate --random N`: fit the burst model on random designs and report its
error on another (:mod:`incastlab.model.design`), by axis, with the worst points and why, and on
fresh designs pooled."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import progress_bar
from incastlab.cli.json_text import print_json

if TYPE_CHECKING:
    from rich.console import Console

    from incastlab.model.design import Measured


def run_random(a: argparse.Namespace, out: Console, err: Console) -> int:
    """Simulate ``a.designs`` calibration designs, the held-out design and the ``a.fresh``
    ones (``a.random`` points each, ``a.seeds`` seeds a point), fit the constants and the
    interval on the calibration designs pooled, and with ``a.correct`` the learned correction
    on that many designs, score the others; ``a.save`` writes the constants (and the
    correction) into the package."""
    from incastlab.model import burst, design
    from incastlab.model import correction as correction_mod
    from incastlab.model.fit import fit_design

    cache = Path(a.cache).expanduser() if a.cache else None
    fitted_on = design.calibration_seeds(a.designs)
    corrected_on = design.calibration_seeds(a.correct)
    plan = [("calibration", s) for s in design.calibration_seeds(max(a.designs, a.correct))]
    plan += [("held out", design.HELD_OUT_SEED)]
    plan += [("fresh", s) for s in a.fresh]
    rows: dict[str, list[Measured]] = {"calibration": [], "held out": [], "fresh": []}
    unfinished: list[str] = []
    with progress_bar(err, "simulating", not a.json) as bar:
        for name, seed in plan:
            task = bar.add_task(f"{name} design {seed}", total=None)

            def done(i: int, n: int, t: Any = task) -> None:
                bar.update(t, completed=i, total=n)

            measured, missed = design.measure(
                design.design(a.random, seed),
                seeds=a.seeds,
                cache=cache,
                workers=a.workers,
                on_point=done,
            )
            for m in measured:
                m.design = seed
            rows[name] += measured
            if name != "calibration":
                unfinished += [f"design {seed}: {u}" for u in missed]
    every, held, fresh = rows["calibration"], rows["held out"], rows["fresh"]
    cal = [r for r in every if r.design in fitted_on]
    c = fit_design(cal, seeds=fitted_on)
    fix = None
    if a.correct:
        from incastlab.model.fit_correction import fit_correction

        if not a.json:
            err.print(f"fitting the correction on {a.correct} designs ({len(every)} points)")
        fix = fit_correction(
            [r for r in every if r.design in corrected_on], c, corrected_on, a.workers
        )
    design.score(held, c, fix)
    design.score(fresh, c, fix)
    c = _with_scores(c, held, fresh, a.fresh)
    if a.save:
        stale = fix is None and correction_mod.fitted(c.named()) is None
        written = burst.save(c)
        if fix is not None:
            correction_mod.save(fix)
        elif stale and correction_mod.CORRECTION_FILE.exists():
            err.print(
                "[yellow]the package's learned correction was fitted with other constants and "
                "is no longer applied: fit it again with --correct K[/yellow]"
            )
        design.score(cal, c, fix)
        kept = design.save_subset(cal)
        if not a.json:
            err.print(
                f"saved the constants in {written.name}"
                + (" and the correction in correction.json" if fix is not None else "")
                + f", a subset of the design in {kept.name}"
            )
    if a.json:
        print_json(
            {
                "constants": c.to_json(),
                "held_out": design.summary(held),
                "fresh": {"seeds": a.fresh, **design.summary(fresh)} if fresh else None,
                "by_axis": design.by_axis(held),
                "unfinished": unfinished,
                "points": [_point_json(r) for r in held],
            }
        )
        return 0
    print_random(out, c, held, fresh, len(a.fresh), unfinished, a.worst)
    return 0


def _with_scores(c: Any, held: list[Measured], fresh: list[Measured], seeds: list[int]) -> Any:
    """The constants with their held-out scores (and the fresh designs', if any) in ``fit``,
    kept with them for the record."""
    import dataclasses

    from incastlab.model.design import summary

    def kept(rows: list[Measured]) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in summary(rows).items()}

    fit = {**c.fit, "held_out": kept(held)}
    if fresh:
        fit["fresh"] = {"seeds": seeds, **kept(fresh)}
    return dataclasses.replace(c, fit=fit)


def _point_json(r: Measured) -> dict[str, Any]:
    return {
        **r.point,
        "sim_bps": r.sim_bps,
        "sim_bps_by_seed": r.by_seed,
        "model_bps": r.model_bps,
        "interval_bps": [r.low_bps, r.high_bps],
        "regime": r.regime,
        "dominant": r.dominant,
        "timeouts_per_block": r.model_timeouts,
        "sim_timeouts_per_block": r.sim_timeouts,
        "outside_domain": r.flagged,
    }


def print_random(
    out: Console,
    c: Any,
    held: list[Measured],
    fresh: list[Measured],
    designs: int,
    unfinished: list[str],
    worst: int,
) -> None:
    """The held-out figures (and the fresh designs', pooled) against the model's targets; per
    axis and the worst points of the held-out design."""
    from incastlab.cli.common import table
    from incastlab.model import design

    s = design.summary(held)
    f = design.summary(fresh) if fresh else None
    fitted = len(c.fit.get("seeds", [])) or 1
    out.print(
        f"[bold]burst model on {s['points']} random held-out scenarios[/bold]"
        + (f" and {f['points']} from {designs} fresh designs" if f else "")
        + f" (simulator: mean block time of {len(held[0].by_seed) if held else 0} seeds; "
        f"constants {c.named()}, fitted on {fitted} other random design"
        + ("s" if fitted > 1 else "")
        + ")"
    )
    figures = [
        ("median |model/sim - 1|", "median_error", "<= 0.10"),
        ("  among unflagged", "median_error_unflagged", ""),
        ("within 1.5x, all", "within_1_5x", ""),
        ("within 1.5x, unflagged", "within_1_5x_unflagged", ">= 0.90"),
        ("flagged outside the domain", "flagged", "<= 0.10"),
        ("simulator inside the 10-90% interval", "inside_interval", ">= 0.80"),
    ]
    t = table()
    for col in ("figure", "held out", *(["fresh"] if f else []), "target"):
        t.add_column(col, justify="right")

    def shown(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    for name, key, target in figures:
        t.add_row(name, shown(s[key]), *([shown(f[key])] if f else []), target)
    out.print(t)
    for key, groups in design.by_axis(held).items():
        t = table()
        for col in (key, "points", "median err", "within 1.5x", "flagged", "inside"):
            t.add_column(col, justify="right")
        for g, gs in groups.items():
            t.add_row(
                g,
                str(gs["points"]),
                f"{gs['median_error']:.2f}",
                f"{gs['within_1_5x']:.2f}",
                f"{gs['flagged']:.2f}",
                f"{gs['inside_interval']:.2f}",
            )
        out.print(t)
    out.print(
        f"[bold]worst {worst} points[/bold] (model/sim; why: the regime and the term the model "
        "puts first, RTOs per block of each)"
    )
    for r in sorted(held, key=lambda r: -abs(math.log(r.ratio)))[:worst]:
        flag = f" [yellow]flagged: {'; '.join(r.flagged)}[/yellow]" if r.flagged else ""
        out.print(
            f"{r.ratio:7.2f}x model {r.model_bps / 1e6:.4g} Mbps, simulator "
            f"{r.sim_bps / 1e6:.4g} (seeds {', '.join(f'{x / 1e6:.3g}' for x in r.by_seed)}); "
            f"{r.regime}, {r.dominant}; RTOs/block model {r.model_timeouts:.3g}, simulator "
            f"{r.sim_timeouts:.3g}: {design.label(r.point)}{flag}",
            soft_wrap=True,
        )
    for u in unfinished:
        out.print(f"unfinished within run.max_time: {u}", soft_wrap=True)
