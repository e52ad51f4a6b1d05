"""`incast model` and its `rto-random` and `calibrate` subcommands: the analytical model."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import UsageError, progress_bar, seconds_arg, size_arg
from incastlab.cli.flags import add_scenario_flags, series_from, sru_list_as_vary

if TYPE_CHECKING:
    from rich.console import Console

MODEL_EXAMPLES = """\
examples:
  incast model --senders 1..20 --sru 16KB,32KB,64KB --buffer 64KB --initial-window 1 --plot fig4.png
  incast model --senders 1..48 --sru 64KB,256KB,1MB --rtt 1ms --plot fig2.png
  incast model examples/incast-collapse.toml --json
  incast model rto-random --rto-min 10ms --delta 4ms --senders 1..256
"""


def add_model_parser(sub: Any) -> None:
    m = sub.add_parser(
        "model",
        help="the analytical model (Chen Eq. 1-4) for the same scenarios, in milliseconds",
        description="Predict goodput per sender count with the flow-rate model: Eq. 1 before "
        "the onset of collapse (Eq. 3: the port overflows with the largest slow-start round of "
        "every sender), Eq. 2/4 after it. Reads the same scenario file and flags as `incast sim` "
        "and names the fields it does not model. `incast model rto-random --help` for RTO "
        "randomization (Hafeez Eq. 4-7).",
        epilog=MODEL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_scenario_flags(m)
    m.add_argument(
        "--extra-buffer",
        default=None,
        help="buffering beyond the switch port in Eq. 3 (default 8KB, Chen's testbed)",
    )
    m.add_argument(
        "--partial-rto", type=float, default=1.0, help="a in Eq. 4: share of the RTO the link idles"
    )
    m.add_argument(
        "--partial-rto-doubles-at",
        type=int,
        metavar="N",
        help="from N senders on, two partial RTOs per block (2a)",
    )
    m.add_argument("--json", action="store_true", help="print a JSON array, one object per point")
    m.add_argument("--plot", metavar="FILE.png", help="Chen Figure 2: Eq. 1 solid, Eq. 2 dotted")
    m.add_argument("-q", "--quiet", action="store_true", help="no table")
    m.set_defaults(handler=cmd_model)


def cmd_model(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab import model
    from incastlab.backends.model import predict_series
    from incastlab.scenario import ScenarioError
    from incastlab.series import labelled

    sru_list_as_vary(a)
    extra = size_arg("--extra-buffer", a.extra_buffer)
    options = {"a": a.partial_rto, "a_doubles_at": a.partial_rto_doubles_at}
    try:
        extra = model.CHEN_EXTRA_BUFFER if extra is None else extra
        series = predict_series(series_from(a), extra_buffer=extra, **options)
    except model.ModelError as e:
        raise ScenarioError(str(e)) from None
    if a.json:
        print(json.dumps(labelled(series, lambda p: p.result().to_json()), indent=1))
    elif not a.quiet:
        from incastlab.cli.render import print_model

        print_model(out, err, series)
    if a.plot:
        from incastlab.plot import model_curves

        written = model_curves(series, a.plot)
        if not a.json:
            err.print(f"wrote {written}")
    return 0


def build_rto_random_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
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
    p.add_argument("--plot", metavar="FILE.png", help="draw E[X] against senders")
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
        print(json.dumps(rows, indent=1))
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
    p = argparse.ArgumentParser(
        prog="incast model calibrate",
        description="Simulate a grid (N 1-64, SRU 16 KB-1 MB, buffer 4-256 KB, RTOmin "
        "200/10/1 ms), fit the model's extra buffer (Eq. 3) and partial-RTO factor a (Eq. 4), "
        "and report its goodput error against the simulator: overall, per grid axis, worst.",
        epilog="examples:\n  incast model calibrate\n  incast model calibrate --quick --json\n"
        '  incast model calibrate --set tcp.initial_window=1 --set tcp.cwnd_restart=\\"block\\"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true", help="a 40-point grid instead of 336")
    p.add_argument("--blocks", type=int, default=5, help="blocks per simulation (default 5)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="base scenario key")
    p.add_argument("--json", action="store_true", help="print the fit and every point as JSON")
    return p


def cmd_calibrate(argv: Sequence[str], out: Console, err: Console) -> int:
    from incastlab import scenario as sc_mod
    from incastlab.model.calibrate import FULL_GRID, QUICK_GRID, calibrate
    from incastlab.series import parse_assignment

    a = build_calibrate_parser().parse_args(argv)
    if a.blocks < 1:
        raise UsageError("--blocks: must be at least 1")
    base = sc_mod.apply_overrides({}, dict(parse_assignment(x) for x in a.set or []))
    sc_mod.from_dict(base)  # fail early on a bad key
    grid = QUICK_GRID if a.quick else FULL_GRID
    with progress_bar(err, "calibrating", not a.json) as bar:
        task = bar.add_task("", total=None)
        c = calibrate(
            grid,
            blocks=a.blocks,
            base=base,
            on_point=lambda i, n: bar.update(task, completed=i, total=n),
        )
    if a.json:
        print(json.dumps(c.to_json(), indent=1))
        return 0
    from incastlab.cli.render import print_calibration

    print_calibration(out, c)
    return 0
