"""Sweeps: specs, the process pool and Dask, the store, resuming, failures, `incast results`."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import incastlab
from incastlab.cli import main
from incastlab.sweep.run import run_points
from incastlab.sweep.spec import load_spec, parse_spec
from incastlab.sweep.store import SweepStore

SPEC = """
[sweep]
name = "small"
seeds = 2
[topology]
senders = "1..3,8"
[tcp]
rto_min = ["200ms", "1ms"]
[workload]
sru = "64KB"
blocks = 3
"""


def test_a_spec_expands_lists_ranges_zips_and_seeds() -> None:
    spec = parse_spec(
        {
            "sweep": {"seeds": 3, "zip": [["topology.buffer", "tcp.rto_min"]]},
            "topology": {"senders": "1..4:2,16", "buffer": ["32KB", "64KB"]},
            "tcp": {"rto_min": ["10ms", "1ms"]},
        }
    )
    pts = spec.points()
    assert len(pts) == 3 * 2 * 3  # senders 1, 3, 16; two zipped pairs; three seeds
    pairs = {(p.params["topology.buffer"], p.params["tcp.rto_min"]) for p in pts}
    assert pairs == {("32KB", "10ms"), ("64KB", "1ms")}
    assert {p.scenario.seed for p in pts} == {1, 2, 3}
    assert len({p.key for p in pts}) == len(pts)
    # An empirical CDF is a value, not an axis.
    cdf = parse_spec({"workload": {"kind": "queries", "query_size_cdf": [[100, 0.5], [200, 1]]}})
    assert len(cdf.points()) == 1
    two = [[[100, 0.5], [200, 1]], [[100, 1]]]
    assert len(parse_spec({"workload": {"kind": "queries", "query_size_cdf": two}}).points()) == 2
    # So is a list of pauses; a list of lists of them is an axis.
    (one,) = parse_spec({"workload": {"think_times": ["100us", "1ms"]}}).points()
    assert one.scenario.workload.think_times == [100_000_000, 1_000_000_000]
    axis = parse_spec({"workload": {"think_times": [["100us"], ["1ms", "2ms"]]}}).points()
    assert [p.scenario.workload.think_times for p in axis] == [[100_000_000], [10**9, 2 * 10**9]]


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"sweep": {"seedz": 2}}, "unknown key 'sweep.seedz'"),
        ({"sweep": {"seeds": 0}}, "sweep.seeds: a number of seeds 1..1000"),
        ({"sweep": {"backend": "ns3"}}, "sweep.backend: one of sim, model, chen, emulate"),
        ({"topology": {"senders": "8..1"}}, "topology.senders: empty range '8..1'"),
        (
            {
                "sweep": {"zip": [["topology.buffer", "tcp.rto_min"]]},
                "topology": {"buffer": ["32KB", "64KB"]},
                "tcp": {"rto_min": ["1ms"]},
            },
            r"sweep.zip: zipped keys need as many values each",
        ),
        ({"sweep": {"zip": [["tcp.rto_min"]]}}, "sweep.zip: 'tcp.rto_min' is not a list"),
        ({"topology": {"bufer": ["32KB"]}}, "did you mean 'topology.buffer'"),
        (
            {"topology": {"buffer": ["64KB", "1KB"]}},
            "sweep point topology.buffer=1KB: topology.buffer: 1000 bytes is smaller",
        ),
        ({"seed": [1, 2]}, "seed: give sweep.seeds = N"),
    ],
)
def test_malformed_specs_get_one_clear_error(spec: dict[str, object], needle: str) -> None:
    with pytest.raises(incastlab.ScenarioError, match=needle):
        parse_spec(spec).points()


def test_a_bad_sweep_point_keeps_the_field() -> None:
    with pytest.raises(incastlab.ScenarioError) as e:
        parse_spec({"topology": {"buffer": ["64KB", "1KB"]}}).points()
    assert e.value.field == "topology.buffer"


def _write_spec(tmp_path: Path, text: str = SPEC) -> Path:
    p = tmp_path / "spec.toml"
    p.write_text(text)
    return p


def test_sweep_stores_every_point_once_and_a_rerun_repeats_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _write_spec(tmp_path)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "2", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert (first["points"], first["ran"], first["already_done"]) == (16, 16, 0)
    store = SweepStore(out)
    rows = store.rows()
    assert len(rows) == 16 and len({r["key"] for r in rows}) == 16
    direct = incastlab.simulate(
        {
            "seed": 2,
            "topology": {"senders": 8},
            "tcp": {"rto_min": "1ms"},
            "workload": {"sru": "64KB", "blocks": 3},
        }
    )
    stored = next(
        r for r in rows if r["params"] == {"topology.senders": 8, "tcp.rto_min": "1ms", "seed": 2}
    )
    assert stored["report"] == direct.report  # the same bytes as a direct run
    assert stored["version"] == incastlab.__version__ and stored["scenario"] == direct.scenario
    assert main(["sweep", str(spec), "--out", str(out), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["ran"], again["already_done"]) == (0, 16)
    # Export and filter.
    csv_path = tmp_path / "r.csv"
    argv = ["results", str(out), "--where", "tcp.rto_min_s=1ms", "--csv", str(csv_path)]
    assert main([*argv, "--per-seed"]) == 0
    lines = csv_path.read_text().splitlines()
    assert len(lines) == 1 + 8 and "goodput_bps" in lines[0] and "tcp.rto_min_s" in lines[0]
    # Two seeds: by default one row per sender count, mean and interval over the seeds.
    assert main(argv) == 0
    lines = csv_path.read_text().splitlines()
    assert len(lines) == 1 + 4 and "goodput_bps_mean" in lines[0] and "n" in lines[0]
    assert main(["results", str(out), "--where", "nope=1"]) == 2


def test_a_failing_point_is_recorded_and_the_others_finish(tmp_path: Path) -> None:
    spec = parse_spec(
        {
            "topology": {"senders": [2, 4]},
            "workload": {"sru": "64KB", "blocks": 2},
            "run": {"max_events": [40, 2_000_000_000]},
        }
    )
    store = SweepStore(tmp_path)
    store.create({"name": "f", "axes": spec.axis_keys})
    res = run_points(spec.points(), store, workers=2)
    assert res.ran == 2 and len(res.failed) == 2
    failures = store.failures()
    assert {f["params"]["run.max_events"] for f in failures} == {40}
    assert all("run.max_events = 40" in f["error"] for f in failures)
    assert len(store.rows()) == 2


def test_a_local_dask_cluster_gives_the_process_pools_results(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    spec = parse_spec(
        {"topology": {"senders": [1, 4, 16]}, "workload": {"sru": "64KB", "blocks": 3}}
    )
    pool, dask = SweepStore(tmp_path / "pool"), SweepStore(tmp_path / "dask")
    for s in (pool, dask):
        s.create({"name": "d", "axes": spec.axis_keys})
    assert run_points(spec.points(), pool, workers=2).ran == 3
    assert run_points(spec.points(), dask, workers=2, dask="local").ran == 3

    def strip(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        return sorted(
            ({k: v for k, v in r.items() if k != "wall_s"} for r in rows),
            key=lambda r: str(r["key"]),
        )

    assert strip(pool.rows()) == strip(dask.rows())


def test_a_killed_sweep_resumes_without_losing_or_repeating_points(tmp_path: Path) -> None:
    """SIGKILL the whole sweep (parent and workers) after a few points are stored; the rerun
    runs exactly the rest, and every point ends up stored once."""
    spec = _write_spec(
        tmp_path,
        """
