"""The estimators' API: errors, a failed fit, diagnostics, staged prediction, the GIL, model
selection."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV, cross_val_score

import boostlab

from helpers import ALL_ESTIMATORS

ALL = ALL_ESTIMATORS


def test_core_errors_are_value_errors_with_the_core_message(cancer):
    X, y = cancer
    with pytest.raises(ValueError, match=r"invalid parameter `t`: expected a temperature in \[0, 2\), got 2.5"):
        boostlab.TAdaBoostClassifier(t=2.5).fit(X, y)
    with pytest.raises(ValueError, match="invalid parameter `n_estimators`: expected an integer ≥ 1, got 0"):
        boostlab.AdaBoostClassifier(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="max_bins"):
        boostlab.AdaBoostClassifier(max_bins=1).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        boostlab.SecBoostClassifier(loss="spring:Q=-1").fit(X, y)
    with pytest.raises(ValueError, match="code"):
        boostlab.AdaBoostMOClassifier(code="random:0").fit(*load_iris(return_X_y=True))
    with pytest.raises(ValueError, match="only one class"):
        boostlab.AdaBoostMHClassifier().fit(X, np.zeros(len(X)))


def test_a_failed_fit_leaves_the_estimator_unfitted(cancer):
    from sklearn.exceptions import NotFittedError

    est = boostlab.TAdaBoostClassifier(t=5.0)
    with pytest.raises(ValueError):
        est.fit(*cancer)
    with pytest.raises(NotFittedError):
        est.predict(cancer[0])
    assert "Model(algorithm='t-adaboost', task='binary', n_features=30, n_trees=3)" == repr(
        est.set_params(t=0.5, n_estimators=3).fit(*cancer).model_
    )


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_history_weights_and_staged_predictions(cls, cancer):
    X, y = cancer
    est = cls(n_estimators=12, max_leaves=4).fit(X, y)
    h = est.history_
    n_trees = est.model_.n_trees
    assert len(est.estimator_weights_) == n_trees
    assert list(h["round"])[:n_trees] == list(range(1, n_trees + 1))
    np.testing.assert_array_equal(np.asarray(h["alpha"])[:n_trees], est.estimator_weights_)
    stages = list(est.staged_decision_function(X))
    assert len(stages) == n_trees
    np.testing.assert_array_equal(stages[-1], est.decision_function(X))
    np.testing.assert_array_equal(list(est.staged_predict(X))[-1], est.predict(X))
    np.testing.assert_array_equal(list(est.staged_predict_proba(X))[-1], est.predict_proba(X))
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X))


def test_history_without_pandas_is_a_dict(monkeypatch, cancer):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    est = boostlab.AdaBoostClassifier(n_estimators=5).fit(*cancer)
    assert isinstance(est.history_, dict)
    assert est.history_["round"] == [1, 2, 3, 4, 5]
    assert est.history_["stop_reason"] == [None] * 5


def test_grid_search_over_t(cancer):
    X, y = cancer
    grid = GridSearchCV(
        boostlab.TAdaBoostClassifier(n_estimators=20, max_leaves=4), {"t": [0.2, 0.6, 1.0]}, cv=3
    ).fit(X, y)
    assert grid.best_params_["t"] in (0.2, 0.6, 1.0)
    scores = grid.cv_results_["mean_test_score"]
    assert np.all(scores > 0.85) and len(set(scores)) > 1
    assert grid.best_estimator_.t == grid.best_params_["t"]


def test_cross_val_score(cancer):
    scores = cross_val_score(boostlab.TAdaBoostClassifier(t=0.8, n_estimators=30), *cancer, cv=5)
    assert scores.mean() > 0.9


def test_training_releases_the_gil():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(20_000, 20))
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(size=len(X)) > 1).astype(int)
    est = boostlab.RealAdaBoostClassifier(n_estimators=150, max_leaves=16)
    done = threading.Event()

    def train():
        est.fit(X, y)
        done.set()

    worker = threading.Thread(target=train)
    start = time.perf_counter()
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1  # only runs while the worker does not hold the GIL
        time.sleep(0.001)
    worker.join()
    elapsed = time.perf_counter() - start
    # With the GIL held for the whole fit this loop could not have run during it.
    assert elapsed > 0.05 and ticks > 10, (elapsed, ticks)
