"""A schedule of t over the rounds (`t_schedule`)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

import boostlab


def noisy(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    y = ((X[:, 0] + 0.5 * X[:, 1] > 0.7) ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


def test_t_schedule_records_each_round_and_clips_at_the_last_t():
    X, y = noisy()
    est = boostlab.TAdaBoostClassifier(t_schedule="linear:0.2:0.8", n_estimators=7, max_nodes=7, random_state=1)
    est.fit(X, y)
    # t_j = 0.2 + 0.6 (j - 1)/6, j = 1..7, each round's t in the history.
    ts = np.asarray(est.history_["t"], dtype=float)
    np.testing.assert_allclose(ts, 0.2 + 0.6 * np.arange(7) / 6, rtol=0, atol=1e-15)
    assert ts[0] == 0.2 and ts[-1] == 0.8
    # The clipped model clips at 1/(1 - T1): the training curve's last clipped error is the saved
    # clipped model's.
    clipped = boostlab.TAdaBoostClassifier(
        t_schedule=(0.2, 0.8), clipped=True, n_estimators=7, max_nodes=7, random_state=1
    ).fit(X, y)
    np.testing.assert_array_equal(
        clipped.decision_function(X), np.clip(clipped.decision_function(X), -1 / (1 - 0.8), 1 / (1 - 0.8))
    )
    err = np.mean(clipped.predict(X) != y)
    assert err == pytest.approx(np.asarray(clipped.history_["train_error_clipped"])[-1], abs=1e-12)
    # The tuple and the string give the same model; the clone keeps the schedule.
    tup = boostlab.TAdaBoostClassifier(t_schedule=(0.2, 0.8), n_estimators=7, max_nodes=7, random_state=1).fit(X, y)
    np.testing.assert_array_equal(tup.decision_function(X), est.decision_function(X))
    np.testing.assert_array_equal(tup.estimator_weights_, clipped.estimator_weights_)
    again = clone(clipped).fit(X, y)
    np.testing.assert_array_equal(again.decision_function(X), clipped.decision_function(X))


def test_constant_schedule_is_fixed_t():
    X, y = noisy(250, 3)
    fixed = boostlab.TAdaBoostClassifier(t=0.6, n_estimators=10, max_nodes=7, random_state=2).fit(X, y)
    sched = boostlab.TAdaBoostClassifier(t_schedule="linear:0.6:0.6", n_estimators=10, max_nodes=7, random_state=2)
    sched.fit(X, y)
    np.testing.assert_array_equal(sched.decision_function(X), fixed.decision_function(X))
    np.testing.assert_array_equal(sched.estimator_weights_, fixed.estimator_weights_)


def test_t_schedule_bad_values():
    X, y = noisy(120, 4)
    for bad in ["linear:0:2.5", "cosine:0:1", (0.1,), "linear:0:1:0"]:
        with pytest.raises(ValueError, match="t_schedule"):
            boostlab.TAdaBoostClassifier(t_schedule=bad, n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="t_schedule"):
        boostlab.TAdaBoostClassifier(t="auto", t_schedule="linear:0:1", n_estimators=3).fit(X, y)
