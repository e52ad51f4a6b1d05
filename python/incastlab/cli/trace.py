"""`incast pcap`: read a packet capture (pcap or pcapng) and look for incast in it."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import UsageError, add_capture_args, table, unit_value
from incastlab.units import UnitError, format_rate, format_size, format_time, parse_time

if TYPE_CHECKING:
    from rich.console import Console

    from incastlab.trace import TraceReport

PCAP_EXAMPLES = """\
examples:
  incast sim --senders 16 --sru 256KB --blocks 20 --pcap run.pcap && incast pcap run.pcap
  incast pcap capture.pcap --receiver 10.0.0.17 --rto-min 200ms --plot capture.png
  incast pcap capture.pcapng --rto-min 1ms --interval 100us --out capture-tables/
  incast pcap run.pcap --json | jq .verdict

A retransmission is told apart by cause: a timeout (an idle gap of at least --rto-gap x
RTOmin before it), a fast retransmit (after duplicate ACKs or SACKs), a tail-loss probe
(the highest segment resent after a pause, no duplicate ACK). The incast signature: at
least --min-flows flows into the receiver time out within one RTOmin while its link idles.
"""


def add_pcap_parser(sub: Any) -> None:
    s = sub.add_parser(
        "pcap",
        help="find incast in a packet capture: flows, retransmissions by cause, bursts",
        description="Read a capture as a stream (pcap or pcapng; Ethernet, raw IP or Linux "
        "cooked) and report the flows into the receiver, their retransmissions by cause, "
        "goodput per block and per interval, the ingress rate's peak/average at 1 ms, 10 ms "
        "and 1 s, and whether the incast signature is there.",
        epilog=PCAP_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_capture_args(s)
    s.add_argument(
        "--rto-min",
        type=unit_value("time"),
        default="200ms",
        help="the senders' minimum RTO (default 200ms)",
    )
    s.add_argument(
        "--interval",
        type=unit_value("time"),
        default="1ms",
        help="width of the per-interval rows (default 1ms)",
    )
    s.add_argument(
        "--rto-gap",
        type=float,
        default=0.8,
        help="share of RTOmin an idle gap must last to mark a timeout (default 0.8)",
    )
    s.add_argument(
        "--min-flows",
        type=int,
        default=3,
        help="flows timing out together that make the incast signature (default 3)",
    )
    s.add_argument("--json", action="store_true", help="print the whole report as JSON")
    s.add_argument(
        "--out", metavar="DIR", help="write flows, intervals and blocks as Parquet files in DIR"
    )
    s.add_argument(
        "--plot", metavar="FILE.png", help="ingress at 1ms/10ms/1s and the worst block's flows"
    )
    s.set_defaults(handler=cmd_pcap)


def _options(a: argparse.Namespace) -> Any:
    from incastlab.trace import TraceOptions

    def ps(flag: str, value: str) -> int:
        try:
            return parse_time(value)
        except UnitError as e:
            raise UsageError(f"{flag}: {e}") from None

    rto_min, interval = ps("--rto-min", a.rto_min), ps("--interval", a.interval)
    if rto_min <= 0:
        raise UsageError(f"--rto-min: must be positive, got {a.rto_min!r}")
    if not 1_000_000 <= interval <= rto_min:
        raise UsageError(f"--interval: must be 1us..--rto-min, got {a.interval!r}")
    if not 0 < a.rto_gap <= 1:
        raise UsageError(f"--rto-gap: must be in (0, 1], got {a.rto_gap}")
    if a.min_flows < 2:
        raise UsageError(f"--min-flows: must be at least 2, got {a.min_flows}")
    return TraceOptions(a.receiver, rto_min, interval, a.rto_gap, a.min_flows)


def cmd_pcap(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.cli.common import progress_bar
    from incastlab.files import InputFileError, regular_file
    from incastlab.trace import analyze

    opts = _options(a)
    try:
        size = regular_file(a.capture, "capture")
    except InputFileError as e:
        raise UsageError(str(e)) from None
    with progress_bar(err, "reading", not a.json) as bar:
        task = bar.add_task(a.capture, total=size)
        t = analyze(a.capture, opts, lambda done: bar.update(task, completed=done))
    if a.json:
        print(json.dumps(t.to_json()))
    else:
        print_trace(out, t)
    written = []
    if a.out:
        from incastlab.trace import write_parquet

        written += [str(p) for p in write_parquet(t, a.out)]
    if a.plot:
        from incastlab.plot.trace import trace_figure

        written.append(str(trace_figure(t, a.plot)))
    if t.report["truncated"]:
        err.print(
            f"[yellow]warning:[/yellow] {a.capture}: the capture is truncated (the last record "
            f"is cut short); analysed the {t.report['frames']:,} whole frames before it"
        )
    if not a.json:
        for p in written:
            err.print(f"wrote {p}")
    return 0


def _ns(ns: float) -> str:
    return format_time(ns * 1e3)


def print_trace(out: Console, t: TraceReport, max_flows: int = 20) -> None:
    """Summary, rates, flows (the worst first when many), blocks and the verdict."""
    r = t.report
    who = r["receiver"] or "-"
    how = "inferred" if r["receiver_inferred"] else "given"
    out.print(
        f"[bold]incast pcap[/bold] · {t.path} · {r['frames']:,} frames "
        f"({r['tcp_segments']:,} TCP"
        + (f", {r['copies']:,} second copies left out" if r["copies"] else "")
        + f") · receiver {who} ({how}) · {len(r['flows'])} flows in "
        f"· span {_ns(r['span_ns'])} · RTOmin {_ns(r['rto_min_ns'])}"
    )
    rates = table()
    for c in ["window", "average", "peak", "peak/avg"]:
        rates.add_column(c, justify="right")
    for row in r["rates"]:
        rates.add_row(
            _ns(row["window_ns"]),
            format_rate(row["avg_bps"]),
            format_rate(row["peak_bps"]),
            f"{row['peak_to_avg']:.1f}",
        )
    out.print(rates)
    flows = sorted(r["flows"], key=lambda f: (-f["rtos"], f["flow"]))
    ft = table()
    for c in ["flow", "from", "bytes", "fast", "RTO", "TLP", "timeouts", "longest gap"]:
        ft.add_column(c, justify="right")
    for f in flows[:max_flows]:
        ft.add_row(
            str(f["flow"]),
            f"{f['src']}:{f['sport']}",
            format_size(f["unique_bytes"]),
            str(f["retx_fast"]),
            str(f["retx_rto"]),
            str(f["retx_tlp"]),
            str(f["rtos"]),
            _ns(f["max_gap_ns"]),
        )
    out.print(ft)
    if len(flows) > max_flows:
        out.print(f"… {len(flows) - max_flows} more flows (--json or --out for all)")
    blocks = r["blocks"]
    if blocks:
        durs = sorted(b["duration_ns"] for b in blocks)
        with_rto = sum(1 for b in blocks if b["rtos"])
        # Waits of RTOmin/2 or more no timeout ended (a loss probe capped at the RTO): said
        # only when some block had one.
        stalled = sum(1 for b in blocks if b.get("probe_stalls"))
        out.print(
            f"blocks: {len(blocks)} · median {_ns(durs[len(durs) // 2])} · "
            f"longest {_ns(durs[-1])} · {with_rto} with timeouts"
            + (f" · {stalled} with probe stalls (no timeout)" if stalled else "")
        )
    out.print(
        f"retransmissions: {r['retx_fast']:,} fast, {r['retx_rto']:,} after timeouts, "
        f"{r['retx_tlp']:,} tail-loss probes · timeouts {r['rtos']:,}"
        + (
            f" ({r['rtos_backed_off']:,} backed off inside longer silences, "
            f"RTO taken as {_ns(r['rto_estimate_ns'])})"
            if r["rtos_backed_off"]
            else ""
        )
        + f" · goodput {format_rate(r['goodput_bps'])}"
    )
    style = "bold red" if t.incast else "bold green"
    out.print(f"[{style}]verdict:[/{style}] {t.verdict}", soft_wrap=True)
