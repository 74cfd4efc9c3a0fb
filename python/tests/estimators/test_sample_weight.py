"""Integer sample weights are repeated rows, and weight 0 a removed row, wherever the algorithm
makes them so (data without tied splits, so that rounding cannot pick another split)."""

from __future__ import annotations

import numpy as np
import pytest

import boostlab


def _data():
    rng = np.random.RandomState(0)
    n = 60
    X = rng.rand(n, 3)
    y2 = (X[:, 0] + X[:, 1] + 0.3 * rng.randn(n) > 1).astype(int)
    y3 = np.digitize(X[:, 0] + 0.2 * rng.randn(n), [0.33, 0.66])
    sw = rng.randint(0, 5, size=n)
    return X, y2, y3, sw


# Every estimator with its defaults (the smoothing ε = 1/(2m) counts m = Σ w), and a few other
# settings (sample weights are frequency weights, everywhere).
CASES = [
    (boostlab.AdaBoostClassifier(n_estimators=20), 2),
    (boostlab.TAdaBoostClassifier(n_estimators=20, t=0.6, max_nodes=7, authors_mode=True), 2),
    (boostlab.RealAdaBoostClassifier(n_estimators=20), 2),
    (boostlab.RealAdaBoostClassifier(n_estimators=20, smoothing=0.01), 2),
    (boostlab.TAdaBoostClassifier(n_estimators=20), 2),
    (boostlab.TAdaBoostClassifier(n_estimators=20, t=0.0, max_leaves=4), 2),
    (boostlab.TAdaBoostClassifier(n_estimators=20, t=1.0), 2),
    (boostlab.TAdaBoostClassifier(n_estimators=20, t=1.5), 2),
    (boostlab.SecBoostClassifier(n_estimators=20, loss="exponential"), 2),
    (boostlab.SecBoostClassifier(n_estimators=20), 2),
    (boostlab.AdaBoostMHClassifier(n_estimators=20), 3),
    (boostlab.AdaBoostMHClassifier(n_estimators=20, variant="discrete"), 3),
    (boostlab.AdaBoostMOClassifier(n_estimators=20), 3),
    (boostlab.AdaBoostMOClassifier(n_estimators=20, code="exhaustive", variant="discrete"), 3),
    (boostlab.AdaBoostMRClassifier(n_estimators=20), 3),
]


def _rtol(est):
    # SecBoost's closed-form α for β-smooth losses (logistic, the default) carries the last-bit
    # difference of η, which the secant weights of later rounds amplify (measured ≈ 1e-11;
    # crates/boostlab/tests/sample_weights.rs).
    if isinstance(est, boostlab.SecBoostClassifier) and est.loss == "logistic":
        return 1e-9
    return 1e-12


@pytest.mark.parametrize("est,k", CASES, ids=lambda c: repr(c) if not isinstance(c, int) else str(c))
def test_integer_weights_are_repetitions(est, k):
    X, y2, y3, sw = _data()
    y = y2 if k == 2 else y3
    repeated = est.fit(X.repeat(sw, axis=0), y.repeat(sw)).decision_function(X)
    hist_repeated = est.history_
    weighted = est.fit(X, y, sample_weight=sw).decision_function(X)
    # Sums of the same weights in another order: equal to rounding.
    np.testing.assert_allclose(weighted, repeated, rtol=_rtol(est), atol=1e-12)
    # The per-round training errors (or losses) count repeated rows.
    key = next(k for k in ("train_error", "hamming_loss", "ranking_loss") if k in hist_repeated)
    np.testing.assert_allclose(
        np.asarray(est.history_[key]), np.asarray(hist_repeated[key]), rtol=1e-9, atol=1e-12
    )


def test_weights_on_one_class_are_refused():
    X, y2, _, _ = _data()
    sw = (y2 == 1).astype(float)
    with pytest.raises(ValueError, match="positive on one class only"):
        boostlab.AdaBoostClassifier(n_estimators=3).fit(X, y2, sample_weight=sw)
