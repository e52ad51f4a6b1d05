"""The Swift reproduction's check (Kumar et al., SIGCOMM 2020, §5.3 and Table 3), on synthetic
runs that pass and runs that fail; and its experiment's place among the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.reproductions.checks import swift
from incastlab.reproductions.reproduce import CHECKS, experiments


def _paper() -> dict[str, Any]:
    return dict(experiments(awaiting=True)["swift-incast"].meta["paper"])


def _row(*, drops: int, goodput: float, spread: float = 0.1) -> dict[str, Any]:
    # 5000 flows of 2 MB (50 machines × 100) in 4000 B packets: 2.5 million packets.
    return {
        "senders": 50,
        "params": {},
        "workload.tasks": 100,
        "app_bytes": 10_000_000_000,
        "swift.mtu": 4000,
        "drops": drops,
        "goodput_bps": goodput,
        "link_bps": 50e9,
        "bottleneck_max_bytes": 1e6,
        "timeouts": 0,
        # Half the flows finish ``spread`` later than 1.6 s, half earlier.
        "flow_completion_s": [1.6 * (1 + spread * (-1) ** i) for i in range(5000)],
    }


def _runs(paced: dict[str, Any], floored: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {"swift": [paced], "no_pacing": [floored]}


def test_table_3_agrees_with_the_papers_numbers(tmp_path: Path) -> None:
    # 49 Gbps and 10 drops (0.0004%) with cwnd < 1; 9 Gbps and 25% loss without.
    # Flows within ±10% of one another: Jain's index 0.99, within 10% of Figure 21's 0.91.
    runs = _runs(_row(drops=10, goodput=49e9), _row(drops=625_000, goodput=9e9, spread=0.5))
    f = swift.swift_incast(runs, _paper(), tmp_path)
    assert f.grade == "agrees", [c.line() for c in f.claims]
    assert "49.0 Gbps against the paper's 49.5 Gbps" in f.claims[0].measured
    assert "5000 flows of 2 MB (50 machines × 100) into one 50 Gbps host" in f.table
    assert (tmp_path / "swift_incast.png").stat().st_size > 10_000


def test_misses_beyond_twice_are_called_out_and_a_reversal_disagrees(tmp_path: Path) -> None:
    # Pacing loses more throughput than flooring the window (the reverse of the paper's
    # direction): both throughput claims disagree; loss 0.07% (233× the paper's) keeps its
    # shape (10× below the floored run's 10%).
    # Flows 0.2× and 1.8× the mean completion: Jain's index 0.61, and no fairer than the
    # floored run's: disagrees.
    paced = _row(drops=1750, goodput=44e9, spread=0.8)
    runs = _runs(paced, _row(drops=250_000, goodput=47e9))
    f = swift.swift_incast(runs, _paper(), tmp_path)
    grades = ["disagrees", "shape only", "shape only", "disagrees", "disagrees"]
    assert [c.grade for c in f.claims] == grades
    assert "(233× off)" in f.claims[1].measured
    assert "(5.4× off)" in f.claims[3].measured


def test_the_experiment_ships_its_reference_and_names_its_check() -> None:
    e = experiments()["swift-incast"]
    assert e.requires == "swift" and not e.awaiting
    assert e.meta["check"] in CHECKS
    assert [p.name for p in e.sweeps] == ["swift.toml", "no_pacing.toml"]
    assert (e.path / "expected" / "swift_incast.png").is_file()
