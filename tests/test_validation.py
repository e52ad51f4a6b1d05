"""The arithmetic of `incast compare --repeat` and of the validation study, on synthetic
results (no root, no kernel): medians, the kernel's min-max, inside or not, BBR against CUBIC,
and a simulator that refuses a point."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

import pytest

import incastlab
from incastlab.real.testbed import simulator as tbsim
from incastlab.result import Result
from incastlab.scenario import Scenario, ScenarioError
from incastlab.studies import compare as cmp
from incastlab.validation import grid as vgrid
from incastlab.validation import report as vreport
from incastlab.validation import runs as vruns
from incastlab.validation import sim as vsim
from incastlab.validation import table as vtable


@functools.cache
def _template() -> Result:
    return incastlab.simulate(
        {"topology": {"link": "100Mbps"}, "workload": {"sru": "8KB", "blocks": 1}}
    )


def fake(sc: Scenario, goodput: float, backend: str = "sim", **report: Any) -> Result:
    """A result of ``sc`` with this goodput (the rest of its report from a tiny real run)."""
    t = _template()
    rep = {**t.report, "goodput_bps": goodput, "senders": sc.senders, **report}
    return dataclasses.replace(t, scenario=sc.normalized(), report=rep, backend=backend)


@dataclasses.dataclass
class Stub:
    """A backend whose goodput is a function of (senders, seed)."""

    name: str
    goodput: Any
    predicts: bool = False
    title: str = "stub"
    needs_root: bool = False
    parallel: bool = True
    seen: list[tuple[int, int]] = dataclasses.field(default_factory=list)

    def run(self, sc: Scenario, *, progress: Any = None) -> Result:
        self.seen.append((sc.senders, sc.seed))
        return fake(sc, self.goodput(sc.senders, sc.seed), self.name)


def points(*senders: int) -> list[Scenario]:
    cubic = [vgrid.Point("32KB", "200ms", "cubic", n) for n in senders]
    return [vgrid.scenario(p, vgrid.QUICK, seed=7) for p in cubic]


def test_spread_and_inside() -> None:
    assert cmp.spread([3.0, 1.0, 2.0]) == (2.0, 1.0, 3.0)
    assert cmp.spread([1.0, 4.0]) == (2.5, 1.0, 4.0)
    assert cmp.inside(1.0, 1.0, 3.0) and cmp.inside(3.0, 1.0, 3.0)
    assert not cmp.inside(3.5, 1.0, 3.0) and not cmp.inside(0.5, 1.0, 3.0)


def test_compare_repeats_runs_with_distinct_seeds_and_predictions_once() -> None:
    sim = Stub("sim", lambda n, seed: 50e6)
    real = Stub("emulate", lambda n, seed: {7: 40e6, 8: 60e6, 9: 45e6}[seed] / n)
    model = Stub("model", lambda n, seed: 30e6, predicts=True)
    c = cmp.compare(points(1, 2), [sim, real, model], repeat=3)
    assert real.seen == [(1, 7), (1, 8), (1, 9), (2, 7), (2, 8), (2, 9)]
    assert sim.seen == real.seen and model.seen == [(1, 7), (2, 7)]
    assert c.repeat == 3
    one, two = c.rows()
    assert one["emulate_goodput_bps"] == 45e6  # the median
    assert (one["emulate_goodput_min_bps"], one["emulate_goodput_max_bps"]) == (40e6, 60e6)
    assert one["emulate_runs"] == 3 and "sim_goodput_min_bps" not in one
    assert one["emulate_vs_sim"] == pytest.approx(45 / 50 - 1)
    assert one["sim_inside_emulate"] is True  # 50 in [40, 60]
    assert two["sim_inside_emulate"] is False  # 50 above [20, 30]
    assert one["model_goodput_bps"] == 30e6
    # Every record, point by point: the run backends' repetitions in order, then the model.
    order = [(r["backend"], r["senders"], r["seed"]) for r in c.records()]
    assert order[:7] == [
        ("sim", 1, 7),
        ("sim", 1, 8),
        ("sim", 1, 9),
        ("emulate", 1, 7),
        ("emulate", 1, 8),
        ("emulate", 1, 9),
        ("model", 1, 7),
    ]
    assert len(order) == 14


def test_compare_without_repeat_is_as_before() -> None:
    sim = Stub("sim", lambda n, seed: 50e6)
    real = Stub("emulate", lambda n, seed: 40e6)
    c = cmp.compare(points(1, 4), [sim, real])
    assert c.repetitions is None and c.repeat == 1
    row = c.rows()[0]
    assert set(row) == {
        "senders",
        "sim_goodput_bps",
        "sim_block_time_median_s",
        "emulate_goodput_bps",
        "emulate_block_time_median_s",
        "emulate_vs_sim",
    }
    assert [r["backend"] for r in c.records()] == ["sim", "emulate"] * 2


def test_a_row_has_the_kernels_spread_and_each_profiles_error() -> None:
    row = vtable.Row(
        vgrid.Point("32KB", "200ms", "cubic", 8),
        50e-6,
        real=[30e6, 40e6, 35e6],
        sim={"classic": [20e6, 36e6, 50e6], "linux": []},
        missing={"linux": "unknown key 'tcp.profile'"},
    )
    assert (row.real_median, row.real_min, row.real_max) == (35e6, 30e6, 40e6)
    assert row.sim_median("classic") == 36e6
    assert row.error("classic") == pytest.approx(36 / 35 - 1)
    assert row.inside("classic") is True
    assert row.sim_median("linux") is None and row.error("linux") is None
    assert row.inside("linux") is None
    rec = row.record(["classic", "linux"])
    assert rec["real_median_mbps"] == 35.0 and rec["sim_classic_inside"] is True
    assert rec["sim_linux_missing"] == "unknown key 'tcp.profile'" and rec["rtt_us"] == 50.0


def _row(cc: str, n: int, real: list[float], sim: list[float], rto: str = "200ms") -> vtable.Row:
    return vtable.Row(vgrid.Point("32KB", rto, cc, n), 50e-6, real, {"classic": sim})


def test_the_summary_counts_points_inside_and_the_median_error() -> None:
    rows = [
        _row("cubic", 1, [90e6, 95e6], [92e6]),  # inside, +0%
        _row("cubic", 2, [50e6, 60e6], [80e6]),  # outside, +45%
        _row("cubic", 4, [20e6, 30e6], [20e6]),  # inside (the min), -20%
        vtable.Row(vgrid.Point("32KB", "200ms", "bbr", 4), None, [10e6], {"classic": []}, {}),
    ]
    (s,) = vtable.summarize(rows, ["classic"])
    assert s.points == 3 and s.inside_share == pytest.approx(2 / 3)
    assert s.median_abs_error == pytest.approx(0.2)
    assert [r.point.senders for r in s.outside] == [2]


def test_the_summary_says_what_the_share_owes_to_the_number_of_runs() -> None:
    rows = [
        _row("cubic", 1, [90e6, 91e6, 95e6, 70e6], [93e6]),  # inside 4 runs, not the first 2
        _row("cubic", 2, [50e6, 60e6, 55e6, 52e6], [55e6]),  # inside both
        _row("cubic", 4, [20e6, 30e6, 25e6], [40e6]),  # inside neither
    ]
    (s,) = vtable.summarize(rows, ["classic"])
    assert s.inside_share == pytest.approx(2 / 3)
    assert s.half_runs == 2 and s.inside_share_half == pytest.approx(1 / 3)
    assert rows[0].inside("classic", 2) is False and rows[0].inside("classic") is True


def test_near_misses_are_counted_apart_from_the_points_inside() -> None:
    rows = [
        _row("cubic", 1, [90e6, 95e6], [95.5e6]),  # 0.5% above the maximum: near
        _row("cubic", 2, [50e6, 60e6], [61e6]),  # 1.7% above: not near
        _row("cubic", 4, [20e6, 30e6], [25e6]),  # inside
    ]
    (s,) = vtable.summarize(rows, ["classic"])
    assert s.inside_share == pytest.approx(1 / 3) and s.near_share == pytest.approx(2 / 3)


def test_how_far_a_point_lies_beyond_the_kernels_range() -> None:
    assert _row("cubic", 2, [50e6, 60e6], [66e6]).beyond_range("classic") == pytest.approx(0.1)
    assert _row("cubic", 2, [50e6, 60e6], [45e6]).beyond_range("classic") == pytest.approx(-0.1)
    assert _row("cubic", 2, [50e6, 60e6], [55e6]).beyond_range("classic") == 0.0
    assert _row("cubic", 2, [50e6], []).beyond_range("classic") is None


def test_runs_from_a_kernel_with_another_tick_are_refused() -> None:
    tbsim.check_kernel_clock({"hz": 250})
    tbsim.check_kernel_clock({})  # nothing recorded: nothing to contradict
    with pytest.raises(ValueError, match="HZ = 1000"):
        tbsim.check_kernel_clock({"hz": 1000})


def test_bbr_against_cubic_which_collapses_harder() -> None:
    rows = [
        _row("cubic", 2, [80e6], [90e6]),
        _row("bbr", 2, [40e6], [45e6]),  # real 0.5, sim 0.5: BBR harder in both
        _row("cubic", 4, [40e6], [50e6]),
        _row("bbr", 4, [60e6], [25e6]),  # real 1.5 (CUBIC harder), sim 0.5 (BBR harder)
        _row("cubic", 8, [30e6], [30e6], rto="1ms"),  # other RTOmin: left out
        _row("bbr", 8, [10e6], [10e6], rto="1ms"),
    ]
    ords = vtable.orderings(rows, ["classic"])
    assert [(o.senders, o.real, o.sim["classic"]) for o in ords] == [
        (2, 0.5, 0.5),
        (4, 1.5, 0.5),
    ]
    assert (
        vtable.harder(0.5) == "BBR" and vtable.harder(1.5) == "CUBIC" and vtable.harder(None) == "-"
    )
    assert vtable.harder(1.02) == vtable.harder(0.97) == "neither"
    summary = vtable.ordering_summary(ords, ["classic"])
    assert summary["real"] == 1.0
    assert summary["profiles"]["classic"] == {"median": 0.5, "same_order": 0.5, "points": 2}


def test_profiles_are_overrides_by_name() -> None:
    got = vgrid.profile_overrides(["classic", "linux"], ["paced:tcp.profile=linux", "linux:seed=3"])
    assert got == {
        "classic": {"tcp.profile": "classic", "tcp.clock_granularity": "4ms"},
        "linux": {"tcp.profile": "linux", "tcp.timer_granularity": "4ms", "seed": 3},
        "paced": {"tcp.profile": "linux"},
    }
    with pytest.raises(ValueError, match="NAME:KEY=VALUE"):
        vgrid.profile_overrides(["classic"], ["tcp.profile=linux"])


def test_a_profile_takes_the_kernels_tick_as_the_engines_bundle_says() -> None:
    # The bundle is read from the engine: Linux's has timers of their own (jiffies beside a
    # µs RTT clock), the papers' kernels one clock for both.
    linux = incastlab.scenario.from_dict({"tcp": {"profile": "linux"}}).normalized()["tcp"]
    assert linux["timer_granularity"] is not None
    assert tbsim.profile("linux", "1ms") == {
        "tcp.profile": "linux",
        "tcp.timer_granularity": "1ms",
    }
    assert tbsim.profile("classic") == {"tcp.profile": "classic", "tcp.clock_granularity": "4ms"}
    # A name the engine does not know is left for the simulator to refuse.
    assert tbsim.profile("bogus") == {"tcp.profile": "bogus"}


def test_a_point_the_simulator_refuses_is_missing_not_a_crash() -> None:
    p = vgrid.Point("32KB", "200ms", "bbr", 4)
    got = vsim.run_sim(p, vgrid.QUICK, 50e-6, {"tcp.initial_window": 0})
    assert got.results == [] and got.missing is not None and "initial_window" in got.missing
    seen: list[Scenario] = []

    def simulate(sc: Scenario) -> Result:
        seen.append(sc)
        return fake(sc, 10e6)

    classic = tbsim.profile("classic")
    ok = vsim.run_sim(
        vgrid.Point("32KB", "1ms", "cubic", 4),
        vgrid.QUICK,
        48e-6,
        classic,
        30e-6,
        simulate=simulate,
    )
    assert ok.missing is None and len(ok.results) == len(vgrid.SIM_SEEDS)
    assert [sc.seed for sc in seen] == list(vgrid.SIM_SEEDS)
    assert {sc.topology.rtt for sc in seen} == {48_000_000}  # picoseconds
    # The kernel's client runs its warm-up block on top of those it measures; so does this.
    assert {sc.workload.blocks for sc in seen} == {vgrid.QUICK.blocks + vgrid.QUICK.warmup}
    assert {sc.workload.response_header for sc in seen} == {24}
    # 30 us of jitter is more than a 48 us RTT's star allows (twice RTT / 4): capped.
    assert {sc.topology.link_jitter for sc in seen} == {24_000_000}
    assert {sc.tcp.clock_granularity for sc in seen} == {4_000_000_000}
    with pytest.raises(ScenarioError):
        vgrid.scenario(p, vgrid.QUICK, seed=1, extra={"tcp.no_such_key": 1})


def test_the_simulators_goodput_leaves_out_the_warm_up_blocks() -> None:
    sc = vgrid.scenario(vgrid.Point("32KB", "1ms", "cubic", 2), vgrid.QUICK, seed=1)
    r = fake(sc, 1e6, block_times=[200e12, 10e12, 10e12], app_bytes=3 * 128_000)
    assert r.block_times_s == [200.0, 10.0, 10.0]
    # 128 KB per block over the two measured 10 s blocks.
    assert vsim.measured_goodput_bps(r, 1) == pytest.approx(128_000 * 8 / 10)
    assert vsim.measured_goodput_bps(r, 0) == 1e6  # no warm-up: the run's own goodput
    assert vsim.measured_goodput_bps(r, 3) == 1e6  # nothing left to measure


def test_the_testbed_jitter_comes_from_the_probes_spread() -> None:
    # d2, the expected range of n standard normals: the control-chart table's values.
    assert tbsim.expected_normal_range(2) == pytest.approx(1.128, abs=1e-3)
    assert tbsim.expected_normal_range(20) == pytest.approx(3.735, abs=1e-3)
    with pytest.raises(ValueError):
        tbsim.expected_normal_range(1)

    def run(lo: float, hi: float, n: int = 20) -> Result:
        probe = {"min_s": lo, "max_s": hi, "median_s": (lo + hi) / 2, "samples": n}
        r = fake(vgrid.scenario(vgrid.Point("32KB", "1ms", "cubic", 1), vgrid.QUICK, seed=1), 90e6)
        return dataclasses.replace(r, report={**r.report, "emulated": {"rtt_probe": probe}})

    d2 = tbsim.expected_normal_range(20)
    # Ranges 30, 40 and 90 us: the median's standard deviation, times sqrt(3) (4 crossings).
    got = tbsim.jitter_from_probes([run(40e-6, 70e-6), run(40e-6, 80e-6), run(40e-6, 130e-6)])
    assert got == pytest.approx(3**0.5 * 40e-6 / d2)
    assert tbsim.jitter_from_probes([]) is None
    assert tbsim.jitter_from_probes([run(40e-6, 70e-6, n=1)]) is None  # no range in one echo
    assert tbsim.point_jitter_s(25e-6, 60e-6) == 25e-6
    assert tbsim.point_jitter_s(25e-6, 40e-6) == 20e-6  # twice the star's per-link RTT / 4


def test_the_study_stores_kernel_runs_resumes_and_writes_its_docs(tmp_path: Path) -> None:
    grid = dataclasses.replace(vgrid.QUICK, senders=(1, 2))
    kernel = {"release": "6.18", "hz": 250, "sysctls": {"net.ipv4.tcp_recovery": "1"}}
    real = Stub("emulate", lambda n, seed: (90e6 if n == 1 else 40e6) + seed * 1e6)
    run = real.run

    def with_facts(sc: Scenario, *, progress: Any = None) -> Result:
        r = run(sc)
        emulated = {"rtt_measured_s": 40e-6 + sc.seed * 1e-6, "kernel": kernel}
        return dataclasses.replace(r, report={**r.report, "emulated": emulated})

    real.run = with_facts  # type: ignore[method-assign]
    real_dir = tmp_path / "real"
    assert vruns.run_real(grid, real_dir, real) == []  # type: ignore[arg-type]
    assert len(list(real_dir.glob("*.parquet"))) == len(grid.points()) * grid.repeat == 8
    before = len(real.seen)
    assert vruns.run_real(grid, real_dir, real) == []  # type: ignore[arg-type]
    assert len(real.seen) == before  # everything stored: nothing runs again

    def simulate(sc: Scenario) -> Result:
        if sc.tcp.congestion_control == "bbr":
            raise ScenarioError("tcp.congestion_control: bbr is not simulated yet")
        return fake(sc, 91.5e6 if sc.senders == 1 else 80e6)

    v = vtable.validate(grid, real_dir, {"classic": {}}, simulate=simulate)
    assert len(v.rows) == 4 and v.kernel["hz"] == 250
    cubic1 = next(r for r in v.rows if r.point.key == "32KB-200ms-cubic-N01")
    assert cubic1.real == [91e6, 92e6] and cubic1.rtt_s == pytest.approx(41.5e-6)
    (s,) = v.summary()
    assert (s.points, s.missing, s.inside_share) == (2, 2, 0.5)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reasons.csv").write_text(
        "profile,buffer,rto_min,cc,senders,why\n*,32KB,200ms,cubic,2,a reason kept on rerun\n"
    )
    written = vreport.write(v, tmp_path / "docs", "incast validate --quick")
    readme = (tmp_path / "docs" / "README.md").read_text()
    assert "incast validate --quick" in readme and "bbr is not simulated yet" in readme
    assert "Points outside the kernel's min–max" in readme and "| 2 |" in readme
    assert "| a reason kept on rerun |" in readme
    assert all(p.exists() and p.stat().st_size > 0 for p in written)
    csv = (tmp_path / "docs" / "validation.csv").read_text().splitlines()
    assert csv[0].startswith("buffer,rto_min,cc,senders,rtt_us,real_runs") and len(csv) == 5


def test_the_machine_is_described_per_repetition() -> None:
    from types import SimpleNamespace

    def run(busy: float, rtt_us: float) -> Any:
        return SimpleNamespace(
            report={"machine": {"cpu_busy": busy}, "emulated": {"rtt_measured_s": rtt_us * 1e-6}}
        )

    stored = [[run(1.0, 48), run(0.8, 24)], [run(0.9, 50), run(0.7, 20)], [run(1.0, 44)]]
    got = vruns.conditions_by_repetition(stored, 2)
    assert [(rep, b) for rep, b, _ in got] == [(0, 1.0), (1, 0.75)]
    assert got[0][2] == pytest.approx(48e-6) and got[1][2] == pytest.approx(22e-6)


def test_the_testbed_stalls_come_from_single_flow_runs_and_a_point_replays_anothers() -> None:
    ms = 1_000_000_000  # picoseconds
    one = vgrid.Point("32KB", "1ms", "cubic", 1)
    other = vgrid.Point("128KB", "1ms", "bbr", 1)
    many = vgrid.Point("32KB", "1ms", "cubic", 4)

    def run(p: vgrid.Point, blocks_ms: list[int], gap_ms: float) -> Result:
        sc = vgrid.scenario(p, vgrid.QUICK, seed=1)
        times = [t * ms for t in blocks_ms]
        return fake(sc, 90e6, block_times=times, duration=sum(times) + round(gap_ms * ms))

    stored = {
        one: [run(one, [5, 5, 7, 5], 0.4)],
        many: [run(many, [20, 90, 20, 20], 0.0)],  # losses, not stalls: never a trace
    }
    traces = vruns.testbed_stalls(stored)
    assert [p for p, _ in traces] == [one]
    # Per block: beyond the median block (5 ms), plus the 0.4 ms between blocks shared out.
    assert traces[0][1] == pytest.approx([0.1e-3, 0.1e-3, 2.1e-3, 0.1e-3])
    # A single-flow point never replays its own runs; another point replays them.
    assert vruns.point_stalls(traces, one, 1) == []
    assert vruns.point_stalls(traces, many, 1) == traces[0][1]
    stored[other] = [run(other, [5, 6, 5], 0.0), run(other, [5, 5, 9], 0.3)]
    traces = vruns.testbed_stalls(stored)
    drawn = [tuple(vruns.point_stalls(traces, many, seed)) for seed in range(1, 40)]
    assert len(set(drawn)) == 3  # every trace is drawn, the same one for the same seed
    assert all(vruns.point_stalls(traces, one, s) != traces[0][1] for s in range(1, 40))

    seen: list[Scenario] = []

    def simulate(sc: Scenario) -> Result:
        seen.append(sc)
        return fake(sc, 10e6)

    vsim.run_sim(many, vgrid.QUICK, 40e-6, {}, simulate=simulate, stalls=traces)
    for sc in seen:
        pauses = [round(t * 1e9) * 1000 for t in vruns.point_stalls(traces, many, sc.seed)]
        assert sc.workload.think_times == pauses
    assert "3 single-flow runs" in vruns.stalls_text(traces)
    assert "never pauses" in vruns.stalls_text([])
