"""The shuffle study's pieces that need no root: its points, its slowed-down scenarios, what it
tells the simulator about the testbed, and its Eq. 5 arithmetic (the kernel's runs themselves
are in tests/test_emulate.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from incastlab.cli import main
from incastlab.real.testbed import build
from incastlab.result import Result
from incastlab.validation import shuffle_points as study
from incastlab.validation.shuffle_report import eq5


def test_points_put_both_rto_min_values_of_a_seed_side_by_side() -> None:
    pts = study.points((1, 2))
    today = [p for p in pts if p.kernel == "today"]
    assert len(today) == 2 * len(study.SHAPES) * 2
    first = today[: 2 * len(study.SHAPES)]
    assert {p.seed for p in first} == {1}
    assert [p.rto_ms for p in first[:2]] == [200, 1]
    assert pts[0].key == "default-rto200ms-seed1"
    # The 2009-like kernel runs Figure 6's two shuffles after today's, seed by seed too.
    old = pts[len(today) :]
    assert [p.key for p in old[:3]] == [
        "default-rto200ms-seed1-2009",
        "default-rto1ms-seed1-2009",
        "tuned-rto200ms-seed1-2009",
    ]
    assert {p.shape for p in old} == set(study.KERNEL_2009_SHAPES)


def test_the_2009_like_kernel_turns_off_rack_tlp_on_both_backends() -> None:
    k = study.KERNELS["2009"]
    assert k.sysctls == {"net.ipv4.tcp_recovery": "0", "net.ipv4.tcp_early_retrans": "0"}
    s = study.scenario(study.Point("default", 200, 1, "2009")).normalized()
    assert s["tcp"]["profile"] == "classic" and s["tcp"]["initial_window"] == 3
    assert not s["tcp"]["rack_tlp"] and s["tcp"]["congestion_control"] == "cubic"
    o = study.sim_overrides(31e-6, 0.0, "2009")
    assert o["tcp.profile"] == "classic" and o["tcp.clock_granularity"] == "4ms"


def test_the_kernel_runs_the_article_slowed_down_ten_times() -> None:
    slow = study.scenario(study.Point("default", 200, 3)).normalized()
    t, tcp, w = slow["topology"], slow["tcp"], slow["workload"]
    assert t["link"] == 100_000_000 and t["buffer"]["bytes"] == 64_000
    assert tcp["rto_min"] == 2_000_000_000_000 and tcp["congestion_control"] == "cubic"
    assert (w["sru"], w["blocks"], w["fanout_window"], w["reducers"]) == (1_858_045, 4, 5, 20)
    assert slow["seed"] == 3
    short = study.scenario(study.Point("default", 1, 3)).normalized()
    assert short["tcp"]["rto_min"] == 10_000_000_000
    # The article's own fabric: 1 Gbps, 100 µs, 200 ms, timers of HZ = 1000.
    article = study.scenario(
        study.Point("tuned", 200, 1), scale=1, overrides=study.ARTICLE_KERNEL
    ).normalized()
    assert article["topology"]["link"] == 1_000_000_000
    assert article["topology"]["rtt"] == 100_000_000
    assert article["tcp"]["rto_min"] == 200_000_000_000
    assert article["tcp"]["timer_granularity"] == 1_000_000_000
    assert article["workload"]["fanout_window"] == 0  # every host at once


def test_the_simulator_is_told_the_testbed() -> None:
    o = study.sim_overrides(31e-6, 20e-6)
    assert o["topology.rtt"] == "31us"
    # Each crossing's delay varies by at most the star's per-link delay (RTT / 4) either way.
    assert o["topology.link_jitter"] == "15500ns"
    assert study.sim_overrides(31e-6, 5e-6)["topology.link_jitter"] == "5000ns"
    assert o["topology.nic_burst"] == o["topology.port_burst"] == f"{build.TBF_BURST}B"
    assert o["tcp.profile"] == "linux" and o["tcp.timer_granularity"] == "4ms"


def _result(seconds: float) -> Result:
    report: dict[str, Any] = {"duration": round(seconds * 1e12), "timeouts": 0, "drops": 0}
    return Result(scenario={}, report=report, version="test")


def test_eq5_is_the_mean_long_time_over_the_mean_short_time_and_pairs_give_its_range() -> None:
    runs = []
    # Kernel times are slowed down 10 times; the article's are not.
    for seed, long_s, short_s in ((1, 1.5, 1.0), (2, 1.1, 1.0)):
        for rto, t in ((200, long_s), (1, short_s)):
            runs.append(
                study.Run(
                    study.Point("default", rto, seed),
                    real=_result(10 * t),
                    sim=_result(10 * t),
                    article=_result(t),
                )
            )
    mean, lo, hi = eq5(runs, "real")
    assert mean == pytest.approx(1.3 / 1.0 - 1)
    assert (lo, hi) == (pytest.approx(0.1), pytest.approx(0.5))
    assert eq5(runs, "article")[0] == pytest.approx(0.3)
    # A seed with only one RTOmin run does not count.
    assert eq5(runs[:3], "real") == (pytest.approx(0.5),) * 3


def test_without_stored_kernel_runs_it_says_how_to_get_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "shuffle", "--out", str(tmp_path), "--skip-real"]) == 2
    assert "run without --skip-real, as root" in capsys.readouterr().err
    assert main(["validate", "shuffle", "--out", str(tmp_path), "--skip-real", "--seeds", "x"]) == 2
