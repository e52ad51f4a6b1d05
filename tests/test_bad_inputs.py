"""Every bad input ends in one line that names the field, exit 1 or 2, in bounded time and
memory: no traceback, no panic, no hang.

The corpus is data: flags of each command crossed with bad values (``FLAG_VALUES``), and
hand-written cases (``CASES``), some naming files made by :func:`fixtures` (``{utf16}``).
Each case runs in a forked child of one warm process (``badinput/runner.py``), limited in
address space and killed at ``TIME_LIMIT`` seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

RUNNER = Path(__file__).parent / "badinput" / "runner.py"
#: A case still running after this long is a hang.
TIME_LIMIT = 30.0
#: Peak resident memory a failing command may reach (the Python interpreter, numpy and the
#: core take about 70 MB; the 2,900 MB of reading /dev/zero is what this catches).
MEMORY_LIMIT_MB = 400

#: Values no size, rate or time flag accepts, each with what makes it bad.
BAD_UNIT_VALUES = [
    "",
    " ",
    "x",
    "64",
    "64XB",
    "-1KB",
    "nan",
    "infKB",
    "1e99999KB",
    "1e999Gbps",
    "1e-99999s",
    "²KB",
    "٣KB",
    "1.5.5KB",
    "0x10KB",
    "64 K B",
    "∞",
    "x" * 100_000,
    "1" * 5000 + "KB",
    "9" * 30 + "Gbps",
]
#: Scenario flags taking a unit, and the scenario key an error names.
UNIT_FLAGS = {
    "--sru": "workload.sru",
    "--block": "workload.block",
    "--flow-size": "workload.flow_size",
    "--buffer": "topology.buffer",
    "--link": "topology.link",
    "--receiver-link": "topology.receiver_link",
    "--rtt": "topology.rtt",
    "--rto-min": "tcp.rto_min",
    "--rto-max": "tcp.rto_max",
    "--clock": "tcp.clock_granularity",
    "--delayed-ack": "tcp.delayed_ack",
    "--jitter": "workload.jitter",
    "--host-jitter": "topology.host_jitter",
    "--max-time": "run.max_time",
}
BAD_COUNTS = ["-1", "²", "1e3", "abc", "9" * 30, "", "٣", "1.5"]
COUNT_FLAGS = ["--blocks", "--initial-window", "--background", "--seed", "--max-events"]
BAD_SENDERS = [
    "0",
    "1..0",
    "²",
    "1..100000000000",
    "1,,x",
    "9" * 5000,
    "-3",
    "1..10:0",
    "1.." + "9" * 19,
    ",".join(["1"] * 200_000),
    "1..5000000",
]


def _flag_cases() -> Iterator[tuple[str, list[str], int, tuple[str, ...]]]:
    for flag, key in UNIT_FLAGS.items():
        for i, v in enumerate(BAD_UNIT_VALUES):
            yield f"sim {flag} #{i}", ["sim", "--senders", "1", flag, v], 2, (flag, key)
    for flag in COUNT_FLAGS:
        for i, v in enumerate(BAD_COUNTS):
            yield f"sim {flag} #{i}", ["sim", flag, v], 2, (flag,)
    for cmd in ("sim", "model", "mitigate", "compare"):
        for i, v in enumerate(BAD_SENDERS):
            yield f"{cmd} --senders #{i}", [cmd, "--senders", v], 2, ("senders",)
    for cmd in ("model", "mitigate"):
        for flag in ("--sru", "--buffer", "--rto-min", "--link"):
            for i, v in enumerate(BAD_UNIT_VALUES[::3]):
                yield f"{cmd} {flag} #{i}", [cmd, flag, v], 2, (flag, UNIT_FLAGS[flag])


#: A run on a topology file (the file follows as one more `--set`).
FILE_TOPOLOGY = ["sim", "--set", "topology.kind=file", "--set"]

#: Hand-written cases: (name, argv, exit code, any of these must be in the message).
CASES: list[tuple[str, list[str], int, tuple[str, ...]]] = [
    # scenario files
    ("utf-16 file", ["sim", "{utf16}"], 2, ("UTF-16",)),
    ("latin-1 file", ["sim", "{latin1}"], 2, ("UTF-8",)),
    ("binary file", ["sim", "{binary}"], 2, ("UTF-8", "TOML")),
    ("deep arrays", ["sim", "{deep_arrays}"], 2, ("nested",)),
    ("deep tables", ["sim", "{deep_tables}"], 2, ("nested",)),
    ("deep inline tables", ["sim", "{deep_inline}"], 2, ("nested",)),
    ("5000-digit integer", ["sim", "{long_int}"], 2, ("value",)),
    ("1e99999KB in a file", ["sim", "{huge_size}"], 2, ("workload.sru",)),
    ("/dev/zero scenario", ["sim", "/dev/zero"], 2, ("device",)),
    ("/dev/urandom scenario", ["sim", "/dev/urandom"], 2, ("device",)),
    ("fifo scenario", ["sim", "{fifo}"], 2, ("pipe",)),
    ("directory scenario", ["sim", "{dir}"], 2, ("directory",)),
    ("missing scenario", ["sim", "{dir}/missing.toml"], 2, ("cannot read",)),
    ("big scenario", ["sim", "{big}"], 2, ("larger than",)),
    ("toml syntax", ["sim", "{syntax}"], 2, ("TOML",)),
    ("unknown key", ["sim", "{unknown_key}"], 2, ("topology.bufer",)),
    ("section not a table", ["sim", "{section_value}"], 2, ("topology",)),
    ("10,001 senders in a file", ["sim", "{senders_10001}"], 2, ("topology.senders",)),
    ("senders list of text", ["sim", "{senders_text}"], 2, ("topology.senders",)),
    ("nan in a file", ["sim", "{nan}"], 2, ("topology.buffer_alpha",)),
    ("inf in a file", ["sim", "{inf}"], 2, ("tcp.dctcp_g",)),
    ("huge max_samples", ["sim", "{samples}"], 2, ("run.max_samples",)),
    (
        "listed placement without hosts",
        ["sim", "--set", "topology.kind=fat_tree", "--set", "topology.placement=listed"],
        2,
        ("topology.placement",),
    ),
    ("listed hosts as text", ["sim", "--set", "topology.listed_hosts=abc"], 2, ("listed_hosts",)),
    (
        "a listed host twice",
        [
            *["sim", "--set", "topology.kind=fat_tree", "--set", "topology.placement=listed"],
            *["--set", "topology.listed_hosts=[0,1,1]"],
        ],
        2,
        ("named twice",),
    ),
    ("NUL in a path", ["sim", "a\0b.toml"], 2, ("scenario file",)),
    ("model on utf-16", ["model", "{utf16}"], 2, ("UTF-16",)),
    ("mitigate on /dev/zero", ["mitigate", "/dev/zero"], 2, ("device",)),
    ("compare on a fifo", ["compare", "{fifo}"], 2, ("pipe",)),
    # CDF files
    (
        "cdf /dev/zero",
        ["sim", "--workload", "queries", "--set", "workload.query_size_cdf=/dev/zero"],
        2,
        ("workload.query_size_cdf",),
    ),
    (
        "cdf fifo",
        ["sim", "--workload", "queries", "--set", "workload.query_size_cdf={fifo}"],
        2,
        ("workload.query_size_cdf",),
    ),
    (
        "cdf utf-16",
        ["sim", "--workload", "queries", "--set", "workload.query_size_cdf={utf16}"],
        2,
        ("workload.query_size_cdf",),
    ),
    (
        "cdf bad line",
        ["sim", "--workload", "queries", "--set", "workload.query_size_cdf={cdf_bad}"],
        2,
        ("workload.query_size_cdf",),
    ),
    (
        "cdf nan",
        ["sim", "--workload", "queries", "--set", "workload.query_size_cdf={cdf_nan}"],
        2,
        ("workload.query_size_cdf",),
    ),
    (
        "cdf long size",
        ["sim", "--workload", "queries", "--set", "workload.query_size_cdf={cdf_long}"],
        2,
        ("workload.query_size_cdf",),
    ),
    # the key-value store's impossible loads and rate caps
    (
        "kv utilization 100%",
        ["sim", "--workload", "kv_gets", "--senders", "20", "--set", "workload.kv_utilization=1"],
        2,
        ("workload.kv_utilization",),
    ),
    (
        "kv more replicas than hosts",
        ["sim", "--workload", "kv_gets", "--senders", "2"],
        2,
        ("workload.kv_replicas",),
    ),
    (
        "kv background to the receiver",
        ["sim", "--workload", "kv_gets", "--senders", "4", "--set", "background.flows=2"],
        2,
        ("background", "peers"),
    ),
    (
        "kv put share above 1",
        ["sim", "--workload", "kv_gets", "--senders", "4", "--set", "workload.kv_put_fraction=1.5"],
        2,
        ("workload.kv_put_fraction",),
    ),
    ("rate cap 120%", ["sim", "--set", "topology.host_rate_cap=120%"], 2, ("host_rate_cap",)),
    # topology files
    *(
        (f"topology file: {name}", [*FILE_TOPOLOGY, f"topology.file={{{fixture}}}"], 2, (says,))
        for name, fixture, says in [
            ("disconnected host", "topo_island", "cannot reach host"),
            ("link with no rate", "topo_norate", "has no rate"),
            ("unknown node", "topo_unknown", "unknown node"),
            ("duplicate names", "topo_dup", "is used twice"),
            ("host with two links", "topo_two_links", "has two links"),
            ("receiver a switch", "topo_receiver", "is a switch; it must be a host"),
            ("rate without a unit", "topo_bad_rate", "rate: "),
            ("utf-16", "utf16", "UTF-16"),
            ("a directory", "dir", "directory"),
            ("a fifo", "fifo", "pipe"),
        ]
    ),
    ("topology file /dev/zero", [*FILE_TOPOLOGY, "topology.file=/dev/zero"], 2, ("device",)),
    ("topology file missing", [*FILE_TOPOLOGY, "topology.file={dir}/no.toml"], 2, ("read",)),
    ("kind file, no file", ["sim", "--set", "topology.kind=file"], 2, ("topology.file",)),
    (
        "topology file, rtt too",
        [*FILE_TOPOLOGY, "topology.file={topo_ok}", "--rtt", "1ms"],
        2,
        ("topology.rtt",),
    ),
    (
        "topology file, too many senders",
        [*FILE_TOPOLOGY, "topology.file={topo_ok}", "--senders", "3"],
        2,
        ("topology.senders",),
    ),
    ("rate cap text", ["sim", "--set", "topology.host_rate_cap=fast"], 2, ("host_rate_cap",)),
    # --set and --vary
    ("--set nan", ["sim", "--set", "topology.buffer_alpha=nan"], 2, ("topology.buffer_alpha",)),
    ("--set inf", ["sim", "--set", "topology.buffer_alpha=inf"], 2, ("topology.buffer_alpha",)),
    ("--set -inf", ["sim", "--set", "tcp.rto_omega=-inf"], 2, ("tcp.rto_omega",)),
    ("--set 1e999", ["sim", "--set", "tcp.dctcp_g=1e999"], 2, ("tcp.dctcp_g",)),
    ("--set huge int", ["sim", "--set", "tcp.dupthresh=" + "9" * 40], 2, ("tcp.dupthresh",)),
    ("--set 5000 digits", ["sim", "--set", "tcp.dupthresh=" + "9" * 5000], 2, ("tcp.dupthresh",)),
    ("--set negative", ["sim", "--set", "tcp.dupthresh=-1"], 2, ("tcp.dupthresh",)),
    ("--set no =", ["sim", "--set", "tcp.dupthresh"], 2, ("--set",)),
    ("--set unknown", ["sim", "--set", "tcp.dupthres=3"], 2, ("tcp.dupthres",)),
    ("--set deep", ["sim", "--set", "a.b.c.d.e=1"], 2, ("unknown key",)),
    ("--set section", ["sim", "--set", "topology=1"], 2, ("topology",)),
    ("--set into value", ["sim", "--set", "seed.x=1"], 2, ("seed",)),
    (
        "--set bad enum",
        ["sim", "--set", "tcp.congestion_control=bogus"],
        2,
        ("congestion_control",),
    ),
    (
        "--set long enum",
        ["sim", "--set", "tcp.congestion_control=" + "x" * 1_000_000],
        2,
        ("congestion_control",),
    ),
    ("--set long key", ["sim", "--set", "k" * 1_000_000 + "=1"], 2, ("unknown key",)),
    (
        "--set nested list",
        ["sim", "--set", "tcp.dupthresh=" + "[" * 3000 + "]" * 3000],
        2,
        ("tcp.dupthresh",),
    ),
    ("--set list", ["sim", "--set", "tcp.sack=[1, 2]"], 2, ("tcp.sack",)),
    ("--set table", ["sim", "--set", "tcp.sack={a = 1}"], 2, ("tcp.sack",)),
    ("--set bool size", ["sim", "--set", "workload.sru=true"], 2, ("workload.sru",)),
    ("--set int size", ["sim", "--set", "workload.sru=64000"], 2, ("workload.sru",)),
    (
        "--set buffer table",
        ["sim", "--set", "topology.buffer={bytes = 1}"],
        2,
        ("topology.buffer",),
    ),
    ("--set brackets", ["sim", "--set", "incastlab[cluster]=1"], 2, ("incastlab[cluster]",)),
    ("--vary one value", ["sim", "--vary", "tcp.rto_min=1ms"], 2, ("--vary",)),
    ("--vary no =", ["sim", "--vary", "tcp.rto_min"], 2, ("--vary",)),
    ("--vary bad", ["sim", "--vary", "tcp.rto_min=1ms,x"], 2, ("tcp.rto_min",)),
    (
        "--vary huge",
        ["sim", "--senders", "1..10000", "--vary", "seed=" + ",".join(map(str, range(50)))],
        2,
        ("--vary",),
    ),
    ("--sru list and vary", ["sim", "--sru", "1KB,2KB", "--vary", "seed=1,2"], 2, ("--sru",)),
    ("--workload bogus", ["sim", "--workload", "bogus"], 2, ("--workload",)),
    ("--cc bogus", ["sim", "--cc", "bogus"], 2, ("--cc",)),
    ("--profile bogus", ["sim", "--profile", "bogus"], 2, ("--profile",)),
    ("--sru and --block", ["sim", "--sru", "1KB", "--block", "1MB"], 2, ("--block",)),
    ("--senders 0", ["sim", "--senders", "0"], 2, ("topology.senders",)),
    ("--senders over the cap", ["sim", "--senders", "100001"], 2, ("topology.senders",)),
    # outputs
    ("--plot bogus ext", ["sim", "--senders", "1", "--plot", "x.bogusext"], 2, ("--plot",)),
    ("--plot no dir", ["sim", "--senders", "1", "--plot", "/nonexistent/x.png"], 2, ("--plot",)),
    ("--plot a dir", ["sim", "--senders", "1", "--plot", "{dir}"], 2, ("--plot",)),
    ("--plot dir.png", ["sim", "--senders", "1", "--plot", "{dir_png}"], 2, ("--plot",)),
    ("--out /dev/full", ["sim", "--senders", "1", "--out", "/dev/full"], 2, ("--out",)),
    (
        "--out full parquet",
        ["sim", "--senders", "1", "--sru", "1KB", "--blocks", "1", "--out", "{full_parquet}"],
        2,
        ("--out",),
    ),
    ("--out bad ext", ["sim", "--senders", "1", "--out", "x.csv"], 2, ("--out",)),
    ("--timeseries bad", ["sim", "--senders", "1", "--timeseries", "x.txt"], 2, ("--timeseries",)),
    ("model --plot bad", ["model", "--plot", "x.jpg"], 2, ("--plot",)),
    ("mitigate --plot bad", ["mitigate", "--plot", "x"], 2, ("--plot",)),
    ("compare --plot bad", ["compare", "--plot", "/nonexistent/c.png"], 2, ("--plot",)),
    ("sweep --out a file", ["sweep", "{sweep_spec}", "--out", "{afile}"], 2, ("--out",)),
    ("reproduce --out a file", ["reproduce", "chen-fig2", "--out", "{afile}"], 2, ("--out",)),
    ("results --csv bad", ["results", "{dir}", "--csv", "x.txt"], 2, ("--csv",)),
    ("report --out bad", ["report", "{dir}", "--out", "r.pdf"], 2, ("--out",)),
    ("plot --out bad", ["plot", "{dir}", "--out", "x.bogusext"], 2, ("--out",)),
    # sweep specs
    ("sweep utf-16", ["sweep", "{utf16}", "--dry-run"], 2, ("UTF-16",)),
    ("sweep deep", ["sweep", "{deep_arrays}", "--dry-run"], 2, ("nested",)),
    ("sweep /dev/zero", ["sweep", "/dev/zero", "--dry-run"], 2, ("device",)),
    ("sweep fifo", ["sweep", "{fifo}", "--dry-run"], 2, ("pipe",)),
    ("sweep huge range", ["sweep", "{sweep_huge}", "--dry-run"], 2, ("topology.senders",)),
    ("sweep huge zip", ["sweep", "{sweep_zip}", "--dry-run"], 2, ("topology.senders",)),
    ("sweep huge product", ["sweep", "{sweep_product}", "--dry-run"], 2, ("points",)),
    ("sweep bad zip", ["sweep", "{sweep_badzip}", "--dry-run"], 2, ("sweep.zip",)),
    ("sweep bad seeds", ["sweep", "{sweep_seeds}", "--dry-run"], 2, ("sweep.seeds",)),
    ("sweep bad backend", ["sweep", "{sweep_backend}", "--dry-run"], 2, ("sweep.backend",)),
    ("sweep unknown key", ["sweep", "{sweep_unknown}", "--dry-run"], 2, ("sweep.bogus",)),
    ("sweep bad point", ["sweep", "{sweep_badpoint}", "--dry-run"], 2, ("workload.sru",)),
    ("sweep empty list", ["sweep", "{sweep_empty}", "--dry-run"], 2, ("tcp.rto_min",)),
    ("sweep --workers 0", ["sweep", "{sweep_spec}", "--workers", "0"], 2, ("--workers",)),
    ("sweep --workers huge", ["sweep", "{sweep_spec}", "--workers", "9" * 30], 2, ("--workers",)),
    ("sweep --backend bogus", ["sweep", "{sweep_spec}", "--backend", "bogus"], 2, ("--backend",)),
    # sweep directories
    ("results not a sweep", ["results", "{dir}"], 2, ("sweep.json",)),
    ("results missing", ["results", "{dir}/nope"], 2, ("sweep.json",)),
    ("results --verify not a sweep", ["results", "{dir}", "--verify"], 2, ("sweep.json",)),
    ("results --verify missing", ["results", "{dir}/nope", "--verify"], 2, ("sweep.json",)),
    (
        "results --verify with --where",
        ["results", "{dir}", "--verify", "--where", "senders=1"],
        2,
        ("--verify",),
    ),
    ("results --verify not parquet", ["results", "{afile}", "--verify"], 1, ("damaged",)),
    ("results --verify fifo", ["results", "{fifo}", "--verify"], 2, ("sweep.json",)),
    ("results --verify /dev/null", ["results", "/dev/null", "--verify"], 2, ("sweep.json",)),
    (
        "results --verify other parquet",
        ["results", "{other_parquet}", "--verify"],
        2,
        ("not an incastlab results file",),
    ),
    (
        "results --verify a file in a dir",
        ["results", "{parquet_dir}", "--verify"],
        2,
        ("sweep.json",),
    ),
    ("results corrupt sweep.json", ["results", "{sweep_corrupt_meta}"], 2, ("sweep.json",)),
    ("results deep sweep.json", ["results", "{sweep_deep_meta}"], 2, ("sweep.json",)),
    ("results sweep.json a fifo", ["results", "{sweep_fifo_meta}"], 2, ("sweep.json",)),
    (
        "results bad --where",
        ["results", "{sweep_corrupt_meta}", "--where", "x"],
        2,
        ("sweep.json", "--where"),
    ),
    ("plot not a sweep", ["plot", "{dir}", "--out", "x.png"], 2, ("sweep.json",)),
    ("report not a sweep", ["report", "{dir}"], 2, ("sweep.json",)),
    (
        "plot corrupt sweep.json",
        ["plot", "{sweep_corrupt_meta}", "--out", "x.png"],
        2,
        ("sweep.json",),
    ),
    ("report corrupt sweep.json", ["report", "{sweep_corrupt_meta}"], 2, ("sweep.json",)),
    # studies
    ("reproduce --workers 0", ["reproduce", "--workers", "0", "chen-fig2"], 2, ("--workers",)),
    ("reproduce unknown", ["reproduce", "nope"], 2, ("nope",)),
    ("reproduce nothing", ["reproduce"], 2, ("experiment",)),
    (
        "reproduce --trace empty",
        ["reproduce", "fb2009-replay", "--trace", "{trace_empty}"],
        2,
        ("--trace", "no jobs"),
    ),
    (
        "reproduce --trace bad field",
        ["reproduce", "fb2009-replay", "--trace", "{trace_bad}"],
        2,
        ("--trace", "line 2", "shuffle_bytes"),
    ),
    (
        "reproduce --trace missing",
        ["reproduce", "fb2009-replay", "--trace", "absent.tsv"],
        2,
        ("--trace", "no such trace file"),
    ),
    (
        "reproduce --trace binary",
        ["reproduce", "fb2009-replay", "--trace", "{binary}"],
        2,
        ("--trace", "not a text file"),
    ),
    (
        "reproduce --trace elsewhere",
        ["reproduce", "chen-fig2", "--trace", "{trace_empty}"],
        2,
        ("--trace", "fb2009-replay"),
    ),
    ("compare --repeat 0", ["compare", "--repeat", "0"], 2, ("--repeat",)),
    ("compare --backends bogus", ["compare", "--backends", "sim,bogus"], 2, ("--backends",)),
    ("compare --time-limit nan", ["compare", "--time-limit", "nan"], 2, ("--time-limit",)),
    ("compare --time-limit inf", ["compare", "--time-limit", "inf"], 2, ("--time-limit",)),
    ("compare --time-limit 1e999", ["compare", "--time-limit", "1e999"], 2, ("--time-limit",)),
    ("mitigate --only bogus", ["mitigate", "--only", "bogus"], 2, ("bogus",)),
    ("model --partial-rto nan", ["model", "--partial-rto", "nan"], 2, ("--partial-rto",)),
    ("model --partial-rto -1", ["model", "--partial-rto", "-1"], 2, ("--partial-rto",)),
    ("model --extra-buffer huge", ["model", "--extra-buffer", "1e999KB"], 2, ("--extra-buffer",)),
    ("model --extra-buffer x", ["model", "--extra-buffer", "x"], 2, ("--extra-buffer",)),
    (
        "model --doubles-at 0",
        ["model", "--partial-rto-doubles-at", "0"],
        2,
        ("--partial-rto-doubles-at",),
    ),
    ("rto-random --delta huge", ["model", "rto-random", "--delta", "1e999s"], 2, ("--delta",)),
    ("rto-random --delta x", ["model", "rto-random", "--delta", "x"], 2, ("--delta",)),
    ("rto-random --rto-min huge", ["model", "rto-random", "--rto-min", "1e30s"], 2, ("--rto-min",)),
    (
        "rto-random --senders huge",
        ["model", "rto-random", "--senders", "1..100000000000"],
        2,
        ("--senders",),
    ),
    ("rto-random --plot bad", ["model", "rto-random", "--plot", "x.bogus"], 2, ("--plot",)),
    ("rto-random unknown flag", ["model", "rto-random", "--bogus"], 2, ("--bogus",)),
    ("calibrate --blocks 0", ["model", "calibrate", "--blocks", "0"], 2, ("--blocks",)),
    ("calibrate --set bad", ["model", "calibrate", "--set", "tcp.bogus=1"], 2, ("tcp.bogus",)),
    (
        "calibrate --variants bogus",
        ["model", "calibrate", "--variants", "v" * 100_000],
        2,
        ("--variants",),
    ),
    (
        "model --uncalibrated --extra-buffer x",
        ["model", "--uncalibrated", "--extra-buffer", "x"],
        2,
        ("--extra-buffer",),
    ),
    ("validate --repeat 0", ["validate", "--repeat", "0"], 2, ("--repeat",)),
    ("validate --blocks -1", ["validate", "--blocks", "-1"], 2, ("--blocks",)),
    ("validate --time-limit nan", ["validate", "--time-limit", "nan"], 2, ("--time-limit",)),
    ("emulate --time-limit inf", ["emulate", "--time-limit", "inf"], 2, ("--time-limit",)),
    ("emulate --warmup -1", ["emulate", "--warmup", "-1"], 2, ("--warmup",)),
    ("emulate --plot bad", ["emulate", "--plot", "x.bogus"], 2, ("--plot",)),
    ("unknown command", ["bogus"], 2, ("bogus",)),
    ("unknown flag", ["sim", "--bogus"], 2, ("--bogus",)),
    ("flag without value", ["sim", "--sru"], 2, ("--sru",)),
    # serve
    ("serve --cc bogus", ["serve", "--listen", "127.0.0.1:0", "--cc", "bogus"], 2, ("--cc",)),
    ("serve --cc long", ["serve", "--listen", "127.0.0.1:0", "--cc", "c" * 100_000], 2, ("--cc",)),
    ("serve --listen bogus", ["serve", "--listen", "bogus"], 2, ("--listen",)),
    ("serve --listen port", ["serve", "--listen", "127.0.0.1:99999"], 2, ("--listen",)),
    ("serve --listen long", ["serve", "--listen", "h" * 1_000_000], 2, ("--listen",)),
    ("serve --listen taken", ["serve", "--listen", "{taken}"], 1, ("cannot listen",)),
    (
        "serve --max-request huge",
        ["serve", "--listen", "127.0.0.1:0", "--max-request", "1e999KB"],
        2,
        ("--max-request",),
    ),
    (
        "serve --max-request 0",
        ["serve", "--listen", "127.0.0.1:0", "--max-request", "0B"],
        2,
        ("--max-request",),
    ),
    (
        "serve --max-conns huge",
        ["serve", "--listen", "127.0.0.1:0", "--max-conns", "9" * 20],
        2,
        ("--max-conns",),
    ),
    (
        "serve --max-conns 0",
        ["serve", "--listen", "127.0.0.1:0", "--max-conns", "0"],
        2,
        ("--max-conns",),
    ),
    (
        "serve --idle-timeout 1e30s",
        ["serve", "--listen", "127.0.0.1:0", "--idle-timeout", "1e30s"],
        2,
        ("--idle-timeout",),
    ),
    (
        "serve --idle-timeout 2d",
        ["serve", "--listen", "127.0.0.1:0", "--idle-timeout", "172800s"],
        2,
        ("--idle-timeout",),
    ),
    (
        "serve --idle-timeout 0",
        ["serve", "--listen", "127.0.0.1:0", "--idle-timeout", "0s"],
        2,
        ("--idle-timeout",),
    ),
    (
        "serve --idle-timeout x",
        ["serve", "--listen", "127.0.0.1:0", "--idle-timeout", "x"],
        2,
        ("--idle-timeout",),
    ),
    (
        "serve --sndbuf huge",
        ["serve", "--listen", "127.0.0.1:0", "--sndbuf", "1e999KB"],
        2,
        ("--sndbuf",),
    ),
    (
        "serve --sndbuf 1TB",
        ["serve", "--listen", "127.0.0.1:0", "--sndbuf", "1TB"],
        2,
        ("--sndbuf",),
    ),
    ("serve --sndbuf 0", ["serve", "--listen", "127.0.0.1:0", "--sndbuf", "0B"], 2, ("--sndbuf",)),
    ("serve no --listen", ["serve"], 2, ("--listen",)),
    # bench
    ("bench no servers", ["bench"], 2, ("--servers",)),
    ("bench bad server", ["bench", "--servers", "nohost"], 2, ("--servers",)),
    ("bench bad port", ["bench", "--servers", "127.0.0.1:0"], 2, ("--servers",)),
    ("bench port text", ["bench", "--servers", "127.0.0.1:²"], 2, ("--servers",)),
    ("bench long server", ["bench", "--servers", "s" * 1_000_000], 2, ("--servers",)),
    (
        "bench servers-file /dev/zero",
        ["bench", "--servers-file", "/dev/zero"],
        2,
        ("--servers-file",),
    ),
    ("bench servers-file fifo", ["bench", "--servers-file", "{fifo}"], 2, ("--servers-file",)),
    ("bench servers-file utf-16", ["bench", "--servers-file", "{utf16}"], 2, ("--servers-file",)),
    (
        "bench servers-file missing",
        ["bench", "--servers-file", "{dir}/nope"],
        2,
        ("--servers-file",),
    ),
    ("bench refused", ["bench", "--servers", "127.0.0.1:1", "--blocks", "1"], 1, ("127.0.0.1:1",)),
    ("bench --blocks 0", ["bench", "--servers", "127.0.0.1:1", "--blocks", "0"], 2, ("--blocks",)),
    (
        "bench --blocks huge",
        ["bench", "--servers", "127.0.0.1:1", "--blocks", "9" * 30],
        2,
        ("--blocks",),
    ),
    (
        "bench --warmup -1",
        ["bench", "--servers", "127.0.0.1:1", "--warmup", "-1"],
        2,
        ("--warmup",),
    ),
    (
        "bench --fanout -1",
        ["bench", "--servers", "127.0.0.1:1", "--fanout-window", "-1"],
        2,
        ("--fanout-window",),
    ),
    ("bench --sru 0", ["bench", "--servers", "127.0.0.1:1", "--sru", "0B"], 2, ("--sru",)),
    ("bench --sru huge", ["bench", "--servers", "127.0.0.1:1", "--sru", "1e999KB"], 2, ("--sru",)),
    (
        "bench --sru and --block",
        ["bench", "--servers", "127.0.0.1:1", "--sru", "1KB", "--block", "1MB"],
        2,
        ("--block",),
    ),
    (
        "bench --block tiny",
        ["bench", "--servers", "127.0.0.1:1,127.0.0.1:2", "--block", "1B"],
        2,
        ("--block",),
    ),
    ("bench --link x", ["bench", "--servers", "127.0.0.1:1", "--link", "x"], 2, ("rate",)),
    (
        "bench --time-limit huge",
        ["bench", "--servers", "127.0.0.1:1", "--time-limit", "1e30s"],
        2,
        ("--time-limit",),
    ),
    (
        "bench --stagger huge",
        ["bench", "--servers", "127.0.0.1:1", "--stagger", "1e9s"],
        2,
        ("--stagger",),
    ),
    (
        "bench --rcvbuf huge",
        ["bench", "--servers", "127.0.0.1:1", "--rcvbuf", "1e999KB"],
        2,
        ("--rcvbuf",),
    ),
    ("bench --cc bogus", ["bench", "--servers", "127.0.0.1:1", "--cc", "bogus"], 2, ("--cc",)),
    ("bench --out bad", ["bench", "--servers", "127.0.0.1:1", "--out", "x.csv"], 2, ("--out",)),
]


#: Flag errors that must say what is wrong, not only name the flag: (name, argv, exit code,
#: words that must all be in the one line).
WORDED: list[tuple[str, list[str], int, tuple[str, ...]]] = [
    # serve's and bench's access flags: address blocks and token files
    (
        "serve --allow bogus",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "bogus"],
        2,
        ("--allow", "not an address block"),
    ),
    (
        "serve --allow /33",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "10.0.0.0/33"],
        2,
        ("--allow", "0..32"),
    ),
    (
        "serve --allow v6 /129",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "fd00::/129"],
        2,
        ("--allow", "0..128"),
    ),
    (
        "serve --allow host bits",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "10.0.0.1/8"],
        2,
        ("--allow", "did you mean 10.0.0.0/8"),
    ),
    (
        "serve --allow empty",
        ["serve", "--listen", "127.0.0.1:0", "--allow", ","],
        2,
        ("--allow", "no address block"),
    ),
    (
        "serve --allow one bad of two",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "10.0.0.0/8,10.0.0.0/x"],
        2,
        ("--allow", "prefix length"),
    ),
    (
        "serve --allow long",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "9" * 100_000],
        2,
        ("--allow", "not an address block"),
    ),
    (
        "serve --allow many",
        ["serve", "--listen", "127.0.0.1:0", "--allow", ",".join(["10.0.0.0/8"] * 5000)],
        2,
        ("--allow", "at most 4096"),
    ),
    (
        "serve --token-file missing",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "no-such-token.txt"],
        2,
        ("--token-file", "cannot read"),
    ),
    (
        "serve --token-file dir",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "{token_dir}"],
        2,
        ("--token-file", "cannot read"),
    ),
    (
        "serve --token-file short",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "{token_short}"],
        2,
        ("--token-file", "16..64"),
    ),
    (
        "serve --token-file empty",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "{token_empty}"],
        2,
        ("--token-file", "16..64"),
    ),
    (
        "serve --token-file space",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "{token_space}"],
        2,
        ("--token-file", "printable"),
    ),
    (
        "serve --token-file binary",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "{token_binary}"],
        2,
        ("--token-file", "not plain ASCII"),
    ),
    (
        "serve --token-file big",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "{token_big}"],
        2,
        ("--token-file", "larger than a token"),
    ),
    (
        "serve --token-file fifo",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "{fifo}"],
        2,
        ("--token-file", "not a regular file"),
    ),
    (
        "serve --token-file /dev/zero",
        ["serve", "--listen", "127.0.0.1:0", "--token-file", "/dev/zero"],
        2,
        ("--token-file", "not a regular file"),
    ),
    (
        "bench --token-file fifo",
        ["bench", "--servers", "127.0.0.1:1", "--token-file", "{fifo}"],
        2,
        ("--token-file", "not a regular file"),
    ),
    (
        "bench --token-file empty",
        ["bench", "--servers", "127.0.0.1:1", "--token-file", "{token_empty}"],
        2,
        ("--token-file", "16..64"),
    ),
    (
        "bench --token-file big",
        ["bench", "--servers", "127.0.0.1:1", "--token-file", "{token_big}"],
        2,
        ("--token-file", "larger than a token"),
    ),
    (
        "serve --allow octet 300",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "300.0.0.0/8"],
        2,
        ("--allow", "not an address block"),
    ),
    (
        "serve --allow v6 zone",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "fe80::1%eth0/64"],
        2,
        ("--allow", "not an address block"),
    ),
    (
        "serve --allow negative prefix",
        ["serve", "--listen", "127.0.0.1:0", "--allow", "10.0.0.0/-1"],
        2,
        ("--allow", "0..32"),
    ),
    (
        "bench --token-file short",
        ["bench", "--servers", "127.0.0.1:1", "--token-file", "{token_short}"],
        2,
        ("--token-file", "16..64"),
    ),
    (
        "bench --token-file missing",
        ["bench", "--servers", "127.0.0.1:1", "--token-file", "no-such-token.txt"],
        2,
        ("--token-file", "cannot read"),
    ),
    # an unknown flag: named, with the closest known one (underscores read as dashes)
    ("sim --rto_min", ["sim", "--rto_min", "1ms"], 2, ("--rto_min", "did you mean --rto-min?")),
    ("sim --bufer", ["sim", "--bufer", "64KB"], 2, ("--bufer", "did you mean --buffer?")),
    ("sim --rto_min=", ["sim", "--rto_min=1ms"], 2, ("--rto_min", "did you mean --rto-min?")),
    ("sim --RTT", ["sim", "--RTT", "1ms"], 2, ("--RTT", "did you mean --rtt?")),
    ("sim --zzzzz", ["sim", "--zzzzz"], 2, ("unknown flag --zzzzz",)),
    ("model --rto_min", ["model", "--rto_min", "1ms"], 2, ("incast model:", "--rto-min?")),
    ("mitigate --bufer", ["mitigate", "--bufer", "4KB"], 2, ("incast mitigate:", "--buffer?")),
    ("compare --sendrs", ["compare", "--sendrs", "4"], 2, ("incast compare:", "--senders?")),
    (
        "sweep --wokers",
        ["sweep", "{sweep_spec}", "--wokers", "2"],
        2,
        ("incast sweep:", "--wokers", "--workers?"),
    ),
    ("pcap --rto_min", ["pcap", "{afile}", "--rto_min", "1ms"], 2, ("incast pcap:", "--rto-min?")),
    ("--versoin", ["--versoin"], 2, ("--versoin", "did you mean --version?")),
    (
        "model calibrate --blcoks",
        ["model", "calibrate", "--blcoks", "3"],
        2,
        ("incast model calibrate:", "did you mean --blocks?"),
    ),
    (
        "model rto-random --rto_min",
        ["model", "rto-random", "--rto_min", "2ms"],
        2,
        ("incast model rto-random:", "did you mean --rto-min?"),
    ),
    ("validate kv --bogus", ["validate", "kv", "--bogus"], 2, ("incast validate kv:", "--bogus")),
    ("jobs swim --bogus", ["jobs", "swim", "--bogus"], 2, ("incast jobs swim:", "--bogus")),
    # a negative or malformed value: the flag, what is wrong, what is allowed
    ("sim --buffer -64KB", ["sim", "--buffer", "-64KB"], 2, ("--buffer:", "is negative", "64KiB")),
    ("sim --buffer=-64KB", ["sim", "--buffer=-64KB"], 2, ("--buffer:", "is negative")),
    ("sim --buf -3KB", ["sim", "--buf", "-3KB"], 2, ("--buffer:", "is negative")),
    ("sim --senders -3", ["sim", "--senders", "-3"], 2, ("--senders:", "is negative", "1..48")),
    ("sim --rto-min -1ms", ["sim", "--rto-min", "-1ms"], 2, ("--rto-min:", "is negative", "200ms")),
    ("sim --rtt -.5ms", ["sim", "--rtt", "-.5ms"], 2, ("--rtt:", "is negative")),
    ("sim --link abc", ["sim", "--link", "abc"], 2, ("--link:", "'abc' is malformed", "1Gbps")),
    ("sim --blocks -1", ["sim", "--blocks", "-1"], 2, ("--blocks:", "is negative", "whole")),
    ("sim --blocks 1.5", ["sim", "--blocks", "1.5"], 2, ("--blocks:", "is malformed", "whole")),
    ("sim --sru list -", ["sim", "--sru", "16KB,-2KB"], 2, ("--sru:", "'-2KB'", "is negative")),
    ("sim --delayed-ack -40ms", ["sim", "--delayed-ack", "-40ms"], 2, ("--delayed-ack:", "off")),
    ("model --buffer -64KB", ["model", "--buffer", "-64KB"], 2, ("--buffer:", "is negative")),
    ("model --senders -3", ["model", "--senders", "-3"], 2, ("--senders:", "is negative")),
    ("mitigate --rto-min -1ms", ["mitigate", "--rto-min", "-1ms"], 2, ("--rto-min:", "negative")),
    ("mitigate --link abc", ["mitigate", "--link", "abc"], 2, ("--link:", "is malformed")),
    (
        "sweep --workers -3",
        ["sweep", "{sweep_spec}", "--workers", "-3"],
        2,
        ("--workers:", "is negative", "1..1024"),
    ),
    (
        "model calibrate --blocks -2",
        ["model", "calibrate", "--blocks", "-2"],
        2,
        ("--blocks:", "is negative"),
    ),
    (
        "model rto-random --rto-min -2ms",
        ["model", "rto-random", "--rto-min", "-2ms"],
        2,
        ("--rto-min:", "is negative", "200ms"),
    ),
    (
        "model rto-random --delta x",
        ["model", "rto-random", "--delta", "x"],
        2,
        ("--delta:", "is malformed"),
    ),
    ("pcap --interval -1ms", ["pcap", "{afile}", "--interval", "-1ms"], 2, ("--interval:", "neg")),
    # a capture that is not one, named as what it is
    ("pcap directory", ["pcap", "{dir}"], 2, ("capture", "is a directory")),
    ("pcap /dev/null", ["pcap", "/dev/null"], 2, ("'/dev/null'", "is a device", "not a regular")),
    ("pcap fifo", ["pcap", "{fifo}"], 2, ("named pipe", "not a regular file")),
    ("pcap empty", ["pcap", "{empty}"], 2, ("capture", "is empty")),
    ("pcap missing", ["pcap", "{dir}/missing.pcap"], 2, ("missing.pcap", "no such file")),
]


def _fixtures(d: Path) -> dict[str, str]:
    """The files the cases name, made in ``d``."""
    f: dict[str, str] = {}

    def put(name: str, data: str | bytes) -> None:
        p = d / name
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        f[name.split(".")[0]] = str(p)

    put("utf16.toml", "seed = 1\n".encode("utf-16"))
    put("latin1.toml", b'[topology]\nlink = "1Gbps\xe9"\n')
    put("binary.toml", bytes(range(256)) * 4)
    put("deep_arrays.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n")
    put("deep_tables.toml", "".join(f"[{'.'.join(['t'] * k)}]\n" for k in range(1, 40)))
    put("deep_inline.toml", "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n")
    put("long_int.toml", "[workload]\nblocks = " + "9" * 5000 + "\n")
    put("huge_size.toml", '[workload]\nsru = "1e99999KB"\n')
    put("big.toml", "# " + "x" * (5 << 20) + "\n")
    put("syntax.toml", "[topology\nsenders = 1\n")
    put("unknown_key.toml", '[topology]\nbufer = "64KB"\n')
    put("section_value.toml", "topology = 5\n")
    put("senders_10001.toml", f"[topology]\nsenders = {list(range(1, 10_002))}\n")
    put("senders_text.toml", '[topology]\nsenders = ["a", "b"]\n')
    put("nan.toml", "[topology]\nbuffer_alpha = nan\n")
    put("inf.toml", "[tcp]\ndctcp_g = inf\n")
    put("samples.toml", '[run]\nsample_interval = "1ps"\nmax_samples = 100000000000\n')
    put("cdf_bad.txt", "10KB 0.5 extra\n")
    put("token_short.txt", "short\n")
    put("token_space.txt", "0123456789 abcdef0123\n")
    put("token_binary.txt", b"\xff\xfe" + b"\x00" * 30)
    put("token_big.txt", "t" * 100_000)
    put("token_empty.txt", "")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": [1, 2]}), d / "other_parquet.parquet")
    f["other_parquet"] = str(d / "other_parquet.parquet")
    (d / "parquet_dir").mkdir()
    pq.write_table(pa.table({"a": [1]}), d / "parquet_dir" / "x.parquet")
    f["parquet_dir"] = str(d / "parquet_dir")
    f["token_dir"] = str(d)
    link = '{{ a = "{}", b = "{}", rate = "1Gbps", delay = "25us", buffer = "64KB" }}'
    two = 'hosts = ["h1", "h2"]\n'

    def topology(switches: str, hosts: str, *links: str, extra: str = "") -> str:
        return f"{extra}switches = {switches}\n{hosts}links = [{', '.join(links)}]\n"

    ok = (link.format("h1", "s"), link.format("h2", "s"))
    put("topo_ok.toml", topology('["s"]', two, *ok))
    put("topo_island.toml", topology('["s", "t"]', two, ok[0], link.format("h2", "t")))
    put("topo_norate.toml", topology('["s"]', two, ok[0], '{ a = "h2", b = "s" }'))
    put("topo_unknown.toml", topology('["s"]', two, ok[0], link.format("h2", "s9")))
    put("topo_dup.toml", topology('["s"]', 'hosts = ["h1", "h2", "h1"]\n', *ok))
    put("topo_two_links.toml", topology('["s", "t"]', two, *ok, link.format("h1", "t")))
    put("topo_receiver.toml", topology('["s"]', two, *ok, extra='receiver = "s"\n'))
    put("topo_bad_rate.toml", topology('["s"]', two, ok[0], ok[1].replace("1Gbps", "1000")))
    put("cdf_nan.txt", "10KB nan\n20KB 1\n")
    put("cdf_long.txt", "9" * 5000 + " 1\n")
    put("afile", "x")
    put("empty.pcap", b"")
    put("trace_empty.tsv", "\n")
    put("trace_bad.tsv", "job0\t1\t1\t10\t10\t10\njob1\t2\t1\t10\tlots\t10\n")
    put("sweep_spec.toml", '[workload]\nsru = "1KB"\nblocks = 1\n[topology]\nsenders = [1, 2]\n')
    put("sweep_huge.toml", '[topology]\nsenders = "1..100000000000"\n')
    put(
        "sweep_zip.toml",
        '[sweep]\nzip = [["topology.senders", "workload.blocks"]]\n'
        '[topology]\nsenders = "1..100000000"\n[workload]\nblocks = "1..100000000"\n',
    )
    put(
        "sweep_product.toml",
        '[topology]\nsenders = "1..1000"\n[workload]\nblocks = "1..1000"\n',
    )
    put("sweep_badzip.toml", '[sweep]\nzip = [["tcp.rto_min"]]\n')
    put("sweep_seeds.toml", "[sweep]\nseeds = 0\n")
    put("sweep_backend.toml", '[sweep]\nbackend = "bogus"\n')
    put("sweep_unknown.toml", "[sweep]\nbogus = 1\n")
    put("sweep_badpoint.toml", '[workload]\nsru = ["1KB", "x"]\n')
    put("sweep_empty.toml", "[tcp]\nrto_min = []\n")
    os.mkfifo(d / "fifo.toml")
    f["fifo"] = str(d / "fifo.toml")
    (d / "dir").mkdir()
    f["dir"] = str(d / "dir")
    (d / "dir.png").mkdir()
    f["dir_png"] = str(d / "dir.png")
    # A .parquet nobody can create, root included: procfs takes no new files (root may create
    # files in /dev, so /dev/full.parquet would be written as root). Elsewhere, /dev's.
    f["full_parquet"] = "/proc/x.parquet" if os.path.isdir("/proc") else "/dev/full.parquet"
    for name, meta in (
        ("sweep_corrupt_meta", '{"name": "x", "axes": ['),
        ("sweep_deep_meta", "[" * 100_000 + "]" * 100_000),
    ):
        (d / name / "points").mkdir(parents=True)
        (d / name / "sweep.json").write_text(meta)
        f[name] = str(d / name)
    (d / "sweep_fifo_meta").mkdir()
    os.mkfifo(d / "sweep_fifo_meta" / "sweep.json")
    f["sweep_fifo_meta"] = str(d / "sweep_fifo_meta")
    f["taken"] = "127.0.0.1:{port}"
    return f


def all_cases() -> list[tuple[str, list[str], int, tuple[str, ...]]]:
    return [*_flag_cases(), *CASES]


class Runner:
    """The warm process that forks one child per case."""

    def __init__(self) -> None:
        self.p = subprocess.Popen(
            [sys.executable, str(RUNNER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.p.stdout is not None
        self.ready = json.loads(self.p.stdout.readline())

    def run(self, argv: list[str], cwd: Path) -> dict[str, Any]:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.write(json.dumps({"argv": argv, "cwd": str(cwd), "timeout": TIME_LIMIT}))
        self.p.stdin.write("\n")
        self.p.stdin.flush()
        report: dict[str, Any] = json.loads(self.p.stdout.readline())
        return report

    def close(self) -> None:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.close()
        self.p.wait(timeout=30)
        self.p.stdout.close()


@pytest.fixture(scope="module")
def runner() -> Iterator[Runner]:
    r = Runner()
    yield r
    r.close()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    import socket

    d = tmp_path_factory.mktemp("bad")
    f = _fixtures(d)
    with socket.socket() as taken:  # a port in use, for `serve --listen`
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        f["taken"] = f"127.0.0.1:{taken.getsockname()[1]}"
        yield d, f


def test_the_corpus_holds_at_least_300_bad_inputs() -> None:
    cases = all_cases()
    assert len(cases) >= 300
    assert len({name for name, *_ in cases}) == len(cases), "case names are unique"
    assert len({name for name, *_ in WORDED}) == len(WORDED), "case names are unique"


@pytest.mark.parametrize(
    ("argv", "code", "names"),
    [pytest.param(argv, code, names, id=name) for name, argv, code, names in all_cases()],
)
def test_a_bad_input_ends_in_one_line_naming_the_field(
    runner: Runner,
    files: tuple[Path, dict[str, str]],
    argv: list[str],
    code: int,
    names: tuple[str, ...],
) -> None:
    line = _one_line_of(runner, files, argv, code)
    assert any(n in line for n in names), line


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [pytest.param(argv, code, words, id=name) for name, argv, code, words in WORDED],
)
def test_a_flag_error_says_what_is_wrong(
    runner: Runner,
    files: tuple[Path, dict[str, str]],
    argv: list[str],
    code: int,
    words: tuple[str, ...],
) -> None:
    line = _one_line_of(runner, files, argv, code)
    assert all(w in line for w in words), (words, line)


def _one_line_of(
    runner: Runner, files: tuple[Path, dict[str, str]], argv: list[str], code: int
) -> str:
    """The one line on stderr of ``argv`` ({name}s filled in), which ended with ``code`` in
    bounded time and memory."""
    cwd, f = files
    fill = re.compile(r"\{(" + "|".join(map(re.escape, f)) + r")\}")
    r = runner.run([fill.sub(lambda m: f[m[1]], a) for a in argv], cwd)
    err = r["stderr"]
    assert r["signal"] is None, f"killed by signal {r['signal']} after {r['seconds']}s (a hang?)"
    assert "Traceback" not in err, err[-2000:]
    assert "panicked" not in err and "PanicException" not in err, err[-2000:]
    assert r["code"] == code, (r["code"], err[-500:])
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err[-2000:]
    assert len(lines[0]) <= 800, "a bad value is named, not echoed whole"
    assert r["seconds"] < TIME_LIMIT / 2
    assert r["rss_mb"] < MEMORY_LIMIT_MB
    return lines[0]


def _every_parser() -> Iterator[tuple[str, Any]]:
    """Every parser of `incast`: the main one, each subcommand's, theirs (``validate kv``,
    ``jobs swim``) and the nested ones with parsers of their own (``model calibrate``)."""
    import argparse

    from incastlab.cli import NESTED, build_parser, model

    todo = [build_parser()]
    while todo:
        p = todo.pop()
        yield p.prog, p
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    nested = {
        "calibrate": model.build_calibrate_parser,
        "rto-random": model.build_rto_random_parser,
    }
    assert {name for _, name in NESTED} == set(nested), "a nested command without its parser here"
    for build in nested.values():
        p = build()
        yield p.prog, p


def test_every_parser_suggests_the_flag_a_typo_meant() -> None:
    from incastlab.cli.common import Parser

    seen = 0
    for prog, p in _every_parser():
        assert isinstance(p, Parser), f"{prog} is not built with cli.common.Parser"
        for flag in (s for s in p._option_string_actions if s.startswith("--")):
            if flag in ("--help", "--version"):
                continue
            meant = f" (did you mean {flag}?)"
            assert p.suggestion("--" + flag[2:].replace("-", "_")) == meant, (prog, flag)
            assert p.suggestion(flag.upper()) == meant, (prog, flag)
            seen += 1
        assert p.suggestion("--zzzzzzzzzzzz") == "", prog
    assert seen > 100


@pytest.mark.parametrize(
    ("argv", "joined"),
    [
        (["--buffer", "-64KB"], ["--buffer=-64KB"]),
        (["--buf", "-64KB"], ["--buf=-64KB"]),
        (["--senders", "-3", "--rtt", "-.5ms"], ["--senders=-3", "--rtt=-.5ms"]),
        (["--buffer", "--rtt", "1ms"], ["--buffer", "--rtt", "1ms"]),  # a missing value stays one
        (["--no-sack", "-3"], ["--no-sack", "-3"]),  # a switch takes no value
        (["--", "--buffer", "-1KB"], ["--", "--buffer", "-1KB"]),
        (["--buffer", "-h"], ["--buffer", "-h"]),
    ],
)
def test_a_negative_value_after_a_flag_is_its_value(argv: list[str], joined: list[str]) -> None:
    from incastlab.cli import build_parser

    sim = next(p for prog, p in _every_parser() if prog == "incast sim")
    assert sim._values_joined(argv) == joined
    assert build_parser()._values_joined(["sim", *argv]) == ["sim", *argv]  # not its flags
