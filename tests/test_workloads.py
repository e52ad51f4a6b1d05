"""Workloads: background flows, the N-flow incast, time series."""

from __future__ import annotations

from conftest import HAFEEZ, run, sweep


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
