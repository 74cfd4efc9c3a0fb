"""Treelite export: ``treelite.gtil.predict`` on ``to_treelite()`` gives boostlab's raw scores
(and probabilities where Treelite's postprocessors express them), missing values and categorical
splits included; what Treelite cannot express is refused."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import boostlab

from helpers import mixed_frame, numeric_with_missing, threshold_edge_rows

if not os.environ.get("CI"):
    # Under CI, scripts/test.sh installs treelite: a missing one fails the import below.
    pytest.importorskip("treelite", reason="the Treelite export is tested with pip install treelite")
import treelite  # noqa: E402
import treelite.gtil  # noqa: E402

BINARY = [
    ("adaboost", lambda: boostlab.AdaBoostClassifier(n_estimators=25, max_leaves=4)),
    ("real", lambda: boostlab.RealAdaBoostClassifier(n_estimators=25, max_leaves=6)),
    ("t-linear", lambda: boostlab.TAdaBoostClassifier(n_estimators=15, t=0.6, max_leaves=6)),
    ("secboost", lambda: boostlab.SecBoostClassifier(n_estimators=10, max_leaves=4, h0=0.2)),
]

MULTICLASS = [
    ("mh", lambda: boostlab.AdaBoostMHClassifier(n_estimators=20, max_leaves=6)),
    ("mh-discrete", lambda: boostlab.AdaBoostMHClassifier(n_estimators=20, variant="discrete")),
    ("mr", lambda: boostlab.AdaBoostMRClassifier(n_estimators=15, max_leaves=6)),
]


@pytest.mark.parametrize("name,make", BINARY, ids=[c[0] for c in BINARY])
def test_treelite_binary_margins_equal_decision_function_with_missing_values(name, make):
    X, y = numeric_with_missing(2)
    est = make().fit(X, y)
    model = est.to_treelite()
    assert isinstance(model, treelite.Model)
    X_test = numeric_with_missing(2, n=300, seed=11)[0]
    assert np.isnan(X_test).any()
    margin = treelite.gtil.predict(model, X_test, pred_margin=True)
    assert margin.shape == (300, 1, 1)
    assert np.abs(margin[:, 0, 0] - est.decision_function(X_test)).max() <= 1e-6
    # The postprocessor is boostlab's P(+1 | x) = σ(2f).
    proba = treelite.gtil.predict(model, X_test)
    assert np.abs(proba[:, 0, 0] - est.predict_proba(X_test)[:, 1]).max() <= 1e-6


@pytest.mark.parametrize("name,make", MULTICLASS, ids=[c[0] for c in MULTICLASS])
def test_treelite_multiclass_margins_equal_decision_function_with_missing_values(name, make):
    X, y = numeric_with_missing(4)
    est = make().fit(X, y)
    X_test = numeric_with_missing(4, n=300, seed=11)[0]
    margin = treelite.gtil.predict(est.to_treelite(), X_test, pred_margin=True)
    assert margin.shape == (300, 1, 4)
    assert np.abs(margin[:, 0, :] - est.decision_function(X_test)).max() <= 1e-6


def test_treelite_multilabel_margins_and_probabilities_equal_boostlab():
    X, y = numeric_with_missing(3)
    Y = np.column_stack([y == 0, y == 2, np.nan_to_num(X[:, 3]) > 0.2]).astype(int)
    est = boostlab.AdaBoostMHClassifier(n_estimators=20, max_leaves=6).fit(X, Y)
    model = est.to_treelite()
    X_test = numeric_with_missing(3, n=300, seed=11)[0]
    margin = treelite.gtil.predict(model, X_test, pred_margin=True)
    assert margin.shape == (300, 3, 1)
    assert np.abs(margin[:, :, 0] - est.decision_function(X_test)).max() <= 1e-6
    proba = treelite.gtil.predict(model, X_test)
    assert np.abs(proba[:, :, 0] - est.predict_proba(X_test)).max() <= 1e-6


def test_treelite_routes_values_at_a_threshold_as_boostlab():
    X, y = numeric_with_missing(2)
    est = boostlab.RealAdaBoostClassifier(n_estimators=20, max_leaves=6).fit(X, y)
    X_edge = threshold_edge_rows(est, X.shape[1])
    margin = treelite.gtil.predict(est.to_treelite(), X_edge, pred_margin=True)
    assert np.abs(margin[:, 0, 0] - est.decision_function(X_edge)).max() <= 1e-12


def _codes(df, model):
    """The frame as Treelite's input: categorical columns as their level codes (in the model's
    level order), NaN for a missing level."""
    cols = []
    for name, levels in zip(model["schema"]["names"], model["schema"]["levels"]):
        col = df[name]
        if levels is None:
            cols.append(col.to_numpy(dtype=np.float64))
        else:
            index = {level: i for i, level in enumerate(levels)}
            cols.append(np.array([index.get(v, np.nan) for v in col], dtype=np.float64))
    return np.column_stack(cols)


@pytest.mark.parametrize("target,n_out", [("label", 1), ("label3", 3)])
def test_treelite_exports_categorical_splits_as_category_lists(target, n_out):
    df = mixed_frame(240)
    X = df[["a", "b", "c"]]
    cls = boostlab.RealAdaBoostClassifier if n_out == 1 else boostlab.AdaBoostMHClassifier
    est = cls(n_estimators=15, max_leaves=6).fit(X, df[target])
    model = json.loads(est.model_.to_json())
    assert any(n.get("rule", {}).get("kind") == "categorical" for t in model["trees"] for n in t["nodes"])
    X_codes = _codes(X, model)
    assert np.isnan(X_codes[:, 2]).any()
    margin = treelite.gtil.predict(est.to_treelite(), X_codes, pred_margin=True)
    expected = est._raw_scores(X)
    assert np.abs(margin[:, 0, :] - expected).max() <= 1e-6


def test_treelite_export_refuses_output_codes_and_the_clipped_model():
    X, y = numeric_with_missing(3)
    mo = boostlab.AdaBoostMOClassifier(n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="output-code"):
        mo.to_treelite()
    clipped = boostlab.TAdaBoostClassifier(n_estimators=3, t=0.5, clipped=True).fit(X, y > 0)
    with pytest.raises(ValueError, match="clipped"):
        clipped.to_treelite()