[topology]
senders = "24..43"
[tcp]
rto_min = "1ms"
[workload]
sru = "256KB"
blocks = 10
""",
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "incastlab.cli", "sweep", str(spec), "--out", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--workers", "1", "-q"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    points = out / "points"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if points.exists() and len(list(points.glob("*.parquet"))) >= 3:
            break
        if proc.poll() is not None:
            pytest.fail("the sweep ended before it could be killed")
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {p.name: p.stat().st_mtime_ns for p in points.glob("*.parquet")}
    assert 3 <= len(before) < 20, len(before)
    res = subprocess.run([*cmd, "--json"], capture_output=True, text=True, check=True)
    summary = json.loads(res.stdout)
    assert summary["already_done"] == len(before)
    assert summary["ran"] == 20 - len(before) and summary["failed"] == 0
    after = {p.name: p.stat().st_mtime_ns for p in points.glob("*.parquet")}
    assert len(after) == 20
    assert all(after[name] == t for name, t in before.items()), "a stored point was redone"
    assert not list(points.glob(".*.tmp")), "no half-written files"
    rows = SweepStore(out).rows()
    assert sorted(r["params"]["topology.senders"] for r in rows) == list(range(24, 44))


def _small_sweep(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    assert main(["sweep", str(_write_spec(tmp_path)), "--out", str(out), "-q"]) == 0
    return out


def test_plots_of_a_sweep_in_every_format(tmp_path: Path) -> None:
    out = _small_sweep(tmp_path)
    magic = {".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml"}
    for ext, head in magic.items():
        fig = tmp_path / f"g{ext}"
        argv = ["plot", str(out), "--hue", "tcp.rto_min", "--model", "--out", str(fig)]
        assert main(argv) == 0
        assert fig.read_bytes().startswith(head)
    for kind in ("block-cdf", "timeouts"):
        fig = tmp_path / f"{kind}.png"
        assert (
            main(["plot", str(out), "--kind", kind, "--hue", "tcp.rto_min", "--out", str(fig)]) == 0
        )
        assert fig.stat().st_size > 10_000
    assert main(["plot", str(out), "--x", "tcp.mss", "--out", str(tmp_path / "x.png")]) == 2
    assert main(["plot", str(out), "--out", str(tmp_path / "x.gif")]) == 2


def test_the_report_is_one_html_file_with_figures_and_every_point(tmp_path: Path) -> None:
    out = _small_sweep(tmp_path)
    assert main(["report", str(out)]) == 0
    text = (out / "report.html").read_text()
    assert text.count("<img") >= 2 and "data:image/png;base64," in text
    assert text.count("<tr>") == 1 + 16
    assert incastlab.__version__ in text


def test_every_experiment_parses_and_has_a_check_and_a_reference() -> None:
    from incastlab.reproductions.reproduce import CHECKS, RUNNERS, experiments

    exps = experiments()
    assert len(exps) >= 9
    for name, e in exps.items():
        assert e.meta["check"] in (RUNNERS if e.meta.get("runner") == "jobs" else CHECKS), name
        for spec in e.sweeps:
            assert load_spec(spec).points(), spec
        expected = e.path / "expected"
        verdict = (expected / "verdict.md").read_text()
        head = re.findall(r"\*\*Verdict: (agrees|shape only|disagrees)\*\*", verdict)
        assert len(head) == 1, name
        # An experiment that does not agree with its paper says why in its experiment.toml.
        assert head[0] == "agrees" or e.meta.get("differs"), name
        assert list(expected.glob("*.png")), name


def test_reproduce_runs_experiments_and_judges_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["reproduce", "chen-table1", "chen-fig3", "--out", str(tmp_path), "--json"]
    assert main(argv) == 0
    verdicts = json.loads(capsys.readouterr().out)
    assert [v["name"] for v in verdicts] == ["chen-table1", "chen-fig3"]
    grades = {v["name"]: v["grade"] for v in verdicts}
    # Figure 3: collapse at N = 2 agrees; its goodput there is 1.5x Eq. 2's (about half the
    # blocks recover without a timeout, as in ns-3), outside the claim's 30%.
    assert grades == {"chen-table1": "agrees", "chen-fig3": "shape only"}, verdicts
    fig3 = next(v for v in verdicts if v["name"] == "chen-fig3")
    collapse = [c for c in fig3["claims"] if "collapse begins" in c["text"]]
    assert len(collapse) == 2 and all(c["grade"] == "agrees" for c in collapse), collapse
    assert all(c["tolerance"] for v in verdicts for c in v["claims"])
    assert (tmp_path / "chen-fig3" / "figure3.png").stat().st_size > 10_000
    md = (tmp_path / "chen-table1" / "verdict.md").read_text()
    assert "[1448, 2896, 5792, 11584, 23168, 46336, 36776]" in md
    assert main(["reproduce", "chen-fig9", "--out", str(tmp_path)]) == 2
    assert main(["reproduce", "--list"]) == 0
    assert "hafeez-table1" in capsys.readouterr().out


def test_sim_draws_the_time_series_of_one_run(tmp_path: Path) -> None:
    fig = tmp_path / "ts.png"
    assert main(["sim", "--senders", "8", "--blocks", "2", "-q", "--timeseries", str(fig)]) == 0
    assert fig.read_bytes().startswith(b"\x89PNG")


def test_coordinates_may_be_named_by_their_last_part(tmp_path: Path) -> None:
    out = _small_sweep(tmp_path)
    fig = tmp_path / "short.png"
    argv = ["plot", str(out), "--x", "senders", "--y", "goodput", "--hue", "rto_min"]
    assert main([*argv, "--where", "seed=1", "--out", str(fig)]) == 0
    assert fig.exists()


def test_fct_overhead_of_an_incast_sweep(tmp_path: Path) -> None:
    spec = tmp_path / "incast.toml"
    spec.write_text(
        '[topology]\nsenders = [1, 10, 100]\nlink = "10Gbps"\n[tcp]\nrto_min = "10ms"\n'
        '[workload]\nkind = "incast"\nflow_size = "270000B"\n'
    )
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    fig = tmp_path / "fct.png"
    assert main(["plot", str(out), "--kind", "fct-overhead", "--out", str(fig)]) == 0
    assert fig.stat().st_size > 10_000


def test_compare_without_emulation_puts_sim_beside_the_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["compare", "--backends", "sim,model", "--senders", "1,2", "--sru", "64KB", "--json"]
    assert main(argv) == 0
    records = json.loads(capsys.readouterr().out)
    # One record per backend per point.
    assert [(r["backend"], r["senders"]) for r in records] == [
        ("sim", 1),
        ("model", 1),
        ("sim", 2),
        ("model", 2),
    ]
    assert all(r["goodput_bps"] > 0 for r in records)
    assert records[1]["model_regime"] and records[1]["model_onset"] > 0
    assert main(["compare", "--backends", "sim,ns3"]) == 2
