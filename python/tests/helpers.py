"""Data and comparisons shared by the tests (python/tests is on `sys.path`: `pythonpath` in
pyproject.toml)."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

import boostlab

# The repository and the datasets shared beside it.
ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "datasets"


def shared_dataset(name: str) -> Path:
    """A file of ../shared/datasets: a missing file fails the test under CI and skips it
    otherwise."""
    path = SHARED / name
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing (CI is set)")
        pytest.skip(f"{path} not found")
    return path


def optional_module(name: str):
    """An optional dependency of a test (optuna, mlflow, mapie, skops): imported, or the test is
    skipped without it, except under CI, where scripts/test.sh installs it and a missing one fails
    the test."""
    if os.environ.get("CI"):
        return importlib.import_module(name)
    return pytest.importorskip(name, reason=f"needs pip install {name}")


def mixed_frame(n: int = 160, seed: int = 7):
    """A pandas DataFrame with numeric features (some missing), a categorical string feature (some
    missing) and two targets: `label` (binary) and `label3` (three classes)."""
    import pandas as pd

    rng = np.random.RandomState(seed)
    a = rng.normal(size=n).round(3)
    b = rng.uniform(-2, 2, size=n)
    b[rng.rand(n) < 0.1] = np.nan
    c = rng.choice(["red", "green", "blue"], size=n).astype(object)
    c[rng.rand(n) < 0.1] = None
    bonus = np.where(c == "red", 1.0, 0.0)
    score = a + np.nan_to_num(b) * 0.7 + bonus + rng.normal(scale=0.5, size=n)
    label = np.where(score > 0.3, "pos", "neg")
    label3 = np.where(score > 1.0, "c", np.where(score > -0.3, "b", "a"))
    return pd.DataFrame({"a": a, "b": b, "c": c, "label": label, "label3": label3})


def core_model(est, *, names: bool = True) -> dict:
    """The fitted estimator's model as a dict, without what depends on the entry point (the label
    column spec the CLI records, and the parameters' sources: which values the user typed);
    optionally without the feature names."""
    m = json.loads(est.model_.to_json() if hasattr(est, "model_") else est)
    m.pop("target_columns", None)
    m.pop("param_sources", None)
    if not names:
        m["schema"].pop("names")
    return m


def model_dict(text: str) -> dict:
    m = json.loads(text)
    m.pop("target_columns", None)
    m.pop("param_sources", None)
    return m


def task_data(kind: str, n: int = 300, seed: int = 0):
    """Five features and a `binary` (string labels), `multiclass` (4 classes) or `multilabel` (a 0/1
    matrix of 4 labels) target."""
    rng = np.random.RandomState(seed)
    X = np.round(rng.uniform(-1, 1, size=(n, 5)), 2)
    s = X[:, 0] + 0.6 * X[:, 1] * X[:, 2] - 0.3 * X[:, 3] + rng.uniform(-0.6, 0.6, size=n)
    if kind == "binary":
        return X, np.where(s > 0, "yes", "no")
    classes = np.clip(((s + 2.0) * 4 / 4.0).astype(int), 0, 3)
    if kind == "multiclass":
        return X, classes
    Y = np.zeros((n, 4), dtype=int)
    Y[np.arange(n), classes] = 1
    Y[(rng.rand(n) < 0.2) & (X[:, 4] > 0), 0] = 1
    return X, Y


# Every estimator, with data it trains on and settings that use its random choices.
ESTIMATOR_CASES = [
    (boostlab.AdaBoostClassifier, "binary", {}),
    (boostlab.RealAdaBoostClassifier, "binary", {}),
    (boostlab.TAdaBoostClassifier, "binary", {"t": 0.6}),
    (boostlab.TAdaBoostClassifier, "binary", {"t": 0.5, "clipped": True}),
    (boostlab.SecBoostClassifier, "binary", {}),
    (boostlab.AdaBoostMHClassifier, "multiclass", {}),
    (boostlab.AdaBoostMHClassifier, "multilabel", {"variant": "discrete"}),
    (boostlab.AdaBoostMOClassifier, "multiclass", {"code": "random:5"}),
    (boostlab.AdaBoostMRClassifier, "multiclass", {}),
    (boostlab.AdaBoostMRClassifier, "multilabel", {}),
]
ESTIMATOR_IDS = [f"{c.__name__}-{k}-{i}" for i, (c, k, _) in enumerate(ESTIMATOR_CASES)]


def small_estimator(cls, n, **kw):
    base = {"max_leaves": 4, "random_state": 5, "split_ties": "random"}
    base.update(kw)
    return cls(n_estimators=n, **base)


# Every local estimator class.
ALL_ESTIMATORS = [
    boostlab.AdaBoostClassifier,
    boostlab.RealAdaBoostClassifier,
    boostlab.TAdaBoostClassifier,
    boostlab.SecBoostClassifier,
    boostlab.AdaBoostMHClassifier,
    boostlab.AdaBoostMOClassifier,
    boostlab.AdaBoostMRClassifier,
]


# Distributed fits sum in another order than the single machine: the same trees, α and leaf
# values within this relative difference.
REL = 1e-9


def assert_same_model(dist, local, rel=REL):
    """A distributed fit `dist` against the local fit on the same rows: the same trees (structure,
    features, thresholds, categories), α and leaf values within REL (sums in another order)."""
    a = json.loads(dist.model_.to_json())
    b = json.loads(local.model_.to_json())
    for m in (a, b):
        m.pop("param_sources", None)
        m.pop("history", None)

    def walk(x, y, path):
        if isinstance(x, dict):
            assert isinstance(y, dict) and x.keys() == y.keys(), path
            for k in x:
                walk(x[k], y[k], f"{path}.{k}")
        elif isinstance(x, list):
            assert isinstance(y, list) and len(x) == len(y), path
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{path}[{i}]")
        elif isinstance(x, float) and not isinstance(x, bool):
            assert isinstance(y, (int, float)), path
            assert abs(x - y) <= rel * max(abs(x), abs(y), 1e-300) or x == y, f"{path}: {x!r} vs {y!r}"
        else:
            assert x == y, f"{path}: {x!r} vs {y!r}"

    walk(a, b, "model")
    np.testing.assert_allclose(dist.estimator_weights_, local.estimator_weights_, rtol=rel, atol=0)


def numeric_with_missing(n_classes, n=400, seed=3):
    """Numeric data with about 10 % missing values (NaN) and `n_classes` classes."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 5))
    X[rng.rand(n, 5) < 0.1] = np.nan
    score = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) - np.isnan(X[:, 2]) + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def threshold_edge_rows(est, n_features):
    """Rows of zeros but one feature, set to each numeric split's threshold and the floats just
    above and below it: where an export's comparison must route exactly as boostlab's `x <= t`."""
    rows = []
    for tree in json.loads(est.model_.to_json())["trees"]:
        for node in tree["nodes"]:
            if node["type"] == "split":
                thr = node["rule"]["threshold"]
                for v in (thr, np.nextafter(thr, np.inf), np.nextafter(thr, -np.inf)):
                    row = np.zeros(n_features)
                    row[node["feature"]] = v
                    rows.append(row)
    return np.array(rows)
