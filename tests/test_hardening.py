"""Limits that hold for any input (hypothesis), sweeps that heal, workers that die with
their parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incastlab.cli import main
from incastlab.files import MAX_DEPTH, InputFileError, check_depth, loads_toml
from incastlab.scenario import ScenarioError, from_dict
from incastlab.units import (
    MAX_VALUE,
    SHOWN_CHARS,
    UnitError,
    parse_int_ranges,
    parse_rate,
    parse_size,
    parse_time,
    shown,
)

# Text that looks like what people type: digits, units, ranges, and a little of everything.
_TYPED = st.lists(
    st.sampled_from([*"0123456789.,:eE+- KMGTiBbpsmunµ²٣x", "..", "e999", "KB", "ms", "Gbps"]),
    max_size=30,
).map("".join)
_ANY_TEXT = st.one_of(_TYPED, st.text(max_size=200))


@settings(max_examples=1500, deadline=None)
@given(_ANY_TEXT, st.integers(min_value=1, max_value=10_000))
def test_a_range_list_never_holds_more_than_its_cap(text: str, limit: int) -> None:
    try:
        values = parse_int_ranges(text, "--senders", limit)
    except UnitError as e:
        assert str(e).startswith("--senders")
        return
    assert 1 <= len(values) <= limit
    assert values == sorted(set(values)) and all(0 <= v < 10**18 for v in values)


@settings(max_examples=1500, deadline=None)
@given(_ANY_TEXT)
def test_a_unit_value_is_in_range_or_refused_by_a_unit_error(text: str) -> None:
    for parse in (parse_size, parse_rate, parse_time):
        try:
            v = parse(text)
        except UnitError as e:
            assert len(str(e)) < 400, "the message names the value, cut short"
            continue
        assert 0 <= v <= MAX_VALUE


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=5000))
def test_a_value_is_shown_cut_short(text: str) -> None:
    assert len(shown(text)) <= SHOWN_CHARS + 30


_JSONISH: Any = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _TYPED,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3)
    ),
    max_leaves=12,
)
_KEYS = st.sampled_from(
    [
        "topology.senders",
        "topology.buffer",
        "topology.link",
        "topology.buffer_alpha",
        "tcp.rto_min",
        "tcp.congestion_control",
        "tcp.dupthresh",
        "workload.sru",
        "workload.blocks",
        "workload.query_size_cdf",
        "run.max_samples",
        "run.sample_interval",
        "seed",
        "bogus.key",
    ]
)


@settings(max_examples=800, deadline=None)
@given(st.dictionaries(_KEYS, _JSONISH, max_size=4))
def test_any_scenario_is_normalized_or_refused_naming_a_field(values: dict[str, Any]) -> None:
    from incastlab.scenario import apply_overrides

    try:
        data = apply_overrides({}, values)
    except ScenarioError:
        return
    try:
        sc = from_dict(data)
    except ScenarioError as e:
        field = getattr(e, "field", "scenario")
        assert field == "scenario" or field.split(".")[0] in str(e), (field, str(e))
        assert len(str(e)) < 1000
        return
    assert 1 <= sc.senders <= 100_000


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=3000))
def test_nesting_is_refused_past_the_limit_at_any_depth(depth: int) -> None:
    text = "v = " + "[" * depth + "]" * depth
    try:
        data = loads_toml(text, "t")
    except InputFileError as e:
        assert depth > MAX_DEPTH and "nested" in str(e)
        return
    check_depth(data, "t")
    assert depth <= MAX_DEPTH


# --- sweeps that heal ----------------------------------------------------------------------

SPEC = """
[sweep]
name = "heal"
[topology]
senders = [1, 2, 4]
[workload]
sru = "4KB"
blocks = 2
"""


def _sweep(spec: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "1", "--json"]) == 0
    outcome: dict[str, Any] = json.loads(capsys.readouterr().out)
    return outcome


def test_a_damaged_point_is_skipped_by_readers_and_recomputed_by_a_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "heal.toml"
    spec.write_text(SPEC)
    out = tmp_path / "s"
    first = _sweep(spec, out, capsys)
    assert (first["ran"], first["already_done"]) == (3, 0)
    points = sorted((out / "points").glob("*.parquet"))
    truncated, emptied = points[0], points[1]
    truncated.write_bytes(truncated.read_bytes()[:100])
    emptied.write_bytes(b"")
    stale = out / "points" / f".x.parquet.{2**22 + 12345}.tmp"
    stale.write_bytes(b"half")
    old_live = out / "points" / f".y.parquet.{os.getpid()}.tmp"
    old_live.write_bytes(b"half")
    os.utime(old_live, (time.time() - 3600, time.time() - 3600))

    assert main(["results", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 1, "only the whole point is read"
    assert truncated.name in captured.err and emptied.name in captured.err
    assert main(["plot", str(out), "--out", str(tmp_path / "g.png")]) == 0
    assert truncated.name in capsys.readouterr().err
    assert main(["report", str(out)]) == 0
    assert emptied.name in capsys.readouterr().err
    assert emptied.name in (out / "report.html").read_text()

    healed = _sweep(spec, out, capsys)
    assert (healed["ran"], healed["already_done"]) == (2, 1)
    assert sorted(Path(p).name for p in healed["repaired"]) == sorted(
        [truncated.name, emptied.name]
    )
    assert not stale.exists() and not old_live.exists(), "stale temporaries are removed"
    assert main(["results", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 3 and "warning" not in captured.err
    again = _sweep(spec, out, capsys)
    assert (again["ran"], again["already_done"], again["repaired"]) == (0, 3, [])
    # A figure these points cannot fill is refused rather than drawn empty.
    fig = tmp_path / "fct.png"
    assert main(["plot", str(out), "--kind", "fct-overhead", "--out", str(fig)]) == 2
    assert "incast workload" in capsys.readouterr().err and not fig.exists()


def test_a_damaged_sweep_json_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "points").mkdir()
    (tmp_path / "sweep.json").write_text('{"axes": [')
    assert main(["results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "sweep.json" in err and "not valid JSON" in err and "Traceback" not in err


def test_a_sweep_worker_dies_with_its_parent(tmp_path: Path) -> None:
    """A worker armed by die_with_parent ends when its parent is SIGKILLed."""
    parent = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'from incastlab.sweep.run import die_with_parent; die_with_parent(); "
        'import time; print("armed", flush=True); time.sleep(120)\'], stdout=subprocess.PIPE)\n'
        "assert child.stdout.readline().strip() == b'armed'\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    child = int(p.stdout.readline())
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=10)
    p.stdout.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child), "the worker outlived its parent"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")
