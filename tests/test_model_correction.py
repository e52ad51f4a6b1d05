"""The burst model's learned correction: the stored trees evaluate as the library that fitted
them predicts, the package's correction belongs to the package's constants and was fitted on
designs apart from the ones its figures are reported on, it is applied (and can be left off)
where users read the model, and it is bounded."""

from __future__ import annotations

import dataclasses
import math

import pytest

from incastlab.backends.model import burst_path, predict_scenario
from incastlab.model import burst, correction, design
from incastlab.scenario import apply_overrides, from_dict


def _scenario(**keys: object):  # type: ignore[no-untyped-def]
    return from_dict(apply_overrides({}, keys))


def test_stored_trees_evaluate_as_the_fitted_model_predicts() -> None:
    """The export (each tree's nodes as plain lists, thresholds and values to 7 digits)
    against scikit-learn's own predictions, on a function with interactions."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("sklearn")
    from incastlab.model import fit_correction

    rng = np.random.default_rng(1)
    x = rng.normal(size=(1500, 4))
    y = np.sin(x[:, 0]) + 0.3 * x[:, 1] * x[:, 2] + rng.normal(scale=0.05, size=1500)
    m = fit_correction._fit(x.tolist(), y.tolist())
    base, trees = fit_correction._export(m)
    c = correction.Correction(
        trees=trees, base=base, scale=float(fit_correction.TREES["learning_rate"]), constants=""
    )
    assert len(trees) == fit_correction.TREES["n_estimators"]
    for row, want in zip(x[:100], m.predict(x[:100]), strict=True):
        assert c.log_factor(list(row)) == pytest.approx(float(want), abs=1e-5)


def test_the_package_correction_belongs_to_its_constants_and_its_own_designs() -> None:
    k = burst.fitted()
    fix = correction.fitted(k.named())
    assert fix is not None, "correction.json was fitted with other constants: refit it"
    assert fix.version == k.version
    seeds = fix.fit["seeds"]
    assert seeds == design.calibration_seeds(len(seeds)) and len(seeds) >= 60
    # Neither the held-out design nor the fresh ones the constants report on are among them.
    assert design.HELD_OUT_SEED not in seeds
    assert not set(seeds) & set(k.fit["fresh"]["seeds"])
    assert fix.fit["points"] >= 290 * len(seeds)
    # Its inputs are the file's: one threshold per feature index the trees use.
    n = len(correction.features(*_path_and_answer(_scenario())))
    assert max(f for t in fix.trees for f in t["feature"]) < n
    for regime in ("ideal", "timeouts", "collapse", "flagged"):
        lo, hi = fix.interval[regime]
        assert 0 < lo < 1 < hi
    # With other constants the mechanisms' answer is another: no correction.
    other = dataclasses.replace(k, busy_loss=k.busy_loss / 2)
    assert correction.fitted(other.named()) is None


def _path_and_answer(sc):  # type: ignore[no-untyped-def]
    path = burst_path(sc.normalized())
    return path, burst.predict(path, burst.fitted())


def test_users_read_the_corrected_answer_and_can_ask_for_the_mechanisms() -> None:
    sc = _scenario(**{"topology.senders": 48, "topology.buffer": "64KB", "workload.sru": "64KB"})
    corrected = predict_scenario(sc, with_onset=False)
    alone = predict_scenario(sc, with_onset=False, correct=False)
    assert alone.correction is None and corrected.correction is not None
    b = corrected.burst
    assert b is not None
    assert alone.prediction.goodput_bps == b.goodput_bps
    assert corrected.prediction.goodput_bps == pytest.approx(b.goodput_bps * corrected.correction)
    # The same bytes: the block time moves with the goodput.
    assert corrected.prediction.block_time_s * corrected.prediction.goodput_bps == pytest.approx(
        b.block_time_s * b.goodput_bps
    )
    lo, hi = corrected.interval or (0.0, 0.0)
    assert lo < corrected.prediction.goodput_bps < hi
    row = corrected.row()
    assert row["mechanisms_bps"] == b.goodput_bps and row["correction"] == corrected.correction
    report = corrected.result().to_json()["report"]["model"]
    assert report["correction"] == corrected.correction


def test_the_correction_is_bounded() -> None:
    path, b = _path_and_answer(_scenario())
    huge = correction.Correction(
        trees=[{"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "value": [1e3]}],
        base=0.0,
        scale=1.0,
        constants="",
    )
    assert huge.factor(path, b) == pytest.approx(correction.MAX_FACTOR)
    assert math.isfinite(huge.log_factor(correction.features(path, b)))
