"""`incast serve`, `bench` and `emulate`: the real-TCP block server, the synchronized-read
client, and both run in network namespaces on this machine."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import (
    UsageError,
    add_result_flags,
    backend,
    out_file,
    print_error,
    seconds,
    seconds_arg,
    size_arg,
    tracking,
    whole,
    writing,
)
from incastlab.cli.flags import add_scenario_flags, envelope_warning, real_tcp_link, series_from
from incastlab.cli.json_text import print_json
from incastlab.cli.tables import add_wide_flag

if TYPE_CHECKING:
    from rich.console import Console

SERVE_EXAMPLES = """examples:
  incast serve --listen 10.0.0.2:9000
  incast serve --listen 0.0.0.0:9000 --max-request 16MB --max-conns 64 --cc cubic
  incast serve --listen 0.0.0.0:9000 --allow 10.0.0.0/8 --token-file token.txt
"""

BENCH_EXAMPLES = """examples:
  incast bench --servers 10.0.0.2:9000,10.0.0.3:9000 --sru 256KB --blocks 50
  incast bench --servers-file servers.txt --sru 64KB --blocks 100 --warmup 5 --link 1Gbps
  incast bench --servers-file servers.txt --sru 64KB --fanout-window 4 --json
  incast bench --servers 10.0.0.2:9000 --sru 64KB --token-file token.txt
