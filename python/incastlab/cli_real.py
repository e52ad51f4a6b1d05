"""`incast serve` and `incast bench`: the real-TCP block server and synchronized-read client."""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

from rich.console import Console

from incastlab import _core
from incastlab import scenario as sc_mod
from incastlab.cli_common import UsageError, seconds_arg, sigterm_as_interrupt, size_arg, table
from incastlab.units import UnitError, format_rate, format_time, parse_rate

SERVE_EXAMPLES = """examples:
  incast serve --listen 10.0.0.2:9000
  incast serve --listen 0.0.0.0:9000 --max-request 16MB --max-conns 64 --cc cubic
"""

BENCH_EXAMPLES = """examples:
  incast bench --servers 10.0.0.2:9000,10.0.0.3:9000 --sru 256KB --blocks 50
  incast bench --servers-file servers.txt --sru 64KB --blocks 100 --warmup 5 --link 1Gbps
  incast bench --servers-file servers.txt --sru 64KB --fanout-window 4 --json
"""


def add_parsers(sub: Any) -> None:
    s = sub.add_parser(
        "serve",
        help="serve blocks of synthetic bytes over TCP (the storage server of the incast papers)",
        description="Answer read requests with synthetic bytes on long-lived TCP connections. "
        "Binds only to the address given; caps the bytes one request may ask for and the "
        "connections held; closes idle peers; refuses malformed or wrong-version requests "
        "(logging why) while serving everyone else. Ctrl-C or SIGTERM stops it.",
        epilog=SERVE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("--listen", required=True, metavar="HOST:PORT", help="address to bind")
    s.add_argument("--max-request", default="64MiB", help="most bytes one request may ask for")
    s.add_argument("--max-conns", type=int, default=1024, help="most connections at once")
    s.add_argument("--idle-timeout", default="60s", help="close a connection silent this long")
    s.add_argument("--cc", metavar="NAME", help="TCP congestion control (TCP_CONGESTION)")
    s.add_argument("--sndbuf", help="socket send buffer (SO_SNDBUF), e.g. 4MiB")
    s.add_argument("--no-nodelay", action="store_true", help="keep Nagle's algorithm on")

    b = sub.add_parser(
        "bench",
        help="read blocks striped over real servers, block k+1 after all of block k",
        description="The synchronized-read client: one long-lived connection per server; "
        "each block asks every server for its SRU and the next block waits for all of them. "
        "Reports goodput, block times and per-server response times in the simulator's "
        "result schema.",
        epilog=BENCH_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument("--servers", metavar="H:P,H:P", help="servers, comma-separated")
    b.add_argument("--servers-file", metavar="FILE", help="servers, one host:port per line")
    b.add_argument("--sru", default=None, help="bytes per server per block (default 256KB)")
    b.add_argument("--block", help="a block striped over the servers instead: SRU = block/N")
    b.add_argument("--blocks", type=int, default=20, help="measured blocks")
    b.add_argument("--warmup", type=int, default=1, help="blocks read first, not measured")
    b.add_argument("--time-limit", default="600s", help="stop after this long")
    b.add_argument("--fanout-window", type=int, default=0, help="servers asked at once (0: all)")
    b.add_argument("--stagger", default="0us", help="delay between a block's requests")
    b.add_argument("--cc", metavar="NAME", help="TCP congestion control of the client sockets")
    b.add_argument("--rcvbuf", help="socket receive buffer (SO_RCVBUF), e.g. 4MiB")
    b.add_argument("--no-nodelay", action="store_true", help="keep Nagle's algorithm on")
    b.add_argument("--link", default="1Gbps", help="the client's link rate, for '%% link'")
    b.add_argument("--json", action="store_true", help="print the result as JSON")
    b.add_argument("--out", metavar="FILE.parquet", help="store the result as Parquet")


def cmd_serve(a: argparse.Namespace, out: Console, err: Console) -> int:
    max_request = size_arg("--max-request", a.max_request)
    if not max_request:
        raise UsageError("--max-request: must be positive")
    if a.max_conns < 1:
        raise UsageError("--max-conns: at least 1")
    sigterm_as_interrupt()

    def ready(addr: str) -> None:
        # A plain line on stdout, flushed, so scripts and tests can wait for it.
        print(f"listening on {addr}", flush=True)

    try:
        _core.serve(
            a.listen,
            max_request,
            a.max_conns,
            seconds_arg("--idle-timeout", a.idle_timeout),
            not a.no_nodelay,
            size_arg("--sndbuf", a.sndbuf),
            a.cc,
            ready,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    except RuntimeError as e:
        err.print(f"[bold red]incast serve:[/bold red] {e}", soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C and SIGTERM are how a server is meant to stop.
        err.print("incast serve: stopped")
    return 0


def cmd_bench(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab import realnet

    try:
        servers = realnet.parse_servers(a.servers, a.servers_file)
        link = parse_rate(a.link)
    except (ValueError, UnitError) as e:
        raise UsageError(str(e)) from None
    if a.sru and a.block:
        raise UsageError("--sru or --block, not both")
    if a.block:
        block = size_arg("--block", a.block) or 0
        if block < len(servers):
            raise UsageError(
                f"--block: {block} bytes cannot be striped over {len(servers)} servers"
            )
        # The engine's one split rule, so bench reads what the simulator and model assume.
        sizes = _core.block_split(block, len(servers))
        sru, load = max(sizes), {"block": f"{block}B"}
    else:
        sru = size_arg("--sru", a.sru or "256KB") or 0
        sizes, load = [], {"sru": f"{sru}B"}
    if not sru:
        raise UsageError("--sru/--block: must be positive")
    if a.blocks < 1 or a.warmup < 0 or a.fanout_window < 0:
        raise UsageError("--blocks must be at least 1, --warmup and --fanout-window at least 0")
    scenario = sc_mod.from_dict(
        {
            "topology": {"senders": len(servers), "link": f"{link}bps"},
            "workload": {
                **load,
                "blocks": a.blocks,
                "fanout_window": a.fanout_window,
                "request_stagger": a.stagger,
            },
        }
    ).normalized()
    try:
        raw = realnet.bench(
            servers,
            sru=sru,
            sizes=sizes,
            blocks=a.blocks,
            warmup=a.warmup,
            time_limit_s=seconds_arg("--time-limit", a.time_limit),
            fanout_window=a.fanout_window,
            stagger_s=seconds_arg("--stagger", a.stagger),
            nodelay=not a.no_nodelay,
            recv_buffer=size_arg("--rcvbuf", a.rcvbuf),
            congestion=a.cc,
        )
    except RuntimeError as e:
        err.print(f"[bold red]incast bench:[/bold red] {e}", soft_wrap=True)
        return 1
    r = realnet.to_result(raw, scenario, backend="bench", extra={"servers": servers})
    if a.out:
        from incastlab.store import write_parquet

        write_parquet([r], a.out)
    if a.json:
        extra = {"response_times_s": _responses_s(r), "report": r.report}
        print(json.dumps(r.to_json() | extra, indent=1))
        return 0
    blocks = r.block_times_s
    t = table()
    for col in ("servers", "goodput", "% link", "block p50", "block p99", "block max", "blocks"):
        t.add_column(col, justify="right")
    p99 = sorted(blocks)[min(len(blocks) - 1, int(0.99 * len(blocks)))]
    t.add_row(
        str(len(servers)),
        format_rate(r.goodput_bps),
        f"{100 * r.goodput_fraction:.1f}%",
        format_time(statistics.median(blocks) * 1e12),
        format_time(p99 * 1e12),
        format_time(max(blocks) * 1e12),
        f"{len(blocks)}" + (" (time limit)" if raw["truncated"] else ""),
    )
    out.print(f"[bold]incast bench[/bold] · SRU {sru:,} B · {len(servers)} servers")
    out.print(t)
    return 0


def _responses_s(r: Any) -> list[list[float]]:
    return [[t / 1e12 for t in b] for b in r.report["response_times"]]


def dispatch(a: argparse.Namespace, out: Console, err: Console) -> int | None:
    """Run `serve` or `bench`; ``None`` for other commands."""
    if a.command == "serve":
        return cmd_serve(a, out, err)
    if a.command == "bench":
        return cmd_bench(a, out, err)
    return None
