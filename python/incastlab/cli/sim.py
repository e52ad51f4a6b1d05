"""`incast sim`: the packet-level simulator over a range of sender counts."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import (
    FIGURE,
    UsageError,
    add_result_flags,
    add_workers_flag,
    out_file,
    tracking,
    writing,
)
from incastlab.cli.flags import add_scenario_flags, series_from, sru_list_as_vary
from incastlab.cli.json_text import print_json
from incastlab.cli.tables import add_wide_flag

if TYPE_CHECKING:
    from rich.console import Console

    from incastlab.series import Series, SeriesInterrupted, SeriesRun

SIM_EXAMPLES = """\
examples:
  incast sim --senders 1..48 --sru 256KB --buffer 64KB --rto-min 200ms --plot collapse.png
  incast sim --senders 1,2,4,8,16,32,47 --sru 256KB --rto-min 1ms --clock 1us
  incast sim --senders 1..47 --vary tcp.rto_min=200ms,1ms --plot fix.png
  incast sim --senders 1..16 --sru 16KB --initial-window 1 --cwnd-restart block --plot m.png --model
  incast sim examples/incast-collapse.toml --senders 1..20 --json
  incast sim --workload incast --flow-size 270000B --senders 10,100,1000 --link 10Gbps
  incast sim examples/incast-collapse.toml --set tcp.sack=false --out no-sack.parquet
  incast sim --senders 16 --sru 256KB --blocks 20 --pcap run.pcap && incast pcap run.pcap
  incast sim --senders 16 --pcap port.pcap --pcap-at bottleneck,nic0