"""


def add_serve_parser(sub: Any) -> None:
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
    s.add_argument(
        "--max-conns", type=whole(1, 1_000_000), default=1024, help="most connections at once"
    )
    s.add_argument(
        "--max-conns-per-peer",
        type=whole(1, 1_000_000),
        default=128,
        help="most connections at once from one address",
    )
    s.add_argument("--idle-timeout", default="60s", help="close a connection silent this long")
    s.add_argument(
        "--first-request-timeout",
        default="5s",
        help="close a new connection that has not asked for anything within this",
    )
    s.add_argument(
        "--write-timeout",
        default="30s",
        help="close a connection whose answer makes no progress this long (a peer not reading)",
    )
    s.add_argument("--cc", metavar="NAME", help="TCP congestion control (TCP_CONGESTION)")
    s.add_argument("--sndbuf", help="socket send buffer (SO_SNDBUF), e.g. 4MiB")
    s.add_argument("--no-nodelay", action="store_true", help="keep Nagle's algorithm on")
    s.add_argument(
        "--allow",
        metavar="CIDR[,CIDR...]",
        help="accept connections only from these address blocks (default: every address)",
    )
    s.add_argument(
        "--token-file",
        metavar="FILE",
        help="serve only requests carrying the shared token in FILE (16-64 printable characters)",
    )
    s.set_defaults(handler=cmd_serve)


def add_bench_parser(sub: Any) -> None:
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
    b.add_argument("--blocks", type=whole(1, 10**9), default=20, help="measured blocks")
    b.add_argument(
        "--warmup", type=whole(0, 10**9), default=1, help="blocks read first, not measured"
    )
    b.add_argument("--time-limit", default="600s", help="stop after this long")
    b.add_argument(
        "--fanout-window", type=whole(0, 10**6), default=0, help="servers asked at once (0: all)"
    )
    b.add_argument("--stagger", default="0us", help="delay between a block's requests")
    b.add_argument("--cc", metavar="NAME", help="TCP congestion control of the client sockets")
    b.add_argument("--rcvbuf", help="socket receive buffer (SO_RCVBUF), e.g. 4MiB")
    b.add_argument(
        "--token-file", metavar="FILE", help="send the servers' shared token in FILE (serve's)"
    )
    b.add_argument("--no-nodelay", action="store_true", help="keep Nagle's algorithm on")
    b.add_argument("--link", default="1Gbps", help="the client's link rate, for '%% link'")
    b.add_argument("--json", action="store_true", help="print the result as JSON")
    b.add_argument(
        "--out",
        type=out_file(".parquet"),
        metavar="FILE.parquet",
        help="store the result as Parquet",
    )
    b.set_defaults(handler=cmd_bench)


def add_emulate_parser(sub: Any) -> None:
    e = sub.add_parser(
        "emulate",
        help="run a scenario on real Linux TCP in network namespaces (root)",
        description="Build N sender namespaces and a receiver namespace on a bridge, shape "
        "the receiver's switch port to the link rate with a tc queue of the port buffer, set "
        "RTOmin per route and the congestion control per socket, serve blocks from every "
        "sender namespace (one process, a socket in each) to the client in the receiver's, and "
        "report with the kernel's timeout and retransmission counters and the queue's drops. "
        "A sender count this machine cannot hold (memory, open files, namespaces, bridge "
        "ports, neighbour table) is refused before anything is built. Everything made is "
        "removed afterwards, also on Ctrl-C or SIGTERM, and by a guard process within a second "
        "if the run is killed; leftovers are removed at the next start (or with --cleanup). "
        "A key-value store (workload.kind = kv_gets) runs the simulator's plan of gets "
        "between the sender namespaces, every host a coordinator and a replica and every "
        "switch port a shaped bottleneck; topology.host_rate_cap shapes every NIC at its cap. "
        "A MapReduce shuffle (workload.kind = shuffle) runs the simulator's fetches the same "
        "way: every reducer asks the map hosts in the simulator's order, fanout_window at once.",
        epilog="examples:\n  sudo incast emulate --senders 1,4,16 --link 100Mbps --buffer 32KB "
        "--sru 64KB --blocks 10\n  sudo incast emulate --senders 256 --link 100Mbps --blocks 5"
        "\n  sudo incast emulate examples/riak-emulated.toml --set topology.link=25Mbps"
        "\n  sudo incast emulate examples/riak-emulated.toml --set topology.host_rate_cap=80%"
        "\n  sudo incast emulate examples/hadoop-shuffle.toml --set topology.senders=6 "
        "--set topology.link=100Mbps --set workload.reducers=12 --set workload.blocks=2"
        "\n  sudo incast emulate --senders 16 --sru 64KB --sysctl net.ipv4.tcp_recovery=0 "
        "--sysctl net.ipv4.tcp_early_retrans=0   # without RACK-TLP"
        "\n  sudo incast emulate --cleanup",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_scenario_flags(e)
    e.add_argument(
        "--warmup", type=whole(0, 10**6), default=1, help="blocks read first, not measured"
    )
    e.add_argument(
        "--time-limit", type=seconds(0.001, 86400), default=300.0, help="seconds per point at most"
    )
    add_result_flags(e)
    e.add_argument("--cleanup", action="store_true", help="only remove dead runs' testbeds")
    e.add_argument(
        "--pcap",
        metavar="DIR",
        help="capture the bottleneck port and the receiver with tcpdump into DIR (one pair "
        "of files per point) and read the bottleneck's with incast pcap",
    )
    e.add_argument(
        "--pcap-senders",
        type=whole(0, 64),
        default=0,
        metavar="K",
        help="with --pcap, capture the first K senders' NICs too (n<N>-seed<S>-sender<i>.pcap: "
        "what each sends, and its ACKs as they arrive)",
    )
    e.add_argument(
        "--sysctl",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a TCP sysctl in every host's namespace beside the scenario's, e.g. "
        "net.ipv4.tcp_recovery=0 (no RACK) or net.ipv4.tcp_early_retrans=0 (no tail loss "
        "probe); repeat for several; only net.ipv4.tcp_* keys",
    )
    e.add_argument(
        "--monitor",
        nargs="?",
        const="1ms",
        metavar="INTERVAL",
        help="sample the receiver's interface as incast monitor does (default 1ms)",
    )
    e.add_argument("-q", "--quiet", action="store_true", help="no table, no progress")
    add_wide_flag(e)
    e.set_defaults(handler=cmd_emulate)


def cmd_serve(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab import _core
    from incastlab.real.signals import sigterm_as_interrupt

    max_request = size_arg("--max-request", a.max_request)
    if not max_request:
        raise UsageError("--max-request: must be positive")
    timeouts = {}
    for flag in ("--idle-timeout", "--first-request-timeout", "--write-timeout"):
        t = seconds_arg(flag, getattr(a, flag[2:].replace("-", "_")), most=DAY)
        if t < 0.001:
            raise UsageError(f"{flag}: at least 1ms")
        timeouts[flag] = t
    sndbuf = socket_buffer("--sndbuf", a.sndbuf)
    congestion(a.cc)
    token = read_token(a.token_file)
    sigterm_as_interrupt()

    def ready(addr: str) -> None:
        # A plain line on stdout, flushed, so scripts and tests can wait for it.
        print(f"listening on {addr}", flush=True)

    try:
        _core.serve(
            a.listen,
            max_request,
            a.max_conns,
            timeouts["--idle-timeout"],
            not a.no_nodelay,
            sndbuf,
            a.cc,
            ready,
            max_conns_per_peer=a.max_conns_per_peer,
            first_request_timeout_s=timeouts["--first-request-timeout"],
            write_timeout_s=timeouts["--write-timeout"],
            allow=a.allow,
            token=token,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    except RuntimeError as e:
        print_error(err, "incast serve:", e)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C and SIGTERM are how a server is meant to stop: say so without blocking, as
        # stderr may be a pipe nobody drains (the server's own log lines never block either).
        say_without_blocking(2, b"incast serve: stopped\n")
    return 0


def say_without_blocking(fd: int, line: bytes) -> None:
    """Write ``line`` to ``fd`` if it can be taken now; drop it if the pipe is full."""
    import os

    try:
        was = os.get_blocking(fd)
        os.set_blocking(fd, False)
        try:
            os.write(fd, line)
        finally:
            os.set_blocking(fd, was)
    except OSError:
        pass


#: Largest token file read: a token is at most 64 characters (and a newline).
TOKEN_FILE_MOST = 4096


def read_token(path: str | None) -> str | None:
    """The shared token in ``--token-file``, checked as the server and client check it; a
    usage error names the file and what is wrong (never the token)."""
    import os
    import stat

    from incastlab import _core

    if path is None:
        return None
    try:
        # Non-blocking: opening a named pipe nobody writes would otherwise hang here.
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise UsageError(f"--token-file: {path} is not a regular file")
            raw = f.read(TOKEN_FILE_MOST + 1)
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        why = getattr(e, "strerror", None) or e
        raise UsageError(f"--token-file: cannot read {path}: {why}") from None
    if len(raw) > TOKEN_FILE_MOST:
        raise UsageError(f"--token-file: {path} is larger than a token (at most 64 characters)")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise UsageError(
            f"--token-file: {path} is not plain ASCII (a token is 16-64 printable characters)"
        ) from None
    try:
        _core.check_token(text)
    except ValueError as e:
        raise UsageError(f"--token-file: {path}: {e}") from None
    return text


#: Longest time a server or client flag may give (a day), and the largest socket buffer asked
#: of the kernel (it caps them lower still, at net.core.wmem_max / rmem_max).
DAY = 86400.0
MAX_SOCKET_BUFFER = 1 << 30


def congestion(name: str | None) -> None:
    """Check ``--cc`` before serving or connecting: a name this kernel lacks is a usage error."""
    from incastlab import _core

    if name is not None:
        try:
            _core.check_congestion(name)
        except ValueError as e:
            raise UsageError(f"--cc: {e}") from None


def socket_buffer(flag: str, value: str | None) -> int | None:
    """A socket buffer size flag in bytes, 1 byte to 1 GiB."""
    n = size_arg(flag, value)
    if n is not None and not 1 <= n <= MAX_SOCKET_BUFFER:
        raise UsageError(f"{flag}: 1B..1GiB, got {value}")
    return n


def _bench_load(a: argparse.Namespace, servers: int) -> tuple[int, int | None]:
    """Bytes per server per block and the striped block, if --block gave one (the largest
    server's share then: the engine's split rule decides each server's)."""
    if a.sru and a.block:
        raise UsageError("--sru or --block, not both")
    block = size_arg("--block", a.block) if a.block else None
    if block is not None and block < servers:
        raise UsageError(f"--block: {block} bytes cannot be striped over {servers} servers")
    sru = -(-block // servers) if block is not None else size_arg("--sru", a.sru or "256KB") or 0
    if not sru:
        raise UsageError("--sru/--block: must be positive")
    if a.blocks < 1 or a.warmup < 0 or a.fanout_window < 0:
        raise UsageError("--blocks must be at least 1, --warmup and --fanout-window at least 0")
    return sru, block


def cmd_bench(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.real import bench as realnet
    from incastlab.units import UnitError, parse_rate

    try:
        servers = realnet.parse_servers(a.servers, a.servers_file)
        link = parse_rate(a.link)
    except (ValueError, UnitError) as e:
        raise UsageError(str(e)) from None
    sru, block = _bench_load(a, len(servers))
    congestion(a.cc)
    options = dict(
        sru=sru,
        blocks=a.blocks,
        warmup=a.warmup,
        time_limit_s=seconds_arg("--time-limit", a.time_limit, most=DAY),
        fanout_window=a.fanout_window,
        stagger_s=seconds_arg("--stagger", a.stagger, most=60.0),
        nodelay=not a.no_nodelay,
        recv_buffer=socket_buffer("--rcvbuf", a.rcvbuf),
        congestion=a.cc,
        token=read_token(a.token_file),
    )
    try:
        r = realnet.run(servers, link_bps=link, block=block, request_stagger=a.stagger, **options)
    except RuntimeError as e:
        print_error(err, "incast bench:", e)
        return 1
    if a.out:
        from incastlab.result.store import write_parquet

        with writing("--out", a.out):
            write_parquet([r], a.out)
    if a.json:
        print_json([r.to_json()])
        return 0
    from incastlab.cli.render import print_bench

    print_bench(out, r, sru, len(servers))
    return 0


def sysctl_flags(given: list[str]) -> dict[str, str]:
    """``--sysctl KEY=VALUE`` flags as a mapping (checked here, so a bad one is refused before
    anything is built)."""
    from incastlab.real.testbed.build import EmulationError, check_sysctls

    pairs = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--sysctl {item}: expected KEY=VALUE, e.g. net.ipv4.tcp_recovery=0")
        pairs[key.strip()] = value.strip()
    try:
        return check_sysctls(pairs)
    except EmulationError as e:
        raise UsageError(str(e)) from None


def cmd_emulate(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.cli.sim import write_outputs
    from incastlab.series import labelled, run_series

    if a.cleanup:
        from incastlab.real.netns import remove_leftovers

        err.print(f"removed the testbeds of {len(remove_leftovers())} dead run(s)")
        return 0
    monitor_ns = None
    if a.monitor:
        from incastlab.cli.common import seconds_arg

        monitor_ns = round(seconds_arg("--monitor", a.monitor) * 1e9)
        if not 10_000 <= monitor_ns <= 1_000_000_000:
            raise UsageError(f"--monitor: the interval must be 10us..1s, got {a.monitor!r}")
    if a.pcap_senders and not a.pcap:
        raise UsageError("--pcap-senders: name the directory with --pcap DIR")
    real_tcp_link(a)
    series = series_from(a)
    envelope_warning((sc for _, pts in series for sc in pts), err)
    # Every point is checked against this machine before the first testbed is built.
    from incastlab.real.capacity import Machine
    from incastlab.real.emulate import check_capacity, refuse_rdma
    from incastlab.real.testbed.build import EmulationError

    here = Machine.here()
    for _, pts in series:
        for sc in pts:
            try:
                refuse_rdma(sc.normalized())
            except EmulationError as e:
                raise UsageError(str(e)) from None
            check_capacity(sc, here)
    # The backend checks this machine can emulate (root, ip, tc) only after the scenario's own
    # refusals (an RDMA transport), so those read the same for every user.
    emulation = backend(
        "emulate",
        warmup=a.warmup,
        time_limit_s=a.time_limit,
        pcap_dir=a.pcap,
        monitor_ns=monitor_ns,
        pcap_senders=a.pcap_senders,
        sysctls=sysctl_flags(a.sysctl),
    )
    total = sum(len(p) for _, p in series)
    with tracking(err, "emulating", total, not a.json and not a.quiet) as tracker:
        run = run_series(series, emulation, tracker)
    if a.json:
        print_json(labelled(run.series, lambda r: r.to_json()))
    elif not a.quiet:
        from incastlab.cli.render import print_runs

        print_runs(out, run, "emulate", " · real Linux TCP", wide=a.wide)
        print_observed(out, run.results)
    write_outputs(a, run, series, "Incast on real Linux TCP (namespaces)")
    return 0


def print_observed(out: Console, results: Any) -> None:
    """Per point: what the monitor saw on the receiver and what the bottleneck's capture
    shows, beside the kernel's timeout count."""
    from incastlab.units import format_rate

    for r in results:
        rep = r.report
        if m := rep.get("monitor"):
            out.print(
                f"N={r.senders} monitor (receiver eth0, every {m['interval_ns'] / 1e6:g} ms): "
                f"average {format_rate(m['avg_bps'])}, peak {format_rate(m['peak_bps'])}, "
                f"peak/avg {m['peak_to_avg']:.1f}, at line rate "
                f"{100 * (m['at_line_rate'] or 0):.1f}%; peak/avg by window "
                + ", ".join(
                    f"{w['window_ns'] / 1e6:g} ms {w['peak_to_avg']:.1f}"
                    for w in m["peak_to_avg_by_window"]
                )
                + f" · {m['verdict']}",
                soft_wrap=True,
            )
        if c := rep.get("captures"):
            b = c["bottleneck"]
            an = b.get("analysis", {})
            found = an.get("rtos", "?")
            out.print(
                f"N={r.senders} captures: {b['file']} ({b['packets']} packets), "
                f"{c['receiver']['file']} · incast pcap finds {found} timeouts, the kernel "
                f"counted {rep['timeouts']} · {an.get('verdict', an.get('error', ''))}",
                soft_wrap=True,
            )
            if senders := [v["file"] for k, v in c.items() if k.startswith("sender")]:
                out.print(f"N={r.senders} sender captures: {', '.join(senders)}", soft_wrap=True)
