"""The EQDS reproduction's check (Olteanu et al., NSDI 2022, §8.2 and Figure 14), on synthetic
runs that pass and runs that fail; and its experiment's place among the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.reproductions.checks import eqds
from incastlab.reproductions.reproduce import CHECKS, experiments


def _paper() -> dict[str, Any]:
    return dict(experiments(awaiting=True)["eqds-incast"].meta["paper"])


def _row(fcts: list[float], buffer: str | None = None) -> dict[str, Any]:
    # 850 flows of 1 MB into 10 Gbps: the fair share is 11.76 Mbps, 0.68 s per flow.
    return {
        "senders": len(fcts),
        "params": {"topology.buffer": buffer} if buffer else {},
        "app_bytes": 1_000_000 * len(fcts),
        "link_bps": 10e9,
        "goodput_bps": 9e9,
        "drops": 0,
        "flow_completion_s": fcts,
    }


def _runs(small: list[float], large: list[float], eq: list[float]) -> dict[str, Any]:
    # The larger buffer listed first: the check orders TCP's runs by their buffer's bytes.
    return {
        "tcp": [_row(large, "150MB"), _row(small, "1500KB")],
        "eqds": [_row(eq)],
    }


def test_jain_index_is_one_for_equal_shares_and_one_over_n_for_one_winner() -> None:
    assert eqds.jain([3.0, 3.0, 3.0]) == 1.0
    assert abs(eqds.jain([4.0, 0.0, 0.0, 0.0]) - 0.25) < 1e-12
    assert eqds.rates_mbps(_row([0.8, 0.0]))[:1] == [0.0]  # an unfinished flow gets nothing


def test_the_figure_14_shape_agrees(tmp_path: Path) -> None:
    even = [0.68 + 0.001 * (i % 10) for i in range(850)]
    # A drop-tail buffer of about one packet per flow: half the flows 20× slower than the
    # other half (80 and 4 Mbps: Jain's index 0.55).
    skewed = [0.1 if i % 2 else 2.0 for i in range(850)]
    f = eqds.eqds_incast(_runs(skewed, even, even), _paper(), tmp_path)
    assert f.grade == "agrees", [c.line() for c in f.claims]
    assert "against the fair share 11.76 Mbps (10 Gbps / 850)" in f.claims[0].measured
    assert "425 of 850 below half the fair share" in f.claims[1].measured
    assert (tmp_path / "eqds_incast.png").stat().st_size > 10_000


def test_an_unfair_eqds_and_an_even_small_buffer_disagree(tmp_path: Path) -> None:
    even = [0.68] * 850
    unfair = [0.5 if i % 2 else 0.9 for i in range(850)]  # ±30% around the fair share
    f = eqds.eqds_incast(_runs(even, even, unfair), _paper(), tmp_path)
    # EQDS: outside ±10% and no fairer than TCP; TCP's small buffer shares evenly (Jain 1);
    # the large buffer agrees.
    assert [c.grade for c in f.claims] == ["disagrees", "disagrees", "agrees"]


def test_the_experiment_ships_its_reference_and_names_its_check() -> None:
    e = experiments()["eqds-incast"]
    assert e.requires == "eqds" and not e.awaiting
    assert e.meta["check"] in CHECKS
    assert (e.path / "expected" / "eqds_incast.png").is_file()
