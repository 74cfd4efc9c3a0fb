"""Hostile model files give a clear ValueError from `boostlab.load_model` (never an
abort of the interpreter), and models whose scores are extreme but bounded predict finite
probabilities."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

import boostlab


def _saved(tmp_path, est, X, y):
    est.fit(X, y)
    path = tmp_path / "m.json"
    est.save_model(path)
    return path, json.loads(path.read_text())


def _write(tmp_path, model):
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(model))
    return path


def test_n_outputs_1e12_is_refused(tmp_path):
    X, Y = make_multilabel_classification(n_samples=80, n_classes=3, random_state=0)
    _, m = _saved(tmp_path, boostlab.AdaBoostMHClassifier(n_estimators=3), X, Y)
    m["n_outputs"] = 10**12
    m["trees"], m["alphas"] = [], []
    m["output"]["n_labels"] = 10**12
    with pytest.raises(ValueError, match="n_outputs: 1000000000000 does not match"):
        boostlab.load_model(_write(tmp_path, m)).predict(X)


def test_alpha_and_leaves_1e200_are_refused(tmp_path):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    _, m = _saved(tmp_path, boostlab.RealAdaBoostClassifier(n_estimators=4, max_leaves=3), X, y)
    m["alphas"] = [1e200] * len(m["alphas"])
    for t in m["trees"]:
        t["leaf_values"] = [1e200] * len(t["leaf_values"])
    with pytest.raises(ValueError, match="alphas: the scores can reach"):
        boostlab.load_model(_write(tmp_path, m))


def test_extreme_bounded_scores_give_finite_probabilities(tmp_path):
    rng = np.random.RandomState(1)
    X = rng.normal(size=(120, 3))
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # 3 classes
    for est in (boostlab.AdaBoostMHClassifier(n_estimators=4), boostlab.AdaBoostMOClassifier(n_estimators=4)):
        _, m = _saved(tmp_path, est, X, y)
        n = len(m["alphas"])
        m["alphas"] = [1e299 / n] * n
        for t in m["trees"]:
            t["leaf_values"] = [-1.0] * len(t["leaf_values"])
        p = boostlab.load_model(_write(tmp_path, m)).predict_proba(X)
        assert np.isfinite(p).all(), type(est).__name__
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
