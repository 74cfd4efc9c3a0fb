"""Spark fits equal the local fit on the same rows (every booster family, feature columns with
categorical values and missing values, vectors, weights, validation rows), and two Spark fits are
bit-identical. The Spark session is `local[2]` (conftest.py): two ranks, one per partition."""

from __future__ import annotations

import os

import numpy as np
import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pyspark", reason="boostlab.spark needs pip install pyspark")

import boostlab  # noqa: E402
from boostlab import spark as bspark  # noqa: E402

from helpers import REL, assert_same_model  # noqa: E402

pytestmark = pytest.mark.spark

FEATURES = ["a", "b", "c"]

BINARY = [
    (bspark.SparkAdaBoostClassifier, {"max_leaves": 4}),
    (bspark.SparkRealAdaBoostClassifier, {"max_leaves": 8}),
    (bspark.SparkTAdaBoostClassifier, {"t": 0.6, "max_leaves": 4}),
    (bspark.SparkSecBoostClassifier, {"max_leaves": 4, "loss": "logistic"}),
]
MULTI = [
    (bspark.SparkAdaBoostMHClassifier, {"max_leaves": 4}),
    (bspark.SparkAdaBoostMOClassifier, {"max_leaves": 4}),
    (bspark.SparkAdaBoostMRClassifier, {"max_leaves": 4}),
]


def predictions(model, df):
    """(rawPrediction, probability, prediction) of `transform`, as numpy arrays in row order."""
    out = model.transform(df).select("rawPrediction", "probability", "prediction").toPandas()
    raw = np.stack([v.toArray() for v in out["rawPrediction"]])
    proba = np.stack([v.toArray() for v in out["probability"]])
    return raw, proba, np.stack(out["prediction"].to_numpy())


@pytest.mark.parametrize("cls, kw", BINARY + MULTI, ids=[c.__name__ for c, _ in BINARY + MULTI])
def test_every_booster_family_equals_the_local_fit(request, cls, kw):
    pdf, df = request.getfixturevalue("binary" if (cls, kw) in BINARY else "multiclass")
    model = cls(featuresCols=FEATURES, weightCol="w", n_estimators=8, random_state=5, **kw).fit(df)
    local = cls._local_cls(n_estimators=8, random_state=5, **kw).fit(
        pdf[FEATURES], pdf["label"], sample_weight=pdf["w"]
    )
    est = model.to_local()
    # SecBoost solves for its offsets and leveraging coefficients numerically: rounding-level
    # differences in the sums (another summation order) move them by up to ~1e-8 relative.
    rel = 1e-6 if cls is bspark.SparkSecBoostClassifier else REL
    assert_same_model(est, local, rel=rel)
    np.testing.assert_array_equal(est.classes_, local.classes_)
    assert [s["rows"] for s in model.comm_stats_] == [200, 200]
    assert model.comm_stats_[0]["reductions"] >= local.model_.n_trees
    raw, proba, pred = predictions(model, df)
    np.testing.assert_array_equal(pred, local.predict(pdf[FEATURES]))
    np.testing.assert_allclose(proba, local.predict_proba(pdf[FEATURES]), rtol=rel, atol=1e-12)
    d = local.decision_function(pdf[FEATURES])
    np.testing.assert_allclose(raw, np.column_stack([-d, d]) if d.ndim == 1 else d, rtol=rel, atol=1e-12)


def test_two_spark_fits_are_bit_identical(binary):
    _, df = binary
    est = bspark.SparkRealAdaBoostClassifier(featuresCols=FEATURES, weightCol="w", n_estimators=6, max_leaves=8)
    a, b = est.fit(df), est.fit(df)
    assert a.to_local().model_.to_json() == b.to_local().model_.to_json()


def test_vector_features_equal_the_local_fit_on_the_matrix(spark, binary):
    from pyspark.ml.feature import VectorAssembler

    pdf, df = binary
    vdf = VectorAssembler(inputCols=["a", "b"], outputCol="features", handleInvalid="keep").transform(df)
    model = bspark.SparkRealAdaBoostClassifier(n_estimators=6, max_leaves=4).fit(vdf)
    local = boostlab.RealAdaBoostClassifier(n_estimators=6, max_leaves=4).fit(pdf[["a", "b"]].to_numpy(), pdf["label"])
    assert_same_model(model.to_local(), local)
    _, proba, pred = predictions(model, vdf)
    np.testing.assert_array_equal(pred, local.predict(pdf[["a", "b"]].to_numpy()))
    np.testing.assert_allclose(proba, local.predict_proba(pdf[["a", "b"]].to_numpy()), rtol=1e-9)


def test_multilabel_array_labels_equal_the_local_fit(spark):
    from helpers import task_data

    X, Y = task_data("multilabel", n=300)
    import pandas as pd

    pdf = pd.DataFrame(np.asarray(X, dtype=np.float64), columns=[f"f{j}" for j in range(np.shape(X)[1])])
    pdf["label"] = [list(map(float, r)) for r in np.asarray(Y)]
    df = spark.createDataFrame(pdf)
    cols = [c for c in pdf.columns if c != "label"]
    for cls in (bspark.SparkAdaBoostMHClassifier, bspark.SparkAdaBoostMRClassifier):
        model = cls(featuresCols=cols, n_estimators=5, max_leaves=4).fit(df)
        local = cls._local_cls(n_estimators=5, max_leaves=4).fit(pdf[cols], np.asarray(Y))
        assert_same_model(model.to_local(), local)
        _, _, pred = predictions(model, df)
        np.testing.assert_array_equal(pred, local.predict(pdf[cols]))


def test_validation_rows_stop_early_as_the_local_eval_set(binary):
    pdf, df = binary
    kw = {"n_estimators": 40, "max_leaves": 8, "n_iter_no_change": 3}
    model = bspark.SparkRealAdaBoostClassifier(featuresCols=FEATURES, validationIndicatorCol="valid", **kw).fit(df)
    train, held = pdf[~pdf["valid"]], pdf[pdf["valid"]]
    local = boostlab.RealAdaBoostClassifier(**kw).fit(
        train[FEATURES], train["label"], eval_set=[(held[FEATURES], held["label"])]
    )
    est = model.to_local()
    assert local.best_iteration_ is not None and local.model_.n_trees < 40
    assert est.best_iteration_ == local.best_iteration_
    assert_same_model(est, local)
