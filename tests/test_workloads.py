"""Workloads: background flows, the N-flow incast, queries, concurrent tasks, time series."""

from __future__ import annotations

from pathlib import Path

import pytest

import incastlab
from conftest import HAFEEZ, run, scenario, sweep
from incastlab.scenario import from_dict, load


def test_background_flows_make_incast_worse_as_in_hafeez_table_1() -> None:
    """Hafeez et al. (ns-2, 1 Gbps, 100 us, 1 KB packets, 32 KB buffer, U[0,20] us jitter,
    RTOmin 10 ms): two long background flows cut task goodput by 2x or more."""
    ns = [4, 8, 16, 32, 64]
    alone = sweep(ns, **HAFEEZ)
    busy = sweep(ns, background__flows=2, **HAFEEZ)
    for n in ns:
        assert busy[n].goodput_bps < alone[n].goodput_bps
        assert busy[n].timeouts >= alone[n].timeouts
    assert busy[32].goodput_bps < 0.5 * alone[32].goodput_bps
    # The shape of the seed's table: goodput falls steadily with N.
    assert alone[4].goodput_bps > alone[16].goodput_bps > alone[64].goodput_bps
    # Background flows deliver too, and are reported as such.
    bg = [f for f in busy[8].report["flows"] if f["background"]]
    assert len(bg) == 2 and all(f["bytes"] > 0 for f in bg)


def test_one_incast_flow_finishes_near_the_optimum() -> None:
    r = run(
        topology__senders=1,
        topology__link="10Gbps",
        topology__rtt="10us",
        tcp__mss="8948B",
        workload__kind="incast",
        workload__flow_size="270000B",
    )
    optimal = 270_000 * 8 / 10e9
    (fct,) = r.flow_completion_s
    assert fct is not None and optimal < fct < 1.5 * optimal + 40e-6


def test_incast_of_many_flows_reports_every_fct() -> None:
    r = run(
        topology__senders=200,
        topology__link="10Gbps",
        topology__rtt="10us",
        topology__buffer="100pkt",
        tcp__mss="8948B",
        tcp__rto_min="1ms",
        workload__kind="incast",
        workload__flow_size="270000B",
        workload__jitter="1ms",
    )
    fcts = r.flow_completion_s
    assert len(fcts) == 200 and all(f is not None for f in fcts)
    assert max(f for f in fcts if f is not None) == r.duration_s
    assert r.drops > 0 and r.timeouts > 0


def test_time_series_samples_queue_and_cwnd() -> None:
    r = run(
        topology__senders=8,
        workload__sru="64KB",
        workload__blocks=3,
        run__sample_interval="50us",
    )
    s = r.series
    assert s is not None
    assert len(s["t"]) == len(s["queue_bytes"]) > 10
    assert all(q <= 64_000 for q in s["queue_bytes"])
    assert max(s["queue_bytes"]) > 0
    assert len(s["cwnd"]) == 8 and all(len(c) == len(s["t"]) for c in s["cwnd"])
    assert s["t"] == sorted(s["t"])


def test_poisson_queries_report_fct_per_size_class_and_suffer_beside_long_flows() -> None:
    """Hafeez's non-incast workload: queries of 10-50 KB arriving as a Poisson process at
    half the link, with and without two long flows in the background."""
    kw = dict(topology__senders=16, workload__kind="queries", workload__queries=400)
    quiet = run(**kw)
    busy = run(background__flows=2, **kw)
    assert len(quiet.query_fct_s) == 400 == len(busy.query_fct_s)
    assert quiet.report["app_bytes"] == sum(b for b, _ in quiet.query_fct_s)
    classes = quiet.fct_by_size(4)
    assert len(classes) == 4 and sum(c["queries"] for c in classes) == 400
    assert all(c["fct_p99_s"] >= c["fct_mean_s"] > 0 for c in classes)
    # Bigger responses take longer; long flows' standing queues slow every query down.
    assert classes[-1]["fct_mean_s"] > classes[0]["fct_mean_s"]
    assert busy.row()["query_fct_mean_s"] > quiet.row()["query_fct_mean_s"]


