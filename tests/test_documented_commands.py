"""Every `incast` command the documentation shows runs: the README's and the docs pages' shell
blocks, every ``--help`` epilog and the examples' comments (tests/doc_commands.py finds them).
A documented command that fails, or names a flag or a file that no longer exists, fails here,
named by where it is written (``docs/sweeps.md:12``, ``incast plot --help:3``).

Each runs in process (``incastlab.cli.main``), in one scratch directory of this module where
``examples/`` and the recorded validation runs are at hand and the outputs land, under the
suite's own HOME. What a command reads that another documented command makes (a sweep's
directory, a pcap) is made first by that command; what no documented command makes is a
stand-in (``STAND_INS``). Sizes are smaller only where a flag allows it and the command's point
survives (``SMALLER``). Commands written with ``sudo`` run where the suite's emulation tests
do (root, iproute2) and are parsed only elsewhere. The commands not run as written, and why,
are the one list ``NOT_RUN``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from doc_commands import ROOT, Command, documented_commands, stray_lines

from conftest import _emulation_unavailable
from incastlab.cli import NESTED, build_parser, main

COMMANDS = documented_commands()

#: Set to 1 to run the commands that take minutes too (NOT_RUN's "slow" ones).
SLOW_ENV = "INCAST_SLOW_DOCS"
SLOW = os.environ.get(SLOW_ENV) == "1"
#: Why this machine cannot run real Linux TCP ("" if it can), as for the emulation tests.
NO_EMULATION = _emulation_unavailable()

#: The one list of documented commands that are not run as written, by their text (as written,
#: comment dropped): "parse" ones are read by the CLI's parser only, "slow" ones run with
#: INCAST_SLOW_DOCS=1 and are parsed otherwise. A text no page, help or example shows any more
#: fails test_the_list_of_commands_not_run_names_documented_ones, so the list cannot rot.
NOT_RUN: dict[str, tuple[str, str]] = {
    "incast reproduce --all": ("slow", "twenty experiments, tens of minutes on two cores"),
    "incast reproduce --all --out reproductions": ("slow", "about 22 min on two cores"),
    "incast reproduce riak-utilization": ("slow", "about 5.5 min on two cores"),
    "incast reproduce hadoop-jobs": ("slow", "about 8 min on two cores"),
    "incast model calibrate --variants iw1-restart,dctcp --save": (
        "parse",
        "--save rewrites the constants shipped in the package",
    ),
    "incast model calibrate --random 300 --designs 9 --correct 70 --fresh 32072..32081 --cache "
    "~/.cache/incastlab/design --save": (
        "parse",
        "--save rewrites the constants and the correction shipped in the package",
    ),
    "incast model calibrate --random 300 --designs 9 --correct 70 --fresh 32072..32081 --cache "
    "DIR --save": (
        "parse",
        "--save rewrites the constants and the correction shipped in the package",
    ),
    "incast model calibrate --random 300 --cache ~/.cache/incastlab/design": (
        "slow",
        "1800 simulations, about 4 min on two cores",
    ),
    "incast model calibrate --random 300 --designs 9 --correct 70 --fresh 32072..32081 --cache "
    "~/.cache/incastlab/design": (
        "slow",
        "81 designs, 72,900 simulations and the trees' fit: hours on two cores",
    ),
    "incast sweep examples/sweep-rto.toml --dask tcp://scheduler:8786": (
        "parse",
        "needs a Dask scheduler at that address",
    ),
    "sudo incast sweep examples/sweep-rto.toml --backend emulate": (
        "slow",
        "108 points on real Linux TCP, one at a time",
    ),
    "sudo incast emulate --senders 256 --link 100Mbps --blocks 5": (
        "slow",
        "256 network namespaces",
    ),
    "sudo incast validate": ("slow", "the validation grid on real Linux TCP: hours"),
    "sudo incast validate --real-only": ("slow", "the validation grid on real Linux TCP: hours"),
    "sudo incast validate --real-dir docs/validation/real --out docs/validation --profiles "
    "classic,linux": ("slow", "the validation grid on real Linux TCP: hours"),
    "sudo incast validate kv --seeds 1,2": ("slow", "a key-value store on real Linux TCP"),
    "sudo incast validate kv --out docs/validation/kv --seeds 1,2": (
        "slow",
        "a key-value store on real Linux TCP",
    ),
    "incast validate shuffle --skip-real": (
        "slow",
        "re-simulates every stored shuffle run: about 2.5 min on two cores",
    ),
    "sudo incast validate shuffle --out docs/validation/shuffle": (
        "slow",
        "a MapReduce shuffle on real Linux TCP",
    ),
}

#: Smaller sizes where a flag allows and the command's point survives: command -> flag -> value,
#: applied to every documented command of that name that writes the flag.
SMALLER: dict[str, dict[str, str]] = {
    "emulate": {"--blocks": "2"},  # real TCP: each block takes wall-clock time
    "compare": {"--senders": "1,4,16", "--blocks": "2"},
    "bench": {"--blocks": "2", "--warmup": "1"},
    "monitor": {"--duration": "1s"},
    "doctor": {"--rto-min-candidates": "200ms", "--seeds": "1"},  # the fit: one RTOmin
    "model calibrate": {"--random": "12"},  # twelve points a design
}
#: Flags added where the command does not write them: calibrate's and the validation's small
#: grids (`validate --skip-real` re-simulates the whole stored grid, minutes on two cores), an
#: end to a monitor that would run until Ctrl-C, and the doctor's fit down to one RTOmin.
ADDED: dict[str, list[str]] = {
    "model calibrate": ["--quick"],
    "validate": ["--quick"],
    "monitor": ["--duration", "1s"],
    "doctor": ["--rto-min-candidates", "200ms", "--seeds", "1"],  # 14 RTOmins x 3 seeds: minutes
}
#: Another machine's names in the documentation, and this one's: the interface a monitor
#: watches, the servers `bench` reads from (the local `incast serve` of the fixture below).
ELSEWHERE = {"eth0": "lo"}

#: Files the commands read that no documented command makes: how the scratch directory gets
#: them (see _stand_in).
STAND_INS = {
    "capture.pcap": "a pcap of the simulator (16 senders: the receiver is 10.0.0.17)",
    "capture.pcapng": "the same frames as pcapng",
    "FB-2009_samples_24_times_1hr_0.tsv": "the generated swim-small.tsv (the day is not shipped)",
    "servers.txt": "the address of an `incast serve` on loopback",
    "token.txt": "a shared token for `serve --token-file` and `bench --token-file`",
}

#: Files a documented command makes that others read: the command that makes each.
MADE_BY = {
    "sweeps/rto-vs-senders": "incast sweep examples/sweep-rto.toml",
    "run.pcap": "incast sim --senders 16 --sru 256KB --blocks 20 --pcap run.pcap",
    "day.tsv": "incast jobs swim --jobs 500 --seed 7 --out day.tsv",
    "eth0.parquet": "incast monitor --iface eth0 --duration 60s --record eth0.parquet",
}

#: Flags whose value is a file or directory the command writes (checked to exist after).
WRITES = ("--out", "--plot", "--csv", "--pcap", "--timeseries")


def _how(c: Command) -> tuple[str, str]:
    """How this command runs here: ("run", ""), or ("parse", why)."""
    if c.text in NOT_RUN:
        how, why = NOT_RUN[c.text]
        if how == "parse" or not SLOW:
            return "parse", f"{why}; runs with {SLOW_ENV}=1" if how == "slow" else why
    if (c.sudo or "--netns" in c.argv) and NO_EMULATION:
        return "parse", f"network namespaces, as root (as the emulation tests): {NO_EMULATION}"
    if (
        "--cc" in c.argv
        and c.command == "serve"
        and not _cc_allowed(c.argv[c.argv.index("--cc") + 1])
    ):
        return "parse", "its congestion control is outside the kernel's allowed list for this user"
    return "run", ""


def _cc_allowed(cc: str) -> bool:
    """Whether this user may set congestion control ``cc`` on a socket (root may set any
    loaded one; others only those in net.ipv4.tcp_allowed_congestion_control)."""
    if os.geteuid() == 0:
        return True
    try:
        with open("/proc/sys/net/ipv4/tcp_allowed_congestion_control") as f:
            return cc in f.read().split()
    except OSError:
        return False


def _argv(c: Command, servers: str) -> list[str]:
    """The command's arguments as run here: smaller, with this machine's names."""
    argv = [os.path.expanduser(a) if a.startswith("~") else ELSEWHERE.get(a, a) for a in c.argv]
    for flag, value in SMALLER.get(c.command, {}).items():
        if flag in argv:
            argv[argv.index(flag) + 1] = value
    if c.command in ("serve", "bench"):
        argv = [servers if ":9000" in a else a for a in argv]
    added = ADDED.get(c.command, [])
    if "--random" in argv:
        added = []  # calibrate's random designs: their own (and --quick is refused with them)
    if c.command == "doctor" and not any(a.endswith((".pcap", ".pcapng")) for a in argv):
        added = []  # a recording alone: no fit to shrink (the fit's flags are refused there)
    return argv if added[:1] and added[0] in argv else argv + added


def _parse(c: Command) -> None:
    """Read the command with the CLI's parser (a usage error fails the test)."""
    args = list(c.argv)
    if tuple(args[:2]) in NESTED:
        from incastlab.cli import model as model_cli

        build = {
            "calibrate": model_cli.build_calibrate_parser,
            "rto-random": model_cli.build_rto_random_parser,
        }
        parser, args = build[args[1]](), args[2:]
    else:
        parser = build_parser()
    try:
        parser.parse_args(args)
    except SystemExit as e:
        raise AssertionError(f"{c.where}: `{c.text}` does not parse") from e


