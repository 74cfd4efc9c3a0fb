"""Multi-label targets (a 0/1 indicator matrix, dense, sparse or lists) and AdaBoost.MR's learned
label-set threshold."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification

import boostlab

from helpers import core_model


def test_multilabel_targets():

    X, Y = make_multilabel_classification(n_samples=150, n_classes=4, random_state=0)
    for cls in (boostlab.AdaBoostMHClassifier, boostlab.AdaBoostMRClassifier):
        est = cls(n_estimators=30, max_leaves=4).fit(X, Y)
        assert est.model_.task == "multilabel"
        np.testing.assert_array_equal(est.classes_, np.arange(4))
        pred = est.predict(X)
        assert pred.shape == Y.shape and pred.dtype == Y.dtype
        # MH predicts {ℓ : f > 0}; MR {ℓ : f > θ} with θ learned on the training data.
        theta = getattr(est, "label_threshold_", None) or 0.0
        if cls is boostlab.AdaBoostMRClassifier:
            assert est.label_threshold_ is not None
        np.testing.assert_array_equal(pred, (est.decision_function(X) > theta).astype(Y.dtype))
        assert est.predict_proba(X).shape == Y.shape
        assert est.score(X, Y) > 0.3  # subset accuracy
        # The same from a sparse indicator matrix and from lists.
        assert core_model(cls(n_estimators=30, max_leaves=4).fit(X, sp.csr_matrix(Y))) == core_model(est)
        assert core_model(cls(n_estimators=30, max_leaves=4).fit(X, Y.tolist())) == core_model(est)
    with pytest.raises(ValueError, match="1d array"):
        boostlab.AdaBoostClassifier().fit(X, Y)


def test_mr_label_sets_use_the_learned_threshold():
    rng = np.random.default_rng(7)
    X = rng.random((300, 3))
    Y = np.column_stack([(X[:, j] > 0.6) | (rng.random(300) < 0.05) for j in range(3)]).astype(int)
    mr = boostlab.AdaBoostMRClassifier(n_estimators=30, max_leaves=4, random_state=0).fit(X, Y)
    theta = mr.label_threshold_
    assert theta is not None and np.isfinite(theta)
    S = mr.decision_function(X)
    np.testing.assert_array_equal(mr.predict(X), (S > theta).astype(int))
    # The learned θ has the lowest training Hamming loss among all thresholds (brute force).
    s = np.unique(S)
    cands = np.concatenate([[s[0] - 1, s[-1] + 1], (s[1:] + s[:-1]) / 2])
    best = min(np.mean((S > c) != Y) for c in cands)
    assert np.mean((S > theta) != Y) == pytest.approx(best, abs=1e-12)
    zero = boostlab.AdaBoostMRClassifier(n_estimators=30, max_leaves=4, random_state=0, label_threshold="zero")
    zero.fit(X, Y)
    assert zero.label_threshold_ is None
    np.testing.assert_array_equal(zero.predict(X), (S > 0).astype(int))
    with pytest.raises(ValueError, match="label_threshold"):
        boostlab.AdaBoostMRClassifier(label_threshold="half").fit(X, Y)
