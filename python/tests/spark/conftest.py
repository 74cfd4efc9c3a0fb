"""The Spark session of the Spark tests: `local[2]` (two task slots, so a fit of two ranks runs
its barrier stage), started once per test session by the test itself; no external service."""

from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local SparkSession with 2 cores; the Python workers run this interpreter (the venv with
    boostlab installed). Without pyspark installed the tests are skipped, except under CI (where
    scripts/test.sh installs it)."""
    if not os.environ.get("CI"):
        pytest.importorskip("pyspark", reason="boostlab.spark needs pip install pyspark")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("boostlab-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def frame(n=400, seed=3, classes=2):
    """Numeric columns with missing values (NaN), a string column (categorical) with nulls,
    float labels (0/1, or 0/1/2) and non-negative weights (some zero), as a pandas DataFrame."""
    import numpy as np
    import pandas as pd

    rng = np.random.RandomState(seed)
    a = rng.normal(size=n).round(2)
    b = rng.uniform(-2, 2, size=n)
    b[rng.rand(n) < 0.15] = np.nan
    cat = rng.choice(["red", "green", "blue", "teal"], size=n).astype(object)
    cat[rng.rand(n) < 0.1] = None
    score = a + np.nan_to_num(b) * 0.6 + (cat == "red") - 0.8 * (cat == "teal") + rng.normal(scale=0.6, size=n)
    if classes == 2:
        y = (score > 0.2).astype(np.float64)
    else:
        y = np.where(score > 0.9, 2.0, np.where(score > -0.4, 1.0, 0.0))
    w = rng.uniform(0.2, 2.0, size=n)
    w[rng.rand(n) < 0.05] = 0.0
    valid = rng.rand(n) < 0.25
    return pd.DataFrame({"a": a, "b": b, "c": cat, "label": y, "w": w, "valid": valid})


def to_spark(spark, pdf):
    """`pdf` as a Spark DataFrame of 2 partitions holding its rows in order (the first half, then
    the second): the rows of a two-rank fit in rank order are `pdf`'s."""
    df = spark.createDataFrame(pdf)
    assert df.rdd.getNumPartitions() == 2
    return df


@pytest.fixture(scope="session")
def binary(spark):
    pdf = frame()
    return pdf, to_spark(spark, pdf).cache()


@pytest.fixture(scope="session")
def multiclass(spark):
    pdf = frame(classes=3)
    return pdf, to_spark(spark, pdf).cache()
