"""The analytical model against the seeds' numbers, Monte Carlo, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from incastlab import model
from incastlab.model import ModelError

TABLE_1 = {
    16_000: [1448, 2896, 5792, 5864],
    32_000: [1448, 2896, 5792, 11584, 10280],
    64_000: [1448, 2896, 5792, 11584, 23168, 19112],
    128_000: [1448, 2896, 5792, 11584, 23168, 46336, 36776],
}


@pytest.mark.parametrize("sru", sorted(TABLE_1))
def test_table_1_exactly(sru: int) -> None:
    assert model.slow_start_rounds(sru) == TABLE_1[sru]


@pytest.mark.parametrize("buffer", [64_000, 65_536])
def test_chen_onsets(buffer: int) -> None:
    """Eq. 3 with the article's extra buffering: 13, 7, 4 (and 2 for 128 KB, as the article
    says Eq. 3 predicts) with 64 KB per port; collapse well underway at N = 2 with 4 KB."""
    onsets = [model.collapse_onset(s, buffer) for s in (16_000, 32_000, 64_000, 128_000)]
    assert onsets == [13, 7, 4, 2]
    assert model.collapse_onset(256_000, 4_096) == 2


def test_eq_1_and_eq_2() -> None:
    ideal = model.ideal_goodput([1, 8], 256_000, 1e9, 1e-3)
    assert ideal[0] == pytest.approx(256_000 * 8 / (1e-3 + 256_000 * 8 / 1e9))
    assert ideal[1] > ideal[0]  # grows with N towards the link
    bound = model.rto_goodput(2, 256_000, 1e9, 100e-6, 0.2)
    assert float(bound) == pytest.approx(20.06e6, rel=1e-3)
    partial = model.rto_goodput(8, 1_024_000, 1e9, 1e-3, 0.2, a=0.6)
    assert float(partial) > float(model.rto_goodput(8, 1_024_000, 1e9, 1e-3, 0.2))


def test_prediction_switches_regime_at_the_onset() -> None:
    p = model.predict(range(1, 20), sru=16_000, buffer=64_000, link_bps=1e9, rtt=1e-3, rto=0.2)
    regimes = [x.regime for x in p]
    assert regimes.index("rto") == 12  # N = 13
    assert p[11].goodput_bps > 10 * p[12].goodput_bps
    assert p[12].timeouts_per_block == 1.0


def test_expected_max_rto_matches_monte_carlo_for_every_n_to_256() -> None:
    rng = np.random.default_rng(6)
    rto_min, delta = 0.010, 0.004
    lo, hi = rto_min - delta / 2, rto_min + delta / 2
    for n in range(1, 257):
        draws = rng.uniform(lo, hi, size=(4000, n)).max(axis=1)
        assert float(model.expected_max_rto(n, rto_min, delta)) == pytest.approx(
            draws.mean(), rel=0.01
        ), n


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16, 32, 64, 128, 256])
def test_var_and_tail_of_the_max_rto_match_monte_carlo(n: int) -> None:
    rng = np.random.default_rng(n)
    rto_min, delta = 0.010, 0.004
    draws = rng.uniform(rto_min - delta / 2, rto_min + delta / 2, size=(40_000, n)).max(axis=1)
    assert float(model.var_max_rto(n, rto_min, delta)) == pytest.approx(draws.var(), rel=0.05)
    k = rto_min + delta / 4
    assert float(model.rto_exceeds(k, n, rto_min, delta)) == pytest.approx(
        (draws > k).mean(), abs=0.01
    )


def test_expected_max_rto_tends_to_the_top_of_the_interval() -> None:
    e = model.expected_max_rto([1, 10, 100, 10_000], 0.010, 0.004)
    assert e[0] == pytest.approx(0.010)
    assert np.all(np.diff(e) > 0)
    assert e[-1] == pytest.approx(0.012, rel=1e-3)


def test_tda_and_maa() -> None:
    assert model.tda_interval(0.010, 0.002, 0) == pytest.approx((0.009, 0.011))
    assert model.tda_interval(0.010, 0.002, 3) == pytest.approx((0.002, 0.018))
    assert model.maa_interval(1, 1.0) == 0
    assert model.maa_interval(256, 1.0) == 46


def test_other_closed_forms() -> None:
    assert model.dctcp_marking_threshold(10e9, 100e-6) == pytest.approx(125_000 / 7)
    assert float(model.optimal_completion(8000, 270_000, 10e9)) == pytest.approx(1.728)
    assert float(model.burst_buffer(47, 10, 1538, 1e9, 100e-6)) == pytest.approx(
        47 * 10 * 1538 - 12_500
    )
    assert model.incast_overhead(130, 100) == pytest.approx(0.3)
    assert model.amdahl_overhead(0.5, 900e6, 100e6) == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: model.expected_max_rto(4, 0.010, 0.030), "delta: must be at most 2·rto_min"),
        (lambda: model.ideal_goodput(4, 1000, 0, 1e-3), "link_bps: must be a positive number"),
        (lambda: model.ideal_goodput(0, 1000, 1e9, 1e-3), "senders: must be whole numbers"),
        (lambda: model.collapse_onset(16_000, 0), "buffer: must be a positive"),
        (lambda: model.slow_start_rounds(0), "sru: must be a positive"),
        (lambda: model.amdahl_overhead(1.5, 1, 1), "network_share: must be between 0 and 1"),
    ],
)
def test_impossible_inputs_are_named(call: object, needle: str) -> None:
    with pytest.raises(ModelError, match=needle):
        call()  # type: ignore[operator]


def test_model_cli_table_json_and_plot(tmp_path: object) -> None:
    from pathlib import Path

    from incastlab.cli import main

    png = Path(str(tmp_path)) / "fig.png"
    argv = ["model", "--senders", "1..16", "--sru", "16KB,32KB", "--initial-window", "1"]
    assert main([*argv, "--plot", str(png), "-q"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_model_cli_json_reports_onset_and_ignored_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from incastlab.cli import main

    argv = ["model", "--senders", "1..16", "--sru", "16KB", "--initial-window", "1", "--json"]
    assert main([*argv, "--no-sack"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # Predictions print as records, like every backend's results; the model's own figures
    # are its model_* columns.
    assert [r["model_regime"] for r in rows].index("rto") == 12
    assert all(r["model_onset"] == 13 and r["backend"] == "model" for r in rows)
    assert rows[0]["model_ignored"] == ["tcp.sack"]
    assert {"senders", "goodput_bps", "model_timeouts_per_block", "scenario"} <= set(rows[0])


def test_rto_random_cli(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from incastlab.cli import main

    argv = ["model", "rto-random", "--rto-min", "10ms", "--delta", "4ms", "--senders", "1,256"]
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["expected_max_rto_s"] == pytest.approx(0.010)
    assert rows[1]["expected_max_rto_s"] == pytest.approx(0.010 + 0.004 * 255 / 514)
    assert main(["model", "rto-random", "--rto-min", "1ms", "--delta", "4ms"]) == 2
    assert "delta: must be at most 2·rto_min" in capsys.readouterr().err


def test_calibration_fits_both_constants_and_scores_the_model() -> None:
    from incastlab.model.calibrate import QUICK_GRID, calibrate

    c = calibrate(QUICK_GRID, blocks=3)
    s = c.summary()
    assert s["points"] == 40
    assert 0 <= c.extra_buffer <= 256_000 and c.a > 0
    assert 0 <= s["median_error"] <= s["p90_error"]
    assert list(c.breakdown("senders")) == QUICK_GRID["senders"]
    # One sender is no incast: Eq. 1 with its RTT is close (slow start aside).
    assert c.breakdown("senders")[1]["p90"] < 0.5


def test_calibrate_cli(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from incastlab.cli import main

    assert main(["model", "calibrate", "--quick", "--blocks", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"extra_buffer", "a", "median_error", "p90_error", "points"} <= set(out)
    assert len(out["points"]) == 40
    assert main(["model", "calibrate", "--set", "tcp.bogus=1"]) == 2
    assert "unknown key 'tcp.bogus'" in capsys.readouterr().err


def test_partial_rto_doubles_beyond_a_sender_count() -> None:
    kw = dict(sru=1_024_000, buffer=64_000, link_bps=1e9, rtt=1e-3, rto=0.2, a=0.6)
    once = model.predict([8, 16, 32], **kw)  # type: ignore[arg-type]
    twice = model.predict([8, 16, 32], a_doubles_at=16, **kw)  # type: ignore[arg-type]
    assert once[0] == twice[0]
    assert twice[1].timeouts_per_block == pytest.approx(1.2)
    assert twice[2].goodput_bps < once[2].goodput_bps
    with pytest.raises(ModelError, match="a_doubles_at"):
        model.predict([8], a_doubles_at=0, **kw)  # type: ignore[arg-type]