# --- the scratch directory ------------------------------------------------------------------


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where every command runs: the clone's examples and benchmarks' scenarios, the recorded
    validation runs (read only: linked), and the directories the documented outputs go into."""
    d = tmp_path_factory.mktemp("documented")
    (d / "examples").symlink_to(ROOT / "examples")
    (d / "benchmarks").symlink_to(ROOT / "benchmarks")
    for sub in ("", "kv", "shuffle"):
        (d / "docs" / "validation" / sub).mkdir(parents=True, exist_ok=True)
        real = ROOT / "docs" / "validation" / sub / "real"
        if SLOW:  # the slow ones add kernel runs: to a copy, never to the clone's
            shutil.copytree(real, d / "docs" / "validation" / sub / "real")
        else:
            (d / "docs" / "validation" / sub / "real").symlink_to(real)
    (d / "python" / "incastlab" / "jobs").mkdir(parents=True)
    return d


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """An `incast serve` on loopback: the servers of the documented `bench` commands."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "incastlab.cli", "serve", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("listening on "), line
    yield line.split()[-1]
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)


def _stand_in(name: str, d: Path, server: str) -> None:
    path = d / name
    if name == "capture.pcap":
        argv = ["sim", "--senders", "16", "--sru", "64KB", "--blocks", "4", "--pcap", str(path)]
        assert main([*argv, "--quiet"]) == 0
    elif name == "capture.pcapng":
        from test_pcap import _to_pcapng

        _stand_in("capture.pcap", d, server)
        path.write_bytes(_to_pcapng((d / "capture.pcap").read_bytes()))
    elif name == "FB-2009_samples_24_times_1hr_0.tsv":
        shutil.copy(ROOT / "python" / "incastlab" / "jobs" / "swim-small.tsv", path)
    elif name == "servers.txt":
        path.write_text(f"{server}\n{server}\n")
    elif name == "token.txt":
        path.write_text("documented-token-0123456789\n")


