"""`incast mitigate` and `compare`: the user's studies of a scenario (:mod:`incastlab.studies`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from incastlab import backends
from incastlab.cli.common import (
    FIGURE,
    UsageError,
    add_workers_flag,
    backend,
    out_file,
    seconds,
    tracking,
    whole,
    writing,
)
from incastlab.cli.flags import add_scenario_flags, envelope_warning, one_series, real_tcp_link
from incastlab.cli.json_text import print_json
from incastlab.cli.tables import add_wide_flag

if TYPE_CHECKING:
    from rich.console import Console


def add_mitigate_parser(sub: Any) -> None:
    g = sub.add_parser(
        "mitigate",
        help="run a scenario under each mitigation and rank them",
        description="Simulate the scenario as given and under each mitigation (smaller RTOmin, "
        "microsecond timers, RTO randomization: uniform, TDA, MAA, FSA; DCTCP; ECN; RED; PFC; "
        "a bigger or shared buffer; fan-out window, request staggering, response jitter; a "
        "smaller initial window) and print them ranked by goodput. A RoCE scenario (--transport "
        "roce) gets the RDMA remedies instead (congestion control none, DCQCN or HPCC; PFC's "
        "XOFF; a per-ingress or shared buffer and its α; lossy with IRN's selective repeat or "
        "lossless), ranked by the last flow's completion. Mitigations the scenario "
        "cannot take are listed as skipped, with the reason. --transports ranks transports "
        "instead (TCP as given, RTOmin 200 µs, DCTCP; NDP; RoCE with none, DCQCN, HPCC; Swift; "
        "EQDS; Homa) on the scenario's fabric and workload, by the last flow's completion.",
        epilog="examples:\n  incast mitigate examples/incast-collapse.toml --senders 16,47\n"
        "  incast mitigate --senders 64 --block 1MB --buffer 32KB --rto-min 10ms "
        "--only rto-tda,rto-maa --plot m.png\n"
        "  incast mitigate --transport roce --cc none --senders 16 --flow-size 200KB "
        "--link 100Gbps --rtt 4us --buffer 300KB\n"
        "  incast mitigate --transports --workload incast --flow-size 64KB --senders 16 "
        "--link 10Gbps --rtt 10us --buffer 64KB --plot t.png\n"
        "  incast mitigate --transports --only ndp,eqds,swift --senders 64 --sru 256KB "
        "--link 100Gbps --rtt 10us --buffer 256KB",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_scenario_flags(g)
    g.add_argument(
        "--transports",
        action="store_true",
        help="rank transports on the scenario's fabric and workload instead of mitigations",
    )
    g.add_argument(
        "--only",
        metavar="A,B",
        help="run only these mitigations (and the baseline); with --transports, these "
        "transports (and tcp)",
    )
    add_workers_flag(g)
    g.add_argument("--json", action="store_true", help="print the ranking as JSON")
    g.add_argument(
        "--plot",
        type=out_file(*FIGURE),
        metavar="FILE.png",
        help="bar chart of the mitigations, best first: goodput and 99th-percentile block time "
        "(RDMA: the last flow's completion, paused time and unfinished flows)",
    )
    g.add_argument("-q", "--quiet", action="store_true", help="no table")
    add_wide_flag(g)
    g.set_defaults(handler=cmd_mitigate)


def add_compare_parser(sub: Any) -> None:
    c = sub.add_parser(
        "compare",
        help="run one scenario on several backends (sim, emulate, model) side by side",
        epilog="example:\n  sudo incast compare --backends sim,emulate,model --senders 1..16 "
        "--link 100Mbps --buffer 32KB --sru 64KB --plot compare.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_scenario_flags(c)
    c.add_argument(
        "--backends", default="sim,model", help=f"comma-separated: {','.join(backends.names())}"
    )
    c.add_argument(
        "--warmup", type=whole(0, 10**6), default=1, help="emulation: blocks not measured"
    )
    c.add_argument(
        "--time-limit",
        type=seconds(0.001, 86400),
        default=300.0,
        help="emulation: seconds per point",
    )
    c.add_argument(
        "--repeat",
        type=whole(1, 1000),
        default=1,
        metavar="K",
        help="run each point K times on each backend that runs it (seeds seed, seed+1, ...; "
        "for emulate the seed only labels the run): medians, and real TCP's min-max",
    )
    add_workers_flag(c)
    c.add_argument("--json", action="store_true", help="print every run's record as JSON")
    c.add_argument(
        "--plot",
        type=out_file(*FIGURE),
        metavar="FILE.png",
        help="goodput versus senders per backend",
    )
    add_wide_flag(c)
    c.set_defaults(handler=cmd_compare)


class _Study(NamedTuple):
    """What differs between TCP's mitigations and RDMA's remedies: how the names of ``--only``
    are chosen, the study that runs them, the table that prints the ranking and the chart."""

    choose: Callable[[str | None], list[Any]]
    run: Callable[..., Any]
    render: Callable[..., None]
    plot: Callable[[Any, str | Path], Path]


def _tcp_study() -> _Study:
    from incastlab.cli.render import print_ranking
    from incastlab.studies.mitigate import choose, mitigate

    def plot(ranking: Any, path: str | Path) -> Path:
        from incastlab.plot.mitigations import ranking_bars

        return ranking_bars(ranking, path)

    return _Study(choose, mitigate, print_ranking, plot)


def _rdma_study() -> _Study:
    """The RDMA remedies of a RoCE scenario, ranked by the last flow's completion."""
    from incastlab.cli.render_runs import print_rdma_ranking
    from incastlab.studies.mitigate_rdma import choose, mitigate_rdma

    def plot(ranking: Any, path: str | Path) -> Path:
        from incastlab.plot.mitigations import rdma_ranking_bars

        return rdma_ranking_bars(ranking, path)

    return _Study(choose, mitigate_rdma, print_rdma_ranking, plot)