"""


def add_sim_parser(sub: Any) -> None:
    s = sub.add_parser(
        "sim",
        help="packet-level simulation of a scenario over a range of sender counts",
        description="Simulate a scenario (file and/or flags; flags override the file) for each "
        "sender count and print one row per count.",
        epilog=SIM_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_scenario_flags(s)
    add_result_flags(s)
    s.add_argument(
        "--model", action="store_true", help="draw the analytical model's curve over the plot"
    )
    s.add_argument(
        "--timeseries",
        type=out_file(*FIGURE),
        metavar="FILE.png",
        help="draw the bottleneck queue and cwnds over time for the largest sender count",
    )
    s.add_argument(
        "--pcap",
        metavar="FILE.pcap",
        help="write the frames of the run (one sender count) as a pcap: Ethernet/IPv4/TCP "
        "headers with SACK, ECN and timestamps (RoCE: UDP 4791 with the InfiniBand BTH and "
        "AETH, CNPs); payload not stored",
    )
    s.add_argument(
        "--pcap-at",
        metavar="POINTS",
        help="where to capture, comma-separated: receiver (default: what tcpdump on the "
        "receiver sees), bottleneck (the switch port towards it), hostN, nicN, portN, "
        "fabricN, all; on a topology file also its host names and switch>switch",
    )
    add_workers_flag(s)
    s.add_argument("-q", "--quiet", action="store_true", help="no table, no progress")
    add_wide_flag(s)
    s.set_defaults(handler=cmd_sim)


def cmd_sim(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab import backends
    from incastlab.series import SeriesInterrupted, labelled, run_series, sample_last

    sru_list_as_vary(a)
    series = series_from(a)
    if a.timeseries:
        # The time series is drawn for the largest sender count of the first series.
        series = sample_last(series)
    total = sum(len(pts) for _, pts in series)
    if a.pcap_at and not a.pcap:
        raise UsageError("--pcap-at: give --pcap FILE too")
    if a.pcap and total != 1:
        raise UsageError(
            f"--pcap: captures one run, this asks for {total}; give one sender count "
            "(e.g. --senders 16) and no --vary"
        )
    if a.pcap and any(sc.transport == "homa" for _, pts in series for sc in pts):
        raise UsageError("--pcap: Homa frames have no pcap encoding yet; capture TCP, NDP or RoCE")
    sim = backends.get("sim", pcap=a.pcap, pcap_at=a.pcap_at)
    try:
        with tracking(err, "simulating", total, not a.json and not a.quiet, ticks=True) as t:
            run = run_series(series, sim, t, workers=a.workers)
    except SeriesInterrupted as stop:
        return _interrupted(a, stop, out, err)
    if a.json:
        print_json(labelled(run.series, lambda r: r.to_json()))
    elif not a.quiet:
        from incastlab.cli.render import print_runs

        print_runs(out, run, "sim", wide=getattr(a, "wide", False))
    written = write_outputs(a, run, series)
    if a.pcap:
        written.append(a.pcap)
    if not a.json:
        for path in written:
            err.print(f"wrote {path}")
    return 0


def _interrupted(a: argparse.Namespace, stop: SeriesInterrupted, out: Console, err: Console) -> int:
    """After Ctrl-C: every finished point printed (and written where --out and --plot ask),
    and the sender counts a rerun still needs."""
    from incastlab.series import SeriesRun, labelled
    from incastlab.units import format_int_ranges

    keep = [k for k, (_, rs) in enumerate(stop.run.series) if rs]
    run = SeriesRun([stop.run.series[k] for k in keep], [stop.run.walls[k] for k in keep])
    if run.results:
        if a.json:
            print_json(labelled(run.series, lambda r: r.to_json()))
        elif not a.quiet:
            from incastlab.cli.render import print_runs

            print_runs(out, run, "sim", wide=getattr(a, "wide", False))
        series = [stop.series[k] for k in keep]
        for path in write_outputs(a, run, series, partial=True):
            err.print(f"wrote {path} ({stop.finished} finished points)")
    left = format_int_ranges(stop.unfinished_senders())
    err.print(
        f"[yellow]interrupted:[/yellow] {stop.finished} of {stop.total} points finished"
        + (" (above)" if run.results and not a.quiet else "")
        + f"; for the rest, the same command with --senders {left}",
        soft_wrap=True,
    )
    return 130


def write_outputs(
    a: argparse.Namespace, run: SeriesRun, series: Series, title: str = "", partial: bool = False
) -> list[str]:
    """The Parquet file, the goodput plot (with the model over it) and the time series that
    the flags ask for; the paths written. A ``title`` replaces the plot's own. ``partial``:
    an interrupted run, whose last point may not be the one sampled for the time series."""
    written = []
    if getattr(a, "out", None):
        from incastlab.result.store import write_parquet

        with writing("--out", a.out):
            written.append(str(write_parquet(run.results, a.out)))
    if a.plot:
        from incastlab.plot import goodput_vs_senders
        from incastlab.series import varied_name

        overlay = model_curves(series) if getattr(a, "model", False) else None
        options: dict[str, Any] = {"title": title} if title else {"varied": varied_name(a.vary)}
        with writing("--plot", a.plot):
            p = goodput_vs_senders(run.series, a.plot, model=overlay, **options)
        written.append(str(p))
    if getattr(a, "timeseries", None) and not partial:
        from incastlab.plot.sweep import time_series

        with writing("--timeseries", a.timeseries):
            written.append(str(time_series(run.series[0][1][-1], a.timeseries)))
    return written


def model_curves(series: Series) -> list[list[tuple[float, ...]]]:
    """The model's goodput and the ends of its 10-90% interval for every point of every
    series."""
    from incastlab.backends.model import predict_scenario
    from incastlab.model import ModelError
    from incastlab.scenario import ScenarioError

    def point(sc: Any) -> tuple[float, ...]:
        p = predict_scenario(sc, with_onset=False)
        lo, hi = p.interval or (math.nan, math.nan)
        return (sc.senders, p.prediction.goodput_bps, lo, hi)

    try:
        return [[point(sc) for sc in pts] for _, pts in series]
    except ModelError as e:
        raise ScenarioError(str(e)) from None
