"""ONNX export: onnxruntime predicts what boostlab predicts; what cannot be exported is refused clearly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import boostlab

from helpers import mixed_frame

FEATURES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def frame():
    return mixed_frame(240)


ONNX_CASES = [
    ("real", lambda: boostlab.RealAdaBoostClassifier(n_estimators=15, max_leaves=6), 2),
    ("adaboost", lambda: boostlab.AdaBoostClassifier(n_estimators=15, max_leaves=4), 2),
    ("t", lambda: boostlab.TAdaBoostClassifier(n_estimators=10, t=0.6, max_leaves=6), 2),
    ("secboost", lambda: boostlab.SecBoostClassifier(n_estimators=8, max_leaves=4, h0=0.2), 2),
    ("mh", lambda: boostlab.AdaBoostMHClassifier(n_estimators=15, max_leaves=6), 4),
    ("mh-discrete", lambda: boostlab.AdaBoostMHClassifier(n_estimators=15, variant="discrete"), 3),
]


def _numeric_data(n_classes, n=400, seed=3):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 5)).astype(np.float32)
    X[rng.rand(n, 5) < 0.1] = np.nan  # missing values take each split's missing direction
    score = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) - np.isnan(X[:, 2]) + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


@pytest.mark.parametrize("name,make,n_classes", ONNX_CASES, ids=[c[0] for c in ONNX_CASES])
def test_onnxruntime_predicts_as_boostlab(name, make, n_classes):
    import onnx
    import onnxruntime as ort

    X, y = _numeric_data(n_classes)
    est = make().fit(X, y)
    proto = est.to_onnx()
    assert isinstance(proto, onnx.ModelProto)
    onnx.checker.check_model(proto)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    X_test, _ = _numeric_data(n_classes, n=300, seed=11)
    label, proba, scores = sess.run(["label", "probabilities", "scores"], {"input": X_test})
    # boostlab on the same float32 values (as float64).
    X64 = X_test.astype(np.float64)
    raw = est._raw_scores(X64)
    scale = 1.0 + np.abs(raw).max()
    np.testing.assert_allclose(scores, raw, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(proba, est.predict_proba(X64), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(est.classes_[label], est.predict(X64))
    assert np.isnan(X_test).any()


def test_onnx_refusals_are_clear(frame):
    X, y = _numeric_data(3)
    mo = boostlab.AdaBoostMOClassifier(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="output-code"):
        mo.to_onnx()
    clipped = boostlab.TAdaBoostClassifier(n_estimators=3, t=0.5, clipped=True).fit(X, y > 0)
    with pytest.raises(ValueError, match="clipped"):
        clipped.to_onnx()
    cat = boostlab.RealAdaBoostClassifier(n_estimators=5, max_leaves=8).fit(frame[FEATURES], frame["label"])
    trees = json.loads(cat.model_.to_json())["trees"]
    if any(n.get("rule", {}).get("kind") == "categorical" for t in trees for n in t["nodes"]):
        with pytest.raises(ValueError, match="categorical"):
            cat.to_onnx()


def test_onnx_multilabel_labels_and_probabilities():
    import onnxruntime as ort

    X, y = _numeric_data(3)
    Y = np.stack([y == 0, y == 2, np.nan_to_num(X[:, 3]) > 0], axis=1).astype(int)
    est = boostlab.AdaBoostMHClassifier(n_estimators=10, max_leaves=4).fit(X, Y)
    sess = ort.InferenceSession(est.to_onnx().SerializeToString(), providers=["CPUExecutionProvider"])
    label, proba, scores = sess.run(["label", "probabilities", "scores"], {"input": X})
    X64 = X.astype(np.float64)
    np.testing.assert_array_equal(label, est.predict(X64))
    np.testing.assert_allclose(proba, est.predict_proba(X64), rtol=0, atol=1e-6)