def _transport_study() -> _Study:
    """Transports on the scenario's fabric and workload, ranked by the last flow."""
    from incastlab.studies.transports import choose, rank_transports
    from incastlab.studies.transports_view import print_transport_ranking, transport_bars

    return _Study(choose, rank_transports, print_transport_ranking, transport_bars)


def cmd_mitigate(a: argparse.Namespace, out: Console, err: Console) -> int:
    ((_, points),) = one_series(a, "mitigate", "incast mitigate varies the mitigation")
    if a.transports:
        study = _transport_study()
    elif points[0].normalized()["transport"] == "roce":
        study = _rdma_study()
    else:
        study = _tcp_study()
    try:
        chosen = study.choose(a.only)
    except ValueError as e:
        raise UsageError(str(e)) from None
    total = len(chosen) * len(points)
    with tracking(err, "mitigating", total, not a.json and not a.quiet) as tracker:
        ranking = study.run(points, chosen, tracker=tracker, workers=a.workers)
    if a.json:
        print_json(ranking.to_json())
    elif not a.quiet:
        study.render(out, err, ranking, wide=a.wide)
    if a.plot:
        with writing("--plot", a.plot):
            written = study.plot(ranking, a.plot)
        if not a.json:
            err.print(f"wrote {written}")
    return 0


def compare_backends(a: argparse.Namespace) -> list[backends.Backend]:
    """The --backends, each once in the order given, checked to run here."""
    names = list(dict.fromkeys(b.strip() for b in a.backends.split(",") if b.strip()))
    for n in names:
        if n not in backends.names():
            raise UsageError(f"--backends: one of {', '.join(backends.names())}, got {n!r}")
    chosen = [backend(n, warmup=a.warmup, time_limit_s=a.time_limit) for n in names]
    if a.plot and all(b.predicts for b in chosen):
        raise UsageError("--plot: give sim or emulate too; the model is drawn over them")
    return chosen


def cmd_compare(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.studies.compare import compare

    chosen = compare_backends(a)
    real = any(b.needs_root for b in chosen)
    if real:
        real_tcp_link(a)
    ((_, points),) = one_series(a, "compare", "compare draws one scenario on several backends")
    if real:
        envelope_warning(points, err)
    for b in [] if a.json else chosen:
        if missing := b.unsupported(points[-1]):
            err.print(f"[yellow]{b.name} does not honour:[/yellow] " + ", ".join(missing))
    runs = sum(1 if b.predicts else a.repeat for b in chosen)
    with tracking(err, "comparing", len(points) * runs, not a.json) as tracker:
        c = compare(points, chosen, tracker, repeat=a.repeat, workers=a.workers)
    if a.json:
        print_json(c.records())
    else:
        from incastlab.cli.render import print_comparison

        print_comparison(out, c, c.rows(), wide=a.wide)
    if a.plot:
        title = "One scenario: simulator, real Linux TCP, model"
        if c.repeat > 1:
            from incastlab.studies.compare import plot

            titles = {b.name: b.title for b in chosen}
            plot(c, titles, a.plot, title=title, model_label="model (Chen Eq. 1-4)")
        else:
            from incastlab.plot import goodput_vs_senders

            series_ = [(b.title, c.runs[b.name]) for b in chosen if not b.predicts]
            curve = c.curves()
            overlay = [curve] + [[]] * (len(series_) - 1) if curve else None
            goodput_vs_senders(
                series_, a.plot, title=title, model=overlay, model_label="model (Chen Eq. 1-4)"
            )
        err.print(f"wrote {a.plot}")
    return 0
