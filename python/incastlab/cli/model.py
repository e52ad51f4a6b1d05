"""`incast model` and its `rto-random` and `calibrate` subcommands: the analytical model."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import (
    FIGURE,
    Parser,
    UsageError,
    add_workers_flag,
    fraction,
    out_file,
    progress_bar,
    seconds_arg,
    size_arg,
    tracking,
    whole,
)
from incastlab.cli.flags import add_scenario_flags, series_from, sru_list_as_vary
from incastlab.cli.json_text import print_json
from incastlab.units import UnitError, parse_int_ranges, shown

if TYPE_CHECKING:
    from rich.console import Console

MODEL_EXAMPLES = """\
examples:
  incast model --senders 1..64 --sru 64KB --buffer 32KB
  incast model --senders 1..32 --sru 16KB,256KB --initial-window 1 --plot vs-sim.png
  incast model --senders 1..20 --sru 16KB,32KB,64KB --initial-window 1 --uncalibrated --plot f4.png
  incast model --senders 1..48 --sru 64KB,256KB,1MB --rtt 1ms --uncalibrated --plot fig2.png
  incast model examples/incast-collapse.toml --json
  incast model rto-random --rto-min 10ms --delta 4ms --senders 1..256
"""


def add_model_parser(sub: Any) -> None:
    m = sub.add_parser(
        "model",
        help="the analytical model for the same scenarios, in milliseconds",
        description="Predict goodput per sender count with the burst model: each block's "
        "synchronized bursts (from the initial window, or the window carried over) against the "
        "port buffer, which senders lose a whole window or their tail (an RTO) and the serial "
        "RTO waits with backoff that follow; constants fitted against the simulator and saved "
        "with the package (`incast model calibrate`). Prints per point the regime, the "
        "range the simulator is expected in (10-90%), the predicted timeouts per block and "
        "the term that dominates the block time, and flags (!) a point outside the domain "
        "the model was validated on, naming the key. "
        "--uncalibrated: Chen et al.'s Eq. 1-4 with the papers' constants. Reads the same "
        "scenario file and flags as `incast sim` and names the fields it does not model. "
        "`incast model rto-random --help` for RTO randomization (Hafeez Eq. 4-7).",
        epilog=MODEL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_scenario_flags(m)
    m.add_argument(
        "--uncalibrated",
        action="store_true",
        help="Chen's Eq. 1-4 with the papers' constants instead of the burst model",
    )
    m.add_argument(
        "--mechanisms",
        action="store_true",
        help="the burst model's mechanisms alone, without its learned correction (the trees "
        "fitted to what the mechanisms miss on random designs)",
    )
    m.add_argument(
        "--extra-buffer",
        default=None,
        help="with --uncalibrated: buffering beyond the port in Eq. 3 (default 8KB, Chen's)",
    )
    m.add_argument(
        "--partial-rto",
        type=fraction(0.0, 10.0),
        default=1.0,
        help="with --uncalibrated: a in Eq. 4, share of the RTO the link idles",
    )
    m.add_argument(
        "--partial-rto-doubles-at",
        type=whole(1, 10**6),
        metavar="N",
        help="with --uncalibrated: from N senders on, two partial RTOs per block (2a)",
    )
    m.add_argument("--json", action="store_true", help="print a JSON array, one object per point")
    m.add_argument(
        "--plot",
        type=out_file(*FIGURE),
        metavar="FILE.png",
        help="the model against the simulator (which runs each point), disagreement shaded; "
        "with --uncalibrated Chen Figure 2: Eq. 1 solid, Eq. 2 dotted",
    )
    m.add_argument("-q", "--quiet", action="store_true", help="no table")
    m.set_defaults(handler=cmd_model)


def cmd_model(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab import model
    from incastlab.backends.model import predict_series
    from incastlab.scenario import ScenarioError
    from incastlab.series import labelled

    sru_list_as_vary(a)
    extra = size_arg("--extra-buffer", a.extra_buffer)
    chen_given = extra is not None or a.partial_rto != 1.0 or a.partial_rto_doubles_at
    if chen_given and not a.uncalibrated:
        raise UsageError(
            "--extra-buffer, --partial-rto, --partial-rto-doubles-at: Chen's constants, "
            "only with --uncalibrated"
        )
    options = {"a": a.partial_rto, "a_doubles_at": a.partial_rto_doubles_at}
    try:
        extra = model.CHEN_EXTRA_BUFFER if extra is None else extra
        series = predict_series(
            series_from(a),
            uncalibrated=a.uncalibrated,
            extra_buffer=extra,
            correct=not a.mechanisms,
            **options,
        )
    except model.ModelError as e:
        raise ScenarioError(str(e)) from None
    if a.json:
        print_json(labelled(series, lambda p: p.result().to_json()))
    elif not a.quiet:
        from incastlab.cli.render import print_model

        print_model(out, err, series)
    if a.plot:
        from incastlab.plot import model_curves, model_vs_sim

        if a.uncalibrated:
            written = model_curves(series, a.plot)
        else:
            written = model_vs_sim(series, _simulate_points(series, err, not a.json), a.plot)
        if not a.json:
            err.print(f"wrote {written}")
    return 0


def _simulate_points(series: Any, err: Console, show: bool) -> list[list[float]]:
    """The simulator's goodput for every point the model answered (for --plot), on every
    core."""
    from incastlab import backends
    from incastlab.scenario import from_dict
    from incastlab.series import run_many

    scs = [from_dict(p.scenario, normalized=True) for _, ps in series for p in ps]
    labels = [f"N={sc.senders}" for sc in scs]
    with tracking(err, "simulating", len(scs), show) as tracker:
        runs = iter(run_many(backends.get("sim"), scs, labels, tracker))
    return [[next(runs)[0].goodput_bps for _ in ps] for _, ps in series]


def build_rto_random_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="incast model rto-random",
        description="RTO randomization (Hafeez et al.): N senders draw RTOs from "
        "U(RTOmin - delta/2, RTOmin + delta/2); the last to retransmit waits X = max. Prints "
        "E[X] (Eq. 6), its standard deviation (Eq. 7) and P(X > RTOmin + delta/4) (Eq. 4).",
        epilog="example:\n  incast model rto-random --rto-min 10ms --delta 4ms --senders 1..256 "
        "--plot ex.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--rto-min", default="10ms", help="RTOmin, e.g. 10ms")
    p.add_argument("--delta", default="4ms", help="randomization interval length, e.g. 4ms")
    p.add_argument("--senders", default="1,2,4,8,16,32,64,128,256", help="e.g. 1..256")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.add_argument(
        "--plot", type=out_file(*FIGURE), metavar="FILE.png", help="draw E[X] against senders"
    )
    return p


def cmd_rto_random(argv: Sequence[str], out: Console, err: Console) -> int:
    from incastlab import model
    from incastlab.series import parse_senders

    a = build_rto_random_parser().parse_args(argv)
    rto_min = seconds_arg("--rto-min", a.rto_min)
    delta = seconds_arg("--delta", a.delta)
    ns = parse_senders(a.senders)
    try:
        rows = model.rto_random_table(ns, rto_min, delta)
    except model.ModelError as e:
        raise UsageError(str(e)) from None
    if a.json:
        print_json(rows)
    else:
        from incastlab.cli.render import print_rto_random

        print_rto_random(out, rows, rto_min, delta)
    if a.plot:
        from incastlab.plot import expected_max_rto

        p = expected_max_rto(ns, rto_min, delta, a.plot)
        if not a.json:
            err.print(f"wrote {p}")
    return 0


def build_calibrate_parser() -> argparse.ArgumentParser:
    from incastlab.model.calibrate import SEEDS
    from incastlab.model.design import CALIBRATION_SEED as DESIGN_CALIBRATION_SEED
    from incastlab.model.design import SEEDS as DESIGN_SEEDS

    p = Parser(
        prog="incast model calibrate",
        description="Simulate a grid (N 1-64, SRU 16 KB-1 MB, buffer 4-256 KB, RTOmin "
        "200/10/1 ms) under several TCP settings (initial window 1 and 10, restart and "
        "persistent windows, delayed ACKs, DCTCP, Linux's profile), fit the burst model's "
        "constants on one half of the points and report its goodput error on the other, "
        "held-out half (next to Chen's Eq. 1-4 with the papers' constants): overall, per axis, "
        "worst points. --save writes the constants into the package, tagged with its version.",
        epilog="examples:\n  incast model calibrate --cache ~/.cache/incastlab/calibrate\n"
        "  incast model calibrate --quick --json\n"
        "  incast model calibrate --variants iw1-restart,dctcp --save\n"
        "  incast model calibrate --random 300 --cache ~/.cache/incastlab/design\n"
        "  incast model calibrate --random 300 --designs 9 --correct 70 --fresh 32072..32081 "
        "--cache ~/.cache/incastlab/design --save\n"
        '  incast model calibrate --set topology.link=\\"10Gbps\\"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--quick", action="store_true", help="40 points under two settings (80) instead of 2688"
    )
    p.add_argument(
        "--random",
        type=whole(10, 100_000),
        metavar="N",
        help="instead of the grid: fit on a random design of N scenarios (Latin hypercube over "
        "senders, SRU, buffer, link, RTT, RTOmin, IW, profile, congestion control, window "
        "restart) and report the error on another, the held-out design, with the interval and "
        "the flags",
    )
    p.add_argument(
        "--designs",
        type=whole(1, 1000),
        default=1,
        metavar="K",
        help="with --random: fit on K random designs pooled (seeds "
        f"{DESIGN_CALIBRATION_SEED} upward; default 1): a constant or an interval read off "
        "300 points moves with their draw",
    )
    p.add_argument(
        "--correct",
        type=whole(0, 1000),
        default=0,
        metavar="K",
        help="with --random: also fit the learned correction (scikit-learn's gradient-boosted "
        f"trees, pip install 'incastlab[calibrate]') on K random designs (seeds "
        f"{DESIGN_CALIBRATION_SEED} upward); default 0: the package's correction, where it was "
        "fitted with the constants the fit gives",
    )
    p.add_argument(
        "--fresh",
        type=_seeds,
        action="extend",
        default=[],
        metavar="SEEDS",
        help="with --random: also report the error on the designs drawn with these seeds, "
        "pooled (repeat it): designs drawn after the model's mechanisms were chosen, which no "
        "choice has read",
    )
    p.add_argument(
        "--worst", type=whole(0, 10_000), default=15, help="with --random: worst points shown"
    )
    p.add_argument(
        "--variants", help="comma-separated TCP settings (default all; see --list-variants)"
    )
    p.add_argument("--list-variants", action="store_true", help="print the variants and exit")
    p.add_argument(
        "--blocks", type=whole(1, 10**6), default=5, help="blocks per simulation (default 5)"
    )
    p.add_argument(
        "--seeds",
        type=whole(1, 1000),
        default=None,
        help=f"seeds per point, their runs pooled (default {SEEDS}, {DESIGN_SEEDS} with "
        "--random; the first is the scenario's seed)",
    )
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="base scenario key")
    p.add_argument("--cache", metavar="DIR", help="keep simulated points here and reuse them")
    add_workers_flag(p)
    p.add_argument("--save", action="store_true", help="save the fitted constants in the package")
    p.add_argument("--json", action="store_true", help="print the fit and every point as JSON")
    return p


#: Fresh designs one --fresh may name (each is 300 or more scenarios to simulate).
MAX_FRESH = 100


def _seeds(text: str) -> list[int]:
    """An argparse type: design seeds as the project writes whole-number lists (``32012``,
    ``32012..32021``, ``32012,32015``), at most :data:`MAX_FRESH`."""
    try:
        return parse_int_ranges(text, "design seeds", MAX_FRESH)
    except UnitError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def cmd_calibrate(argv: Sequence[str], out: Console, err: Console) -> int:
    from pathlib import Path

    from incastlab import scenario as sc_mod
    from incastlab.model import burst
    from incastlab.model.calibrate import (
        FULL_GRID,
        QUICK_GRID,
        QUICK_VARIANTS,
        SEEDS,
        VARIANTS,
        calibrate,
    )
    from incastlab.parallel import Interrupted
    from incastlab.series import parse_assignment

    a = build_calibrate_parser().parse_args(argv)
    if a.random:
        if a.quick or a.variants or a.set or a.list_variants:
            raise UsageError("--random: its own design; not with --quick, --variants, --set")
        from incastlab.cli.model_design import run_random
        from incastlab.model.design import HELD_OUT_SEED, calibration_seeds
        from incastlab.model.design import SEEDS as DESIGN_SEEDS

        fitted_on = calibration_seeds(max(a.designs, a.correct))
        a.fresh = list(dict.fromkeys(a.fresh))  # a design named twice is still one design
        for seed in a.fresh:
            if seed == HELD_OUT_SEED or seed in fitted_on:
                raise UsageError(
                    f"--fresh: {seed} is the seed of the held-out design ({HELD_OUT_SEED}) or "
                    f"of a calibration design ({fitted_on[0]}..{fitted_on[-1]}); a fresh design "
                    "is one that neither the fit nor the held-out report reads"
                )
        if a.correct:
            try:
                import sklearn  # noqa: F401
            except ImportError as e:
                raise UsageError(
                    "--correct: fitting the correction needs scikit-learn: "
                    "pip install 'incastlab[calibrate]'"
                ) from e

        a.seeds = a.seeds or DESIGN_SEEDS
        return run_random(a, out, err)
    if a.designs != 1 or a.fresh or a.correct:
        raise UsageError("--designs, --correct and --fresh: random designs; give --random N")
    if a.list_variants:
        for name, keys in VARIANTS.items():
            out.print(f"{name}: {keys or 'the scenario defaults'}")
        return 0
    if a.variants:
        names = [v.strip() for v in a.variants.split(",") if v.strip()]
        bad = [v for v in names if v not in VARIANTS]
        if bad:
            raise UsageError(f"--variants: {shown(bad[0])} is not one of {', '.join(VARIANTS)}")
    else:
        names = list(QUICK_VARIANTS if a.quick else VARIANTS)
    base = sc_mod.apply_overrides({}, dict(parse_assignment(x) for x in a.set or []))
    sc_mod.from_dict(base)  # fail early on a bad key
    grid = QUICK_GRID if a.quick else FULL_GRID
    cache = Path(a.cache).expanduser() if a.cache else None
    try:
        with progress_bar(err, "calibrating", not a.json) as bar:
            task = bar.add_task("simulating the grid", total=None)
            c = calibrate(
                grid,
                variants=names,
                blocks=a.blocks,
                seeds=a.seeds or SEEDS,
                base=base,
                cache=cache,
                on_point=lambda i, n: bar.update(task, completed=i, total=n),
                workers=a.workers,
            )
    except Interrupted as stop:
        kept = (
            f"the {len(stop.done)} points simulated are kept in {cache}; the same command "
            "resumes from them"
            if cache
            else f"--cache DIR would have kept the {len(stop.done)} points simulated"
        )
        err.print(f"[yellow]interrupted:[/yellow] {kept}", soft_wrap=True)
        return 130
    if a.save:
        written = burst.save(c.constants)
        if not a.json:
            err.print(f"saved the constants in {written.name}")
    if a.json:
        print_json(c.to_json())
        return 0
    from incastlab.cli.render import print_calibration

    print_calibration(out, c)
    return 0
