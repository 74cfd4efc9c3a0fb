"""Spark models: persistence round trip, conversion to and from the local estimator, and use
inside pyspark.ml's Pipeline, CrossValidator and TrainValidationSplit."""

from __future__ import annotations

import os

import numpy as np
import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pyspark", reason="boostlab.spark needs pip install pyspark")

import boostlab  # noqa: E402
from boostlab import spark as bspark  # noqa: E402

pytestmark = pytest.mark.spark

FEATURES = ["a", "b", "c"]


def _rows(model, df):
    out = model.transform(df).select("rawPrediction", "probability", "prediction").toPandas()
    return (
        np.stack([v.toArray() for v in out["rawPrediction"]]),
        np.stack([v.toArray() for v in out["probability"]]),
        out["prediction"].to_numpy(),
    )


def test_saved_model_loads_with_the_same_predictions_and_parameters(binary, tmp_path):
    _, df = binary
    model = bspark.SparkAdaBoostMOClassifier(featuresCols=FEATURES, n_estimators=5, max_leaves=4).fit(df)
    path = str(tmp_path / "model")
    model.write().overwrite().save(path)
    back = bspark.SparkAdaBoostMOClassificationModel.load(path)
    assert back.to_local().model_.to_json() == model.to_local().model_.to_json()
    assert back.getOrDefault("featuresCols") == FEATURES
    assert back.getOrDefault("n_estimators") == 5
    assert back.to_local().get_params()["max_leaves"] == 4
    for a, b in zip(_rows(back, df), _rows(model, df)):
        np.testing.assert_array_equal(a, b)


def test_saved_estimator_loads_with_its_parameters(tmp_path):
    est = bspark.SparkSecBoostClassifier(loss="exponential", n_estimators=7, featuresCols=FEATURES, numWorkers=2)
    est.write().overwrite().save(str(tmp_path / "est"))
    back = bspark.SparkSecBoostClassifier.load(str(tmp_path / "est"))
    assert (back.getOrDefault("loss"), back.getOrDefault("n_estimators")) == ("exponential", 7)
    assert back.getOrDefault("featuresCols") == FEATURES and back.getOrDefault("numWorkers") == 2


def test_model_from_a_local_fit_predicts_as_the_local_estimator(binary):
    pdf, df = binary
    local = boostlab.TAdaBoostClassifier(n_estimators=6, t=0.5, max_leaves=4).fit(pdf[FEATURES], pdf["label"])
    model = bspark.SparkTAdaBoostClassificationModel.from_local(local, featuresCols=FEATURES)
    assert model.to_local() is local
    assert model.getOrDefault("t") == 0.5
    _, proba, pred = _rows(model, df)
    np.testing.assert_array_equal(pred, local.predict(pdf[FEATURES]))
    np.testing.assert_allclose(proba, local.predict_proba(pdf[FEATURES]), rtol=1e-12)
    with pytest.raises(TypeError, match="takes a fitted TAdaBoostClassifier"):
        bspark.SparkTAdaBoostClassificationModel.from_local(boostlab.AdaBoostClassifier())


def test_pipeline_cross_validator_and_train_validation_split_choose_and_refit(binary, tmp_path):
    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.evaluation import BinaryClassificationEvaluator
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.tuning import CrossValidator, ParamGridBuilder, TrainValidationSplit

    pdf, df = binary
    est = bspark.SparkRealAdaBoostClassifier(max_leaves=4, numWorkers=2)
    pipe = Pipeline(stages=[VectorAssembler(inputCols=["a", "b"], outputCol="features", handleInvalid="keep"), est])
    grid = ParamGridBuilder().addGrid(est.n_estimators, [2, 6]).build()
    evaluator = BinaryClassificationEvaluator()
    cv = CrossValidator(estimator=pipe, estimatorParamMaps=grid, evaluator=evaluator, numFolds=2, seed=1).fit(df)
    assert len(cv.avgMetrics) == 2 and all(0.5 < m <= 1 for m in cv.avgMetrics)
    best = cv.bestModel.stages[-1]
    assert best.getOrDefault("n_estimators") == [2, 6][int(np.argmax(cv.avgMetrics))]
    # The refit on all the rows is the local fit on them.
    local = boostlab.RealAdaBoostClassifier(n_estimators=best.getOrDefault("n_estimators"), max_leaves=4).fit(
        pdf[["a", "b"]].to_numpy(), pdf["label"]
    )
    assert best.to_local().model_.n_trees == local.model_.n_trees
    np.testing.assert_allclose(best.to_local().estimator_weights_, local.estimator_weights_, rtol=1e-9)
    # The fitted pipeline saves and loads with the boostlab stage in it.
    cv.bestModel.write().overwrite().save(str(tmp_path / "pipeline"))
    back = PipelineModel.load(str(tmp_path / "pipeline"))
    np.testing.assert_array_equal(_rows(back, df)[1], _rows(cv.bestModel, df)[1])
    one = ParamGridBuilder().addGrid(est.n_estimators, [3]).build()
    tvs = TrainValidationSplit(estimator=pipe, estimatorParamMaps=one, evaluator=evaluator, trainRatio=0.7, seed=1)
    tvs_model = tvs.fit(df)
    assert 0.5 < tvs_model.validationMetrics[0] <= 1
    assert tvs_model.bestModel.stages[-1].to_local().model_.n_trees == 3
