"""`incast monitor`: watch a host's interface for microbursts and synchronized timeouts."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import UsageError, table
from incastlab.units import UnitError, format_rate, parse_rate, parse_time

if TYPE_CHECKING:
    from rich.console import Console

MONITOR_EXAMPLES = """\
examples:
  incast monitor --iface eth0 --interval 1ms --duration 30s
  incast monitor --iface veth-rx --netns incast-rx --interval 100us --line-rate 100Mbps
  incast monitor --iface eth0 --duration 10s --json > eth0.jsonl
  incast monitor --iface eth0 --duration 60s --record eth0.parquet --plot eth0.png
  incast doctor eth0.parquet                 # bounds RTOmin from the idle gaps, says if incast

One row per second: the average rate, the peak over one interval, peak/average, the share
of intervals at line rate (>= 90% of --line-rate, or the interface's speed), TCP timeouts,
loss probes and retransmissions from the kernel's counters (TcpExt, Tcp), the interface's
and its qdiscs' drops (tc, once a second), and a
verdict: "microbursts" (peak >= 3x average), or "synchronized timeouts: incast suspected"
(>= 3 timeouts in the second while the link averaged under half its peak). The TCP
counters are the whole namespace's, not the interface's.
"""


def add_monitor_parser(sub: Any) -> None:
    s = sub.add_parser(
        "monitor",
        help="sample a host's interface and TCP counters: microbursts, synchronized timeouts",
        description="Sample an interface's counters at a fixed interval (measuring the "
        "sampler's own jitter) and the kernel's TCP counters once a second; print a row per "
        "second and a summary.",
        epilog=MONITOR_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("--iface", default="lo", help="interface to watch (default lo)")
    s.add_argument("--netns", help="network namespace (ip netns) the interface is in")
    s.add_argument("--interval", default="1ms", help="sampling interval: 1ms, 100us (default 1ms)")
    s.add_argument("--duration", help="how long, e.g. 10s (default: until Ctrl-C)")
    s.add_argument(
        "--direction", choices=["rx", "tx"], default="rx", help="rate of which side (default rx)"
    )
    s.add_argument("--line-rate", help="the link's rate, e.g. 1Gbps (default: the NIC's speed)")
    s.add_argument("--json", action="store_true", help="JSON lines: one per second, then a summary")
    s.add_argument(
        "--record",
        "--out",
        dest="out",
        metavar="FILE.parquet",
        help="record every interval, the TCP and qdisc counters as Parquet (incast doctor "
        "reads it)",
    )
    s.add_argument(
        "--plot", metavar="FILE.png", help="draw the rate at the interval and per second"
    )
    s.set_defaults(handler=cmd_monitor)


def _args(a: argparse.Namespace) -> tuple[int, int | None, float | None]:
    try:
        interval = parse_time(a.interval) // 1000
        duration = parse_time(a.duration) // 1000 if a.duration else None
        line = float(parse_rate(a.line_rate)) if a.line_rate else None
    except UnitError as e:
        raise UsageError(str(e)) from None
    if not 10_000 <= interval <= 1_000_000_000:
        raise UsageError(f"--interval: must be 10us..1s, got {a.interval!r}")
    if duration is not None and duration < interval:
        raise UsageError(f"--duration: must be at least one interval, got {a.duration!r}")
    return interval, duration, line


def cmd_monitor(a: argparse.Namespace, out: Console, err: Console) -> int:
    import time

    from incastlab import _core
    from incastlab.monitor import MonitorRun, line_rate, qdisc_counters, summary, windows

    interval, duration, line = _args(a)
    if line is None and a.netns is None:
        line = line_rate(a.iface)
    run = MonitorRun(a.iface, a.netns, interval, a.direction, line, version=_core.__version__)
    try:
        mon = _core.Monitor(a.iface, interval, netns=a.netns, duration_ns=duration)
    except _core.MonitorError as e:
        raise UsageError(str(e)) from None
    started = time.monotonic()
    next_qdisc = started

    def read_qdisc() -> None:
        # Once a second, beside the sampler: a fork of tc would upset its timing.
        q = qdisc_counters(a.iface, a.netns)
        if q is not None:
            run.qdisc.append((int((time.monotonic() - started) * 1e9), *q))

    shown = 0
    if not a.json:
        out.print("  ".join(f"{c:>10}" for c in COLUMNS) + "  verdict")
    try:
        while True:
            time.sleep(0.2)
            if time.monotonic() >= next_qdisc:
                read_qdisc()
                next_qdisc += 1.0
            batch = json.loads(mon.poll())
            run.add(batch)
            rows = windows(run)
            # The last window is still filling until the run ends.
            done = rows if batch["finished"] else rows[:-1]
            for row in done[shown:]:
                _emit(out, a.json, row)
            shown = len(done)
            if batch["finished"]:
                read_qdisc()
                break
    except KeyboardInterrupt:
        run.add(json.loads(mon.stop()))
        for row in windows(run)[shown:]:
            _emit(out, a.json, row)
    s = summary(run)
    if a.json:
        print(json.dumps({"summary": s}))
    else:
        _print_summary(out, s)
    for note in run.notes:
        err.print(f"[yellow]note:[/yellow] {note}", soft_wrap=True)
    if a.out:
        from incastlab.monitor import write_parquet

        p = write_parquet(run, a.out)
        if not a.json:
            err.print(f"wrote {p}")
    if a.plot and run.samples["t_ns"]:
        from incastlab.monitor import plot

        p = plot(run, a.plot)
        if not a.json:
            err.print(f"wrote {p}")
    if run.error:
        err.print(f"[bold red]incast monitor:[/bold red] {run.error}", soft_wrap=True)
        return 1
    return 0


COLUMNS = [
    "t",
    "average",
    "peak",
    "peak/avg",
    "at line",
    "timeouts",
    "probes",
    "retx",
    "drops",
    "qdisc drops",
]


def _emit(out: Console, as_json: bool, row: dict[str, Any]) -> None:
    if as_json:
        print(json.dumps(row), flush=True)
        return
    at = "-" if row["at_line_rate"] is None else f"{100 * row['at_line_rate']:.1f}%"
    cells = [
        f"{row['t_s']:.0f} s",
        format_rate(row["avg_bps"]),
        format_rate(row["peak_bps"]),
        f"{row['peak_to_avg']:.1f}",
        at,
        str(row["timeouts"]),
        str(row["loss_probes"]),
        str(row["retrans_segs"]),
        str(row["drops"]),
        "-" if row["qdisc_drops"] is None else str(row["qdisc_drops"]),
    ]
    style = "red" if row["verdict"].startswith("synchronized") else "yellow"
    v = f"[{style}]{row['verdict']}[/{style}]" if row["verdict"] else ""
    out.print("  ".join(f"{c:>10}" for c in cells) + "  " + v)


def _print_summary(out: Console, s: dict[str, Any]) -> None:
    t = table()
    for c in ["interval", "samples", "average", "peak", "peak/avg", "at line", "jitter p50/p99"]:
        t.add_column(c, justify="right")
    at = "-" if s["at_line_rate"] is None else f"{100 * s['at_line_rate']:.2f}%"
    jit = (
        f"{s['jitter_median_ns'] / 1e3:.1f}/{s['jitter_p99_ns'] / 1e3:.1f} µs"
        if s["jitter_median_ns"] is not None
        else "-"
    )
    t.add_row(
        f"{s['interval_ns'] / 1e6:g} ms",
        f"{s['samples']:,}",
        format_rate(s["avg_bps"]),
        format_rate(s["peak_bps"]),
        f"{s['peak_to_avg']:.1f}",
        at,
        jit,
    )
    out.print(t)
    tcp = ", ".join(
        f"{k.removeprefix('tcp_')} {v}" for k, v in s.items() if k.startswith("tcp_") and v
    )
    out.print(
        f"{s['iface']} {s['direction']} over {s['duration_s']:.1f} s · sampler CPU "
        f"{100 * s['cpu_share']:.1f}% of a core"
        f"{' at real-time priority' if s['realtime'] else ''} · TCP: {tcp or 'no change'}"
    )
    windows = s["peak_to_avg_by_window"]
    if windows:
        out.print(
            "peak/average by window: "
            + ", ".join(f"{w['window_ns'] / 1e6:g} ms {w['peak_to_avg']:.1f}" for w in windows)
        )
    out.print(f"[bold]verdict:[/bold] {s['verdict']}")