def test_query_sizes_from_an_empirical_cdf_file(tmp_path: Path) -> None:
    """A CDF file beside the scenario: 60% of responses are 2 KB, the rest spread linearly
    up to 1 MB (a mix of mice and elephants). Sizes follow it and, with a 1 ms RTOmin (at
    200 ms, the few timeouts dominate every class's mean), the elephants' FCTs are far longer
    than the mice's."""
    (tmp_path / "mix.cdf").write_text(
        "# size  cumulative probability (percent)\n2KB 60\n100KB, 90\n1MB 100\n"
    )
    (tmp_path / "q.toml").write_text(
        '[topology]\nsenders = 8\n[tcp]\nrto_min = "1ms"\n'
        '[workload]\nkind = "queries"\nqueries = 500\n'
        'query_size_cdf = "mix.cdf"\n'
    )
    sc = load(tmp_path / "q.toml")
    assert sc.workload.query_size_cdf == [(2000, 0.6), (100_000, 0.9), (1_000_000, 1.0)]
    r = incastlab.simulate(sc)
    sizes = [b for b, _ in r.query_fct_s]
    assert len(sizes) == 500
    mice = sum(1 for b in sizes if b == 2000) / 500
    assert 0.5 < mice < 0.7
    assert min(sizes) == 2000 and max(sizes) <= 1_000_000 and max(sizes) > 100_000
    classes = r.fct_by_size(3)
    # Log-spaced: 2 KB to 16 KB, to 124 KB, to 1 MB.
    assert classes[0]["size_to"] < 20_000 and classes[-1]["size_from"] > 100_000
    assert classes[-1]["fct_mean_s"] > 5 * classes[0]["fct_mean_s"]
    # The normalized scenario carries the points, so a stored result reproduces without
    # the file.
    again = from_dict(r.scenario, normalized=True)
    assert again.workload.query_size_cdf == sc.workload.query_size_cdf


@pytest.mark.parametrize(
    ("cdf", "needle"),
    [
        ("missing.cdf", "cannot read CDF file"),
        ([[100, 0.5], [50, 1.0]], "workload.query_size_cdf: point 1: sizes must increase"),
        ([[100, 0.5]], "workload.query_size_cdf: point 0: the last probability must be 1"),
        ([["10 parsecs", 1.0]], "workload.query_size_cdf: point 0"),
    ],
)
def test_bad_cdfs_name_the_field(cdf: object, needle: str) -> None:
    with pytest.raises(incastlab.ScenarioError, match=needle):
        scenario(workload__kind="queries", workload__query_size_cdf=cdf)


def test_concurrent_tasks_each_wait_for_their_own_blocks() -> None:
    """Two tasks reading 64 KB SRUs from the same 8 servers, each over its own connections:
    twice the blocks and bytes of one task, and because they desynchronize, more servers
    answer at once on average, so the port overflows more often than for one task."""
    one = run(topology__senders=8, workload__sru="64KB", workload__blocks=10)
    two = run(topology__senders=8, workload__sru="64KB", workload__blocks=10, workload__tasks=2)
    assert len(one.block_times_s) == 10 and len(two.block_times_s) == 20
    assert two.report["app_bytes"] == 2 * one.report["app_bytes"] == 2 * 8 * 64_000 * 10
    assert len(two.report["flows"]) == 16
    assert two.drops > one.drops and two.timeouts > one.timeouts
    assert (
        two.report
        == run(
            topology__senders=8, workload__sru="64KB", workload__blocks=10, workload__tasks=2
        ).report
    )


def test_tasks_with_queries_is_an_error() -> None:
    with pytest.raises(incastlab.ScenarioError, match=r"workload\.tasks: concurrent tasks apply"):
        scenario(workload__kind="queries", workload__tasks=2)
