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


CASES = [
    (boostlab.AdaBoostClassifier(n_estimators=20), 2),
    (boostlab.RealAdaBoostClassifier(n_estimators=20, smoothing=0.01), 2),
    (boostlab.TAdaBoostClassifier(n_estimators=20, t=1.0), 2),
    (boostlab.AdaBoostMHClassifier(n_estimators=20, smoothing=0.01), 3),
    (boostlab.AdaBoostMHClassifier(n_estimators=20, variant="discrete"), 3),
    (boostlab.AdaBoostMOClassifier(n_estimators=20, smoothing=0.01), 3),
    (boostlab.AdaBoostMRClassifier(n_estimators=20), 3),
]


@pytest.mark.parametrize("est,k", CASES, ids=lambda c: repr(c) if not isinstance(c, int) else str(c))
def test_integer_weights_are_repetitions(est, k):
    X, y2, y3, sw = _data()
    y = y2 if k == 2 else y3
    repeated = est.fit(X.repeat(sw, axis=0), y.repeat(sw)).decision_function(X)
    weighted = est.fit(X, y, sample_weight=sw).decision_function(X)
    # Sums of the same weights in another order: equal to rounding.
    np.testing.assert_allclose(weighted, repeated, rtol=1e-12, atol=1e-12)
