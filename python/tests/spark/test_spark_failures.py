"""Faults and wrong input: a killed task fails the fit with an error naming the rank, and the next
fit is clean; wrong columns, types, a single class or vectors of different sizes fail with a
clear error before any task of the training stage starts."""

from __future__ import annotations

import os
import time

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pyspark", reason="boostlab.spark needs pip install pyspark")

import boostlab  # noqa: E402
from boostlab import spark as bspark  # noqa: E402

from helpers import assert_same_model  # noqa: E402

pytestmark = pytest.mark.spark

FEATURES = ["a", "b", "c"]
FAULT = "BOOSTLAB_SPARK_TEST_FAULT"


def _listening(spark):
    """boostlab's listening sockets open in the Python workers that run two tasks now."""

    def count(_):
        from boostlab import _collective

        yield _collective.LISTENING[0]

    return sum(spark.sparkContext.parallelize(range(2), 2).mapPartitions(count).collect())


def _jobs(spark, group, fn):
    """Runs `fn` in the job group `group`; returns (its exception or None, the number of jobs it
    ran)."""
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        fn()
        err = None
    except Exception as e:  # noqa: BLE001 - returned to the test
        err = e
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return err, len(sc.statusTracker().getJobIdsForGroup(group))


def _killed_fit(spark, est, df, phase):
    """`est.fit(df)` with rank 1's process killed when it reaches `phase`: the error's message."""
    env = spark.sparkContext.environment
    env[FAULT] = f"1:{phase}"
    t0 = time.monotonic()
    try:
        with pytest.raises(bspark.SparkFitError, match=r"rank 1") as info:
            est.fit(df)
    finally:
        del env[FAULT]
    message = str(info.value)
    # Noticed at once, not by the timeout: rank 1's loss as Spark reports it, or rank 0's error
    # naming rank 1 (its connection closed) and the phase.
    assert "exited unexpectedly" in message or ("lost the connection" in message and phase in message), message
    assert time.monotonic() - t0 < 60
    assert _listening(spark) == 0
    return message


def test_killed_task_fails_the_fit_naming_the_rank_and_the_next_fit_is_clean(spark, binary):
    pdf, df = binary
    est = bspark.SparkRealAdaBoostClassifier(featuresCols=FEATURES, n_estimators=6, max_leaves=4, timeout=120)
    _killed_fit(spark, est, df, "training")
    # A new fit: a new stage, a new rendezvous, nothing left of the failed one.
    model = est.fit(df)
    local = boostlab.RealAdaBoostClassifier(n_estimators=6, max_leaves=4).fit(pdf[FEATURES], pdf["label"])
    assert_same_model(model.to_local(), local)


def test_task_killed_while_binning_fails_the_fit_naming_the_rank(spark, binary):
    _, df = binary
    est = bspark.SparkRealAdaBoostClassifier(featuresCols=FEATURES, n_estimators=6, timeout=120)
    _killed_fit(spark, est, df, "binning")


def test_a_rank_that_stops_answering_fails_the_fit_within_the_timeout(spark, binary):
    _, df = binary
    est = bspark.SparkRealAdaBoostClassifier(featuresCols=FEATURES, n_estimators=6, timeout=3)
    env = spark.sparkContext.environment
    env[FAULT] = "1:hang"
    t0 = time.monotonic()
    try:
        with pytest.raises(bspark.SparkFitError, match=r"rank 1 .*did not answer .*timeout=3 s"):
            est.fit(df)
    finally:
        del env[FAULT]
    assert time.monotonic() - t0 < 30
    assert _listening(spark) == 0


def _bad(spark, pdf):
    import pandas as pd

    base = spark.createDataFrame(pdf)
    one_class = spark.createDataFrame(pdf.assign(label=1.0))
    ragged = pd.DataFrame({"features": [[1.0, 2.0], [1.0], [0.0, 1.0]], "label": [0.0, 1.0, 0.0]})
    return base, one_class, spark.createDataFrame(ragged)


def test_wrong_input_fails_before_any_training_task(spark, binary):
    pdf, _ = binary
    base, one_class, ragged = _bad(spark, pdf)
    from pyspark.sql import functions as F

    cases = [
        # (DataFrame, estimator parameters, error, whether it needs the data: else no job runs).
        # Every error is a ValueError raised on the driver: an error of a training task would be
        # a SparkFitError.
        (base, {"featuresCols": ["a", "nope"]}, "featuresCols: column 'nope': no such column", False),
        (base, {"featuresCols": FEATURES, "labelCol": "y"}, "labelCol 'y': no such column", False),
        (base.withColumn("d", F.array(F.lit("x"))), {"featuresCols": ["a", "d"]},
         "column 'd' has type array<string>: numeric, boolean or string", False),
        (base.withColumn("label", F.col("c")), {"featuresCols": ["a"]}, "labelCol 'label' has type string", False),
        (base, {"featuresCols": FEATURES, "n_estimators": 0}, "n_estimators", False),
        (base, {"featuresCols": FEATURES, "n_iter_no_change": 2}, "set validationIndicatorCol", False),
        (one_class, {"featuresCols": FEATURES}, "has one class", True),
        (ragged, {}, "the vectors have different sizes", True),
    ]
    for i, (df, kw, message, facts) in enumerate(cases):
        est = bspark.SparkRealAdaBoostClassifier(n_estimators=kw.pop("n_estimators", 3), **kw)
        err, ran = _jobs(spark, f"boostlab-bad-{i}", lambda est=est, df=df: est.fit(df))
        assert isinstance(err, ValueError) and message in str(err), (message, err)
        assert facts or ran == 0, (message, ran)


def test_binary_booster_refuses_three_classes_before_training(spark, multiclass):
    _, df = multiclass
    est = bspark.SparkAdaBoostClassifier(featuresCols=FEATURES, n_estimators=3)
    err, ran = _jobs(spark, "boostlab-three", lambda: est.fit(df))
    assert not isinstance(err, bspark.SparkFitError)
    assert isinstance(err, ValueError) and "Only binary classification is supported" in str(err)
    assert ran >= 1  # the facts job