def _prepare(c: Command, argv: list[str], d: Path, server: str) -> None:
    """Make what the command reads and no earlier command has made."""
    for a in argv:
        if (d / a).exists() or a.startswith("-"):
            continue
        if a in STAND_INS:
            _stand_in(a, d, server)
        elif a in MADE_BY:
            assert main(MADE_BY[a].split()[1:]) == 0, f"making {a} for {c.where}"


#: The arguments of the commands that ran and passed: the same command written in two places
#: (the README's and a page's riak example) runs once.
_PASSED: set[tuple[str, ...]] = set()


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _serve(argv: list[str]) -> tuple[int, str, str]:
    """`incast serve` runs until stopped: it must come up listening, and stop cleanly."""
    argv = [a if ":" not in a else "127.0.0.1:0" for a in argv]
    proc = subprocess.Popen(
        [sys.executable, "-m", "incastlab.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=10)
    return (proc.returncode if first.startswith("listening on ") else 1), first + out, err


@contextmanager
def _netns(c: Command) -> Iterator[None]:
    """The namespace and interface `monitor --netns` documents, made for the command (root)."""
    if "--netns" not in c.argv:
        yield
        return
    ns, iface = c.argv[c.argv.index("--netns") + 1], c.argv[c.argv.index("--iface") + 1]
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        peer = ["peer", "name", f"{iface[:10]}-p"]
        subprocess.run(["ip", "-n", ns, "link", "add", iface, "type", "veth", *peer], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", iface, "up"], check=True)
        yield
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


# --- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("c", [pytest.param(c, id=c.where) for c in COMMANDS])
def test_a_documented_command_runs(
    c: Command,
    scratch: Path,
    server: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _parse(c)
    how, why = _how(c)
    if how == "parse":
        pytest.skip(f"documented command parsed, not run: {why}")
    # `--save` rewrites what the package ships (the model's constants): never run here, even
    # when NOT_RUN has drifted from the documentation (its own test says which entry).
    assert "--save" not in c.argv, f"{c.where}: `{c.text}` would rewrite the package; NOT_RUN"
    monkeypatch.chdir(scratch)
    argv = _argv(c, server)
    if tuple(argv) in _PASSED and not c.stdout:
        return  # written elsewhere too, and passed there
    _prepare(c, argv, scratch, server)
    with _netns(c):
        code, out, err = _serve(argv) if c.command == "serve" else _run(argv, capsys)
    assert code == 0, f"{c.where}: `{c.text}` exited {code}:\n{err[-2000:]}"
    if c.stdout:
        (scratch / c.stdout).parent.mkdir(parents=True, exist_ok=True)
        (scratch / c.stdout).write_text(out)
    if "--json" in argv and c.command != "monitor":  # monitor's is JSON lines
        data = json.loads(out)  # what scripts read
        if c.pipe[:1] == ("jq",) and c.pipe[1].startswith("."):
            assert c.pipe[1][1:] in data, f"{c.where}: no {c.pipe[1]} for jq in the JSON"
    for flag in WRITES:
        if flag in argv and argv[argv.index(flag) + 1] != "-":
            target = scratch / argv[argv.index(flag) + 1]
            assert target.exists(), f"{c.where}: {flag} {target.name} was not written"
    if c.command == "reproduce":
        _the_shipped_verdicts_are_this_run(argv, scratch)
    _PASSED.add(tuple(argv))


#: How long the run took, which a verdict states (and its shipped copy, if at all, for the run
#: that wrote it): not a figure of the experiment.
_TIMING = re.compile(r" \([0-9.]+ s on this machine\)|(?<=wall time )[0-9.]+ s")


def _the_shipped_verdicts_are_this_run(argv: list[str], scratch: Path) -> None:
    """What `incast reproduce NAME` wrote is the verdict the package ships (its Experiments page
    and the figures docs/reproduce.md includes): a figure that no longer matches a run fails."""
    from incastlab.reproductions.reproduce import experiments

    if "--trace" in argv:
        return  # another trace: another verdict
    out = scratch / (argv[argv.index("--out") + 1] if "--out" in argv else "reproductions")
    exps = experiments()
    names = list(exps) if "--all" in argv else [a for a in argv if a in exps]
    for name in names:
        fresh = _TIMING.sub("", (out / name / "verdict.md").read_text(encoding="utf-8"))
        shipped = _TIMING.sub(
            "", (exps[name].path / "expected" / "verdict.md").read_text(encoding="utf-8")
        )
        assert fresh == shipped, (
            f"{name}: a run no longer gives the shipped verdict; if the change is meant, "
            f"`incast reproduce {name} --update-expected` and `python scripts/docs_figures.py`"
        )


def test_the_documentation_shows_commands_from_every_source() -> None:
    wheres = [c.where for c in COMMANDS]
    assert sum(w.startswith("README.md") for w in wheres) >= 6
    assert sum(w.startswith("docs/") for w in wheres) >= 40
    assert sum("--help" in w for w in wheres) >= 60
    assert sum(w.startswith("examples/") for w in wheres) >= 10


def test_every_incast_line_of_a_page_is_in_a_shell_block() -> None:
    # A command in an indented block or in prose outside a fence would not be extracted.
    assert stray_lines() == []


def test_the_list_of_commands_not_run_names_documented_ones() -> None:
    shown = {c.text for c in COMMANDS}
    gone = sorted(set(NOT_RUN) - shown)
    assert gone == [], f"NOT_RUN lists commands no documentation shows any more: {gone}"
    made = set(MADE_BY.values())
    assert made <= shown, f"MADE_BY runs commands the documentation no longer shows: {made - shown}"


def test_the_regenerated_small_trace_is_the_shipped_one(scratch: Path) -> None:
    # `incast jobs swim --out python/incastlab/jobs/swim-small.tsv` (its --help) regenerates
    # the shipped trace: the same bytes, or the shipped one is stale.
    out = scratch / "swim-small-check.tsv"
    assert main(["jobs", "swim", "--out", str(out)]) == 0
    shipped = ROOT / "python" / "incastlab" / "jobs" / "swim-small.tsv"
    assert out.read_bytes() == shipped.read_bytes()


#: The experiments that take minutes (riak-utilization ~5.5, hadoop-jobs ~8, NDP ~8 on two
#: cores): their shipped verdicts are checked with INCAST_SLOW_DOCS=1 only.
SLOW_EXPERIMENTS = {"riak-utilization", "hadoop-jobs", "ndp-incast-scaling"}


def test_a_run_gives_each_experiments_shipped_verdict(tmp_path: Path) -> None:
    # The figures docs/generated/ holds come from the shipped verdicts; each experiment rerun
    # here must write its shipped verdict, so a figure that no longer matches a run fails.
    from incastlab.reproductions.reproduce import experiments

    names = [n for n in experiments() if SLOW or n not in SLOW_EXPERIMENTS]
    assert len(names) >= 10
    assert main(["reproduce", *names, "--out", str(tmp_path)]) == 0
    _the_shipped_verdicts_are_this_run(["--out", ".", *names], tmp_path)


def _docs_figures() -> Any:
    spec = importlib.util.spec_from_file_location(
        "docs_figures", ROOT / "scripts" / "docs_figures.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_figures_are_what_the_shipped_verdicts_say(tmp_path: Path) -> None:
    # The pages include docs/generated/ (pymdownx.snippets); the files are regenerated here and
    # must be the committed ones, so an updated verdict cannot leave a stale figure in a page.
    figures = _docs_figures()
    written = figures.write(tmp_path)
    assert written
    for path in written:
        committed = ROOT / "docs" / "generated" / path.name
        assert committed.is_file() and committed.read_text() == path.read_text(), (
            f"docs/generated/{path.name} is stale: python scripts/docs_figures.py"
        )
    # Every generated file is included by a page, and every include names a generated file.
    pages = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    included = set(re.findall(r'^--8<-- "generated/([^"]+)"$', pages, re.M))
    assert included == set(figures.FILES)


def test_the_readme_quotes_no_measured_figure() -> None:
    # GitHub does not expand the site's includes, so the README quotes no result of a run (a
    # rate, a share of the link, a factor): those are in the docs, generated. Settings in its
    # prose (200 ms, 8192 hosts) are not results.
    text = re.sub(r"```.*?```", "", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    figures = re.findall(r"\b\d[\d.,]*\s?(?:[MGk]bps|%|×)", text)
    assert figures == [], f"the README quotes figures of a run: {figures}"
