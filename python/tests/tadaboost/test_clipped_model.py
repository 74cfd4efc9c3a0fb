"""t-AdaBoost's clipped model: the scores clipped to [−δ, δ] after every tree."""

from __future__ import annotations

import numpy as np
import pytest

import boostlab


def test_t_adaboost_clipped_model(cancer):
    X, y = cancer
    est = boostlab.TAdaBoostClassifier(n_estimators=40, t=0.3, max_leaves=6, clipped=True).fit(X, y)
    delta = 1.0 / 0.7  # δ = 1/(1 − t)
    assert est.clip_ == pytest.approx(delta)
    clipped = est.decision_function(X)
    # Reference: clip after every tree, S_t = clip(S_{t−1} + α_t h_t, [−δ, δ]), from the linear stages.
    linear = [np.zeros(len(X))] + list(est.set_params(clipped=False).staged_decision_function(X))
    s = np.zeros(len(X))
    for prev, cur in zip(linear, linear[1:]):
        s = np.clip(s + (cur - prev), -delta, delta)
    np.testing.assert_allclose(clipped, s, rtol=0, atol=1e-12)
    assert np.abs(clipped).max() <= delta
    for stage in est.set_params(clipped=True).staged_decision_function(X):
        assert np.abs(stage).max() <= delta
