"""Fit the burst model's correction (:mod:`incastlab.model.correction`) on measured random
designs: gradient-boosted regression trees (scikit-learn's ``GradientBoostingRegressor``, the
absolute error as its loss: a point the mechanisms miss by 10x should not pull the trees as
a hundred points they miss by 10%) over :func:`~incastlab.model.correction.features`, to
log(simulator / mechanisms). Its interval is read off predictions each made without its own
design (:data:`FOLDS` folds of whole designs): the residuals of points the trees were fitted
on are narrower than those of a scenario they have not seen.

scikit-learn is needed only here (``pip install "incastlab[calibrate]"``); the package
evaluates the stored trees without it.
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from incastlab import _core
from incastlab.model import burst, domain
from incastlab.model.correction import Correction, bounded, features
from incastlab.model.design import TOLERANCE
from incastlab.model.fit import INTERVAL_QUANTILES, MIN_GROUP

#: The trees, chosen by cross-validation over whole designs on the sixty-one designs read
#: while the mechanisms were chosen (within 1.5x: 300 trees of 63 leaves 92.1%, of 31 leaves
#: 91.6%, 15 leaves 90.8%; the absolute error 92.0% against the Huber loss's 91.1%).
TREES = {
    "n_estimators": 300,
    "learning_rate": 0.05,
    "max_leaf_nodes": 63,
    "max_depth": None,
    "min_samples_leaf": 40,
    "loss": "absolute_error",
    "random_state": 0,
}
#: Folds of whole designs the interval's residuals are predicted in.
FOLDS = 5
#: Digits a stored threshold or leaf value keeps (the file stays about a megabyte; the
#: rounding moves an answer by far less than the simulator's seeds do).
DIGITS = 7


def _table(rows: list[Any], c: burst.Constants) -> tuple[list[list[float]], list[float], list[str]]:
    """The trees' inputs, log(simulator / mechanisms) and each point's interval group: the
    mechanisms' regime, or ``"flagged"`` where the domain flags it."""
    from incastlab.backends.model import burst_path

    xs, ys, groups = [], [], []
    for r in rows:
        p = burst_path(r.scenario)
        b = burst.predict(p, c)
        xs.append(features(p, b))
        ys.append(math.log(r.sim_bps / b.goodput_bps))
        groups.append("flagged" if domain.outside(r.scenario, p, b, c) else b.regime)
    return xs, ys, groups


def _fit(xs: list[list[float]], ys: list[float]) -> Any:
    from sklearn.ensemble import GradientBoostingRegressor

    return GradientBoostingRegressor(**TREES).fit(xs, ys)


def _round(x: float) -> float:
    return float(f"{x:.{DIGITS}g}")


def _export(m: Any) -> tuple[float, list[dict[str, list[Any]]]]:
    """The fitted trees as plain lists (:class:`~incastlab.model.correction.Correction`)."""
    base = float(m.init_.constant_[0][0]) if hasattr(m.init_, "constant_") else 0.0
    trees: list[dict[str, list[Any]]] = []
    for (est,) in m.estimators_:
        t = est.tree_
        trees.append(
            {
                "feature": [int(f) for f in t.feature],
                "threshold": [_round(float(x)) for x in t.threshold],
                "left": [int(i) for i in t.children_left],
                "right": [int(i) for i in t.children_right],
                "value": [_round(float(v[0][0])) for v in t.value],
            }
        )
    return base, trees


def _fold_predictions(
    task: tuple[list[list[float]], list[float], list[list[float]]],
) -> list[float]:
    train_x, train_y, test_x = task
    return [float(v) for v in _fit(train_x, train_y).predict(test_x)]


def fit_correction(
    rows: list[Any], c: burst.Constants, seeds: list[int], workers: int | None = None
) -> Correction:
    """The correction fitted on measured design points (:class:`incastlab.model.design.Measured`
    of the designs drawn with ``seeds``) for the mechanisms with constants ``c``, with its
    interval per predicted regime from predictions out of each point's own design's fold."""
    xs, ys, groups = _table(rows, c)
    base, trees = _export(_fit(xs, ys))
    # Out-of-fold predictions, whole designs held out together.
    order = sorted({r.design for r in rows})
    fold_of = {d: i % FOLDS for i, d in enumerate(order)}
    tests, tasks = [], []
    for k in range(FOLDS):
        train = [i for i, r in enumerate(rows) if fold_of[r.design] != k]
        test = [i for i, r in enumerate(rows) if fold_of[r.design] == k]
        tests.append(test)
        tasks.append(([xs[i] for i in train], [ys[i] for i in train], [xs[i] for i in test]))
    oof = [0.0] * len(rows)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for test, pred in zip(tests, pool.map(_fold_predictions, tasks), strict=True):
            for i, v in zip(test, pred, strict=True):
                oof[i] = v
    by_group: dict[str, list[float]] = {}
    within = []
    for i, group in enumerate(groups):
        ratio = math.exp(ys[i] - bounded(oof[i]))
        by_group.setdefault(group, []).append(ratio)
        by_group.setdefault("all", []).append(ratio)
        if group != "flagged":
            within.append(abs(math.log(ratio)) <= math.log(TOLERANCE))
    interval = {
        k: [round(x, 4) for x in domain.quantiles(v, *INTERVAL_QUANTILES)]
        for k, v in by_group.items()
        if len(v) >= MIN_GROUP
    }
    return Correction(
        trees=trees,
        base=_round(base),
        scale=float(TREES["learning_rate"]),  # type: ignore[arg-type]
        constants=c.named(),
        version=_core.__version__,
        interval=interval,
        fit={
            "trees": {k: v for k, v in TREES.items() if k != "random_state"},
            "seeds": seeds,
            "points": len(rows),
            "folds": FOLDS,
            "within_1_5x_unflagged_out_of_fold": round(sum(within) / max(1, len(within)), 4),
        },
    )
