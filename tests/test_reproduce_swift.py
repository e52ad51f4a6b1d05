"""The Swift reproduction's check (Kumar et al., SIGCOMM 2020), on synthetic runs that pass
and runs that fail; and its experiment's place among the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.reproductions.checks import swift
from incastlab.reproductions.reproduce import CHECKS, experiments


def _paper() -> dict[str, Any]:
    return dict(experiments(awaiting=True)["swift-incast"].meta["paper"])


def _row(n: int, *, drops: int, goodput: float, queue: float) -> dict[str, Any]:
    return {
        "senders": n,
        "params": {"topology.senders": n},
        "app_bytes": 625_000_000,
        "swift.mtu": 4000,
        "drops": drops,
        "goodput_bps": goodput,
        "link_bps": 100e9,
        "bottleneck_max_bytes": queue,
        "timeouts": 0,
    }


def test_swift_incast_agrees_with_line_rate_no_loss_and_a_bounded_queue(tmp_path: Path) -> None:
    rows = [_row(n, drops=0, goodput=97e9, queue=1e6) for n in (100, 1000, 5000)]
    f = swift.swift_incast({"swift": rows}, _paper(), tmp_path)
    assert f.grade == "agrees", [c.line() for c in f.claims]
    assert f.claims[1].measured.startswith("at least 97.0% of 100 Gbps (N = 100)")
    assert (tmp_path / "swift_incast.png").stat().st_size > 10_000


def test_swift_incast_grades_loss_and_collapse_down(tmp_path: Path) -> None:
    # 3% of 156,250 packets dropped and 40% of the link at 5000 flows: loss disagrees,
    # throughput disagrees (below 70%), the queue at the 4 MB buffer is shape only.
    rows = [_row(n, drops=0, goodput=97e9, queue=1e6) for n in (100, 1000)]
    rows.append(_row(5000, drops=4688, goodput=40e9, queue=4e6))
    f = swift.swift_incast({"swift": rows}, _paper(), tmp_path)
    assert [c.grade for c in f.claims] == ["disagrees", "disagrees", "shape only"]
    assert "3.000% of the data packets dropped (N = 5000)" in f.claims[0].measured


def test_the_experiment_ships_its_reference_and_names_its_check() -> None:
    e = experiments()["swift-incast"]
    assert e.requires == "swift" and not e.awaiting
    assert e.meta["check"] in CHECKS
    assert (e.path / "expected" / "swift_incast.png").is_file()
