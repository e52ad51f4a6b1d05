"""The Homa reproduction's check (Montazeri et al., SIGCOMM 2018, Figure 10 and §3.6), on
synthetic runs that pass and runs that fail; and its experiment's place among the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.reproductions.checks import homa
from incastlab.reproductions.reproduce import CHECKS, experiments

NS = (100, 200, 300, 350, 400, 500, 1000, 2000, 3000, 5000)


def _paper() -> dict[str, Any]:
    return dict(experiments(awaiting=True)["homa-incast"].meta["paper"])


def _row(n: int, *, gbps: float, drops: int = 0, queue: float = 300e3) -> dict[str, Any]:
    return {
        "senders": n,
        "params": {"topology.senders": n},
        "goodput_bps": gbps * 1e9,
        "link_bps": 10e9,
        "drops": drops,
        "timeouts": 1 if drops else 0,
        "bottleneck_max_bytes": queue,
    }


def _figure_10() -> dict[str, list[dict[str, Any]]]:
    """Runs shaped as the paper's Figure 10: the control flat near 9.6 Gbps with a few hundred
    KB queued; without it, drops past 300, a trough of 1.9 at 400 and a recovery to 8.2."""
    none_gbps = {400: 1.9, 500: 2.2, 1000: 3.6, 2000: 5.5, 3000: 7.0, 5000: 8.2}
    none = [
        _row(
            n,
            gbps=none_gbps.get(n, 9.4 if n <= 300 else 3.0),
            drops=0 if n <= 300 else 50,
            queue=3e6 if n > 300 else n * 9e3,
        )
        for n in NS
    ]
    control = [_row(n, gbps=9.5) for n in NS]
    return {"none": none, "control": control}


def test_homa_incast_agrees_with_figure_10(tmp_path: Path) -> None:
    f = homa.homa_incast(_figure_10(), _paper(), tmp_path)
    assert f.grade == "agrees", [c.line() for c in f.claims]
    assert f.claims[2].measured.startswith("300 responses without a drop")
    assert (tmp_path / "homa_incast.png").stat().st_size > 10_000


def test_homa_incast_grades_a_control_that_does_not_hold_the_buffer(tmp_path: Path) -> None:
    # The control no better than none, its port full at 1000 (6× the 500 KB bound): both
    # control claims disagree; the runs without control still agree.
    runs = _figure_10()
    runs["control"] = [dict(r) for r in runs["none"]]
    f = homa.homa_incast(runs, _paper(), tmp_path)
    assert [c.grade for c in f.claims] == ["disagrees", "disagrees", "agrees", "agrees"]
    assert "3000 KB at the client's port" in f.claims[1].measured
    assert "(6× the bound)" in f.claims[1].measured


def test_homa_incast_grades_an_early_onset_and_a_deep_trough_down(tmp_path: Path) -> None:
    # Drops from 100 on (onset 0: no clean N) and 0.5 Gbps at 400 (3.8× below the paper).
    runs = _figure_10()
    runs["none"] = [_row(n, gbps=0.5 if n == 400 else 4.0, drops=10, queue=3e6) for n in NS]
    f = homa.homa_incast(runs, _paper(), tmp_path)
    assert [c.grade for c in f.claims][2:] == ["disagrees", "disagrees"]


def test_the_experiment_ships_its_reference_and_names_its_check() -> None:
    e = experiments()["homa-incast"]
    assert e.requires == "homa" and not e.awaiting
    assert e.meta["check"] in CHECKS
    assert (e.path / "expected" / "homa_incast.png").is_file()
