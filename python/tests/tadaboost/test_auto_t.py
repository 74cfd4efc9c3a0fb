"""t = "auto" chooses t-AdaBoost's temperature by inner cross-validation; t-AdaBoost
forbids pure leaves by default."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import clone

import boostlab


def noisy(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    y = ((X[:, 0] + 0.5 * X[:, 1] > 0.7) ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


def test_auto_t_records_the_choice_and_equals_the_refit():
    X, y = noisy()
    est = boostlab.TAdaBoostClassifier(
        t="auto", t_grid=[0.0, 0.5, 1.0], t_folds=4, n_estimators=8, max_nodes=7, random_state=3
    ).fit(X, y)
    sel = est.t_selection_
    assert sel["grid"] == [0.0, 0.5, 1.0] and sel["folds"] == 4
    assert len(sel["scores"]) == 3 and all(0.0 <= s <= 1.0 for s in sel["scores"])
    # The lowest inner error wins, ties to the first in the grid.
    assert sel["t"] == sel["grid"][int(np.argmin(sel["scores"]))]
    fixed = boostlab.TAdaBoostClassifier(t=sel["t"], n_estimators=8, max_nodes=7, random_state=3).fit(X, y)
    np.testing.assert_array_equal(est.decision_function(X), fixed.decision_function(X))
    assert fixed.t_selection_ is None
    # Cloning keeps t = "auto" and the search; a refit chooses again, alike.
    again = clone(est).fit(X, y)
    assert again.t_selection_ == sel


def test_auto_t_default_grid_and_bad_values():
    X, y = noisy(120, 1)
    est = boostlab.TAdaBoostClassifier(t="auto", n_estimators=3, max_nodes=3).fit(X, y)
    assert est.t_selection_["grid"] == [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0]
    assert est.t_selection_["folds"] == 3
    with pytest.raises(ValueError, match="t_grid"):
        boostlab.TAdaBoostClassifier(t=0.5, t_grid=[0.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="auto_t.grid"):
        boostlab.TAdaBoostClassifier(t="auto", t_grid=[0.0, 2.5]).fit(X, y)
    with pytest.raises(ValueError, match="t_folds"):
        boostlab.TAdaBoostClassifier(t="auto", t_folds=1).fit(X, y)
    with pytest.raises(ValueError):
        boostlab.TAdaBoostClassifier(t="warm").fit(X, y)


def test_t_adaboost_forbids_pure_leaves_by_default():
    X, y = noisy(200, 2)
    est = boostlab.TAdaBoostClassifier(t=1.0, n_estimators=5, max_nodes=15).fit(X, y)
    src = json.loads(est.model_.param_sources_json)
    assert src["tree.pure_leaves"] == {"value": "forbid", "source": "default"}
    forbid = boostlab.TAdaBoostClassifier(t=1.0, n_estimators=5, max_nodes=15, pure_leaves="forbid").fit(X, y)
    np.testing.assert_array_equal(est.decision_function(X), forbid.decision_function(X))
