"""shap export: ``shap.TreeExplainer`` on ``to_shap()`` gives boostlab's exact TreeSHAP
contributions (`predict_contrib`), missing values included; what shap cannot express is refused."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import boostlab
from boostlab._export import to_shap

from helpers import mixed_frame, numeric_with_missing, threshold_edge_rows

if not os.environ.get("CI"):
    # Under CI, scripts/test.sh installs shap: a missing one fails the import below.
    pytest.importorskip("shap", reason="the shap export is tested with pip install shap")
import shap  # noqa: E402


def _multilabel(n=400, seed=5):
    X, y = numeric_with_missing(3, n, seed)
    Y = np.column_stack([y == 0, y == 2, np.nan_to_num(X[:, 3]) > 0.2]).astype(int)
    return X, Y


CASES = [
    ("adaboost", lambda: boostlab.AdaBoostClassifier(n_estimators=25, max_leaves=4), 2),
    ("real", lambda: boostlab.RealAdaBoostClassifier(n_estimators=25, max_leaves=6), 2),
    ("t-linear", lambda: boostlab.TAdaBoostClassifier(n_estimators=15, t=0.6, max_leaves=6), 2),
    ("secboost", lambda: boostlab.SecBoostClassifier(n_estimators=10, max_leaves=4, h0=0.2), 2),
    ("mh", lambda: boostlab.AdaBoostMHClassifier(n_estimators=20, max_leaves=6), 4),
    ("mh-multilabel", lambda: boostlab.AdaBoostMHClassifier(n_estimators=20, max_leaves=6), None),
    ("mr", lambda: boostlab.AdaBoostMRClassifier(n_estimators=15, max_leaves=6), 3),
    ("mo", lambda: boostlab.AdaBoostMOClassifier(n_estimators=15, max_leaves=6), 3),
]


def _fit(make, n_classes):
    X, y = _multilabel() if n_classes is None else numeric_with_missing(n_classes)
    return make().fit(X, y), X


@pytest.mark.parametrize("name,make,n_classes", CASES, ids=[c[0] for c in CASES])
def test_shap_values_equal_predict_contrib_with_missing_values(name, make, n_classes):
    est, X = _fit(make, n_classes)
    X_test = numeric_with_missing(3, n=300, seed=11)[0]
    assert np.isnan(X_test).any()
    explainer = shap.TreeExplainer(est.to_shap())
    values = explainer.shap_values(X_test)
    phi = est.predict_contrib(X_test)
    assert values.shape == phi[:, :-1].shape
    assert np.abs(values - phi[:, :-1]).max() <= 1e-9
    # The expected value is the bias column (the expected score under the covers).
    expected = np.asarray(explainer.expected_value, dtype=np.float64)
    assert np.abs(expected - phi[0, -1]).max() <= 1e-9
    # shap's own prediction of the exported trees is boostlab's raw score.
    raw = est._raw_scores(X_test)
    pred = explainer.model.predict(X_test).reshape(raw.shape)
    assert np.abs(pred - raw).max() <= 1e-9


def test_shap_export_routes_values_at_a_threshold_as_boostlab():
    """x ≤ threshold goes left in both: rows exactly at, just above and just below every
    threshold get boostlab's scores and contributions."""
    X, y = numeric_with_missing(2)
    est = boostlab.RealAdaBoostClassifier(n_estimators=20, max_leaves=6).fit(X, y)
    X_edge = threshold_edge_rows(est, X.shape[1])
    explainer = shap.TreeExplainer(est.to_shap())
    np.testing.assert_array_equal(explainer.model.predict(X_edge), est.decision_function(X_edge))
    assert np.abs(explainer.shap_values(X_edge) - est.predict_contrib(X_edge)[:, :-1]).max() <= 1e-9


def test_shap_export_folds_alpha_into_the_values_and_offsets_by_the_constant():
    X, y = numeric_with_missing(2)
    est = boostlab.SecBoostClassifier(n_estimators=6, max_leaves=4, h0=0.2).fit(X, y)
    model = json.loads(est.model_.to_json())
    d = est.to_shap()
    assert d["base_offset"] == model["base_score"] == 0.2
    assert d["tree_output"] == "raw_value"
    assert len(d["trees"]) == len(model["trees"])
    for tree, alpha, out in zip(model["trees"], model["alphas"], d["trees"]):
        for i, node in enumerate(tree["nodes"]):
            if node["type"] == "leaf":
                assert out["values"][i, 0] == alpha * tree["leaf_values"][node["leaf"]]
                assert out["children_left"][i] == -1
            else:
                rule = node["rule"]
                default = node["left"] if rule["missing_left"] else node["right"]
                assert out["children_default"][i] == default
                assert out["thresholds"][i] == rule["threshold"]
        np.testing.assert_array_equal(out["node_sample_weight"], tree["covers"])


def test_shap_export_refuses_categorical_splits():
    df = mixed_frame(240)
    est = boostlab.RealAdaBoostClassifier(n_estimators=15, max_leaves=6).fit(df[["a", "b", "c"]], df["label"])
    trees = json.loads(est.model_.to_json())["trees"]
    assert any(n.get("rule", {}).get("kind") == "categorical" for t in trees for n in t["nodes"])
    with pytest.raises(ValueError, match="categorical feature 'c'"):
        est.to_shap()


def test_shap_export_refuses_the_clipped_t_adaboost_model():
    X, y = numeric_with_missing(2)
    est = boostlab.TAdaBoostClassifier(n_estimators=3, t=0.5, clipped=True).fit(X, y)
    with pytest.raises(ValueError, match="clipped"):
        est.to_shap()


def test_shap_export_refuses_a_model_without_covers():
    X, y = numeric_with_missing(2)
    est = boostlab.AdaBoostClassifier(n_estimators=3).fit(X, y)
    model = json.loads(est.model_.to_json())
    for tree in model["trees"]:
        del tree["covers"]
    with pytest.raises(ValueError, match="no node covers"):
        to_shap(model)
