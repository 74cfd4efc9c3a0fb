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


def test_onnx_refusals_are_clear():
    X, y = _numeric_data(3)
    mo = boostlab.AdaBoostMOClassifier(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="output-code"):
        mo.to_onnx()
    clipped = boostlab.TAdaBoostClassifier(n_estimators=3, t=0.5, clipped=True).fit(X, y > 0)
    with pytest.raises(ValueError, match="clipped"):
        clipped.to_onnx()


def _categorical_splits(est):
    trees = json.loads(est.model_.to_json())["trees"]
    return sum(n.get("rule", {}).get("kind") == "categorical" for t in trees for n in t["nodes"])


CATEGORICAL_CASES = [
    ("real", lambda: boostlab.RealAdaBoostClassifier(n_estimators=15, max_leaves=8), "label"),
    ("adaboost", lambda: boostlab.AdaBoostClassifier(n_estimators=15, max_leaves=6), "label"),
    ("mh", lambda: boostlab.AdaBoostMHClassifier(n_estimators=15, max_leaves=8), "label3"),
]


@pytest.mark.parametrize("name,make,target", CATEGORICAL_CASES, ids=[c[0] for c in CATEGORICAL_CASES])
def test_onnxruntime_on_a_categorical_model_predicts_as_boostlab(frame, name, make, target):
    import onnx
    import onnxruntime as ort

    est = make().fit(frame[FEATURES], frame[target])
    assert _categorical_splits(est) > 0
    proto = est.to_onnx()
    onnx.checker.check_model(proto)
    meta = {p.key: json.loads(p.value) for p in proto.metadata_props}
    assert meta["boostlab.categorical_levels"] == {"c": ["blue", "green", "red"]}
    assert meta["boostlab.feature_names"] == FEATURES
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    test = mixed_frame(300, seed=11)[FEATURES]
    # A level the model never saw is a missing category, in boostlab and in the graph.
    test.loc[test.index[:7], "c"] = "purple"
    test[["a", "b"]] = test[["a", "b"]].astype(np.float32).astype(np.float64)
    X = est.onnx_input(test)
    assert X.dtype == np.float32 and X.shape == (300, 3)
    assert np.isnan(X[:7, 2]).all() and set(np.unique(X[7:, 2][~np.isnan(X[7:, 2])])) == {0.0, 1.0, 2.0}
    label, proba, scores = sess.run(["label", "probabilities", "scores"], {"input": X})
    raw = est._raw_scores(test)
    np.testing.assert_allclose(scores, raw, rtol=0, atol=1e-6 * (1.0 + np.abs(raw).max()))
    np.testing.assert_allclose(proba, est.predict_proba(test), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(est.classes_[label], est.predict(test))
    # −1 and codes past the last level are missing categories too.
    for bad in (-1.0, 3.0, 2.5):
        X_bad = X.copy()
        X_bad[:7, 2] = bad
        np.testing.assert_array_equal(sess.run(["scores"], {"input": X_bad})[0], scores)


def _unused_initializer_warnings(capfd, proto):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 2  # warnings and above
    capfd.readouterr()
    ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    err = capfd.readouterr().err.splitlines()
    return [line for line in err if "initializer" in line.lower() and "not used" in line]


def test_exported_graphs_read_every_initializer(frame, capfd):
    from onnx import TensorProto, helper

    X, y = _numeric_data(3)
    Y = np.stack([y == 0, y == 2], axis=1).astype(int)
    models = [
        boostlab.RealAdaBoostClassifier(n_estimators=4).fit(X, y > 0),
        boostlab.AdaBoostMHClassifier(n_estimators=4).fit(X, y),
        boostlab.AdaBoostMHClassifier(n_estimators=4).fit(X, Y),
        boostlab.RealAdaBoostClassifier(n_estimators=6, max_leaves=8).fit(frame[FEATURES], frame["label"]),
    ]
    assert _categorical_splits(models[-1]) > 0
    for est in models:
        proto = est.to_onnx()
        read = {i for node in proto.graph.node for i in node.input}
        assert [t.name for t in proto.graph.initializer if t.name not in read] == []
        assert _unused_initializer_warnings(capfd, proto) == []
    # The check sees onnxruntime's warning when there is an unused initializer.
    proto.graph.initializer.append(helper.make_tensor("spare", TensorProto.FLOAT, [], [1.0]))
    assert any("spare" in line for line in _unused_initializer_warnings(capfd, proto))


PIPELINE_CASES = [
    ("binary", lambda: boostlab.AdaBoostClassifier(n_estimators=20, max_leaves=4), 2, False),
    ("multiclass", lambda: boostlab.AdaBoostMHClassifier(n_estimators=20, max_leaves=6), 3, True),
]


@pytest.mark.parametrize("name,make,n_classes,strings", PIPELINE_CASES, ids=[c[0] for c in PIPELINE_CASES])
def test_skl2onnx_converts_a_pipeline_with_a_boostlab_estimator(name, make, n_classes, strings):
    import onnxruntime as ort
    import skl2onnx
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _numeric_data(n_classes)
    X = np.nan_to_num(X)  # StandardScaler's graph passes NaN through; kept simple here
    labels = np.array(["low", "mid", "high"])[y] if strings else y
    pipe = Pipeline([("scale", StandardScaler()), ("boost", make())]).fit(X, labels)
    proto = skl2onnx.to_onnx(pipe, X[:1].astype(np.float32))
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    X_test = np.nan_to_num(_numeric_data(n_classes, n=300, seed=11)[0])
    label, proba = sess.run(None, {sess.get_inputs()[0].name: X_test})
    np.testing.assert_array_equal(label, pipe.predict(X_test))
    classes = pipe.classes_
    proba = np.array([[row[c] for c in classes] for row in proba])  # the ZipMap's dicts
    np.testing.assert_allclose(proba, pipe.predict_proba(X_test), rtol=0, atol=1e-6)
    # Without the ZipMap: one probability matrix.
    proto = skl2onnx.to_onnx(pipe, X[:1].astype(np.float32), options={"zipmap": False})
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    label, proba = sess.run(None, {sess.get_inputs()[0].name: X_test})
    np.testing.assert_array_equal(label, pipe.predict(X_test))
    np.testing.assert_allclose(proba, pipe.predict_proba(X_test), rtol=0, atol=1e-6)


@pytest.mark.parametrize("first", ["boostlab", "skl2onnx"])
def test_skl2onnx_knows_boostlab_in_either_import_order(first):
    import subprocess
    import sys

    second = "skl2onnx" if first == "boostlab" else "boostlab"
    code = (
        f"import {first}, {second}\n"
        "from skl2onnx._supported_operators import sklearn_operator_name_map as m\n"
        "print(m[boostlab.AdaBoostMHClassifier], m[boostlab.RealAdaBoostClassifier])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["BoostlabAdaBoostMHClassifier", "BoostlabRealAdaBoostClassifier"]


def test_skl2onnx_refuses_a_multilabel_model():
    import skl2onnx

    X, y = _numeric_data(3)
    Y = np.stack([y == 0, y == 2], axis=1).astype(int)
    est = boostlab.AdaBoostMHClassifier(n_estimators=3).fit(X, Y)
    with pytest.raises(NotImplementedError, match="multi-label"):
        skl2onnx.to_onnx(est, X[:1])


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
