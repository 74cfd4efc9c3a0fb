"""MLflow: `boostlab.callbacks.MLflowCallback` logs each round's diagnostics with the round as the
step, and `mlflow.sklearn.log_model` with MLflow's default format (skops) round-trips a fitted
estimator. Tracking goes to a file store in a temporary folder."""

from __future__ import annotations

import numpy as np
import pytest

import boostlab
from boostlab.callbacks import MLflowCallback

from helpers import mixed_frame, optional_module, task_data

mlflow = optional_module("mlflow")
optional_module("skops")


@pytest.fixture
def tracking(tmp_path, monkeypatch):
    """A local file store (MLflow 3 asks for MLFLOW_ALLOW_FILE_STORE), no telemetry, and loading
    of logged models allowed (MLFLOW_ALLOW_PICKLE_DESERIALIZATION gates every format)."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    monkeypatch.setenv("MLFLOW_ALLOW_PICKLE_DESERIALIZATION", "true")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    yield mlflow.MlflowClient()
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(previous)


def _history(client, run_id, key):
    h = sorted(client.get_metric_history(run_id, key), key=lambda m: m.step)
    return [m.step for m in h], np.array([m.value for m in h])


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] - X[:, 1] + rng.normal(scale=0.8, size=n) > 0).astype(int)
    return X[:200], y[:200], [(X[200:], y[200:])]


def test_mlflow_callback_logs_every_round_with_the_round_as_step(tracking):
    X, y, eval_set = _data()
    with mlflow.start_run() as run:
        clf = boostlab.AdaBoostClassifier(n_estimators=8, max_leaves=3, callbacks=[MLflowCallback()])
        clf.fit(X, y, eval_set=eval_set)
    h = clf.history_
    run_data = tracking.get_run(run.info.run_id).data
    assert set(run_data.metrics) == {"alpha", "bound", "epsilon", "r", "train_error", "valid_metric", "z"}
    for key in ("train_error", "valid_metric", "alpha"):
        steps, values = _history(tracking, run.info.run_id, key)
        assert steps == list(range(1, 9))
        np.testing.assert_allclose(values, h[key].to_numpy(), rtol=0, atol=1e-12)
    assert "stop_reason" not in run_data.tags


def test_mlflow_callback_logs_chosen_metrics_with_a_prefix_and_the_stop_reason(tracking):
    X, y, eval_set = _data(seed=1)
    with mlflow.start_run() as run:
        cb = MLflowCallback(["valid_metric"], prefix="fold0/")
        clf = boostlab.RealAdaBoostClassifier(n_estimators=200, n_iter_no_change=3, callbacks=[cb])
        clf.fit(X, y, eval_set=eval_set)
    run_data = tracking.get_run(run.info.run_id).data
    assert set(run_data.metrics) == {"fold0/valid_metric"}
    steps, values = _history(tracking, run.info.run_id, "fold0/valid_metric")
    # Every round that ran is logged (the model keeps best_iteration_ + 1 of them).
    assert steps[-1] > clf.best_iteration_ + 1
    assert steps == list(range(1, steps[-1] + 1))
    assert values.min() == pytest.approx(values[clf.best_iteration_], abs=0)
    assert run_data.tags["fold0/stop_reason"].startswith("early stopping")


def test_mlflow_callback_needs_a_run():
    assert mlflow.active_run() is None
    with pytest.raises(ValueError, match="no active MLflow run"):
        MLflowCallback()


def test_mlflow_callback_logs_to_a_given_run_without_an_active_one(tracking):
    X, y, _ = _data(seed=2)
    run = tracking.create_run(experiment_id="0")
    cb = MLflowCallback("train_error", run_id=run.info.run_id)
    clf = boostlab.SecBoostClassifier(n_estimators=4, callbacks=[cb]).fit(X, y)
    assert mlflow.active_run() is None
    steps, values = _history(tracking, run.info.run_id, "train_error")
    assert steps == [1, 2, 3, 4]
    np.testing.assert_allclose(values, clf.history_["train_error"].to_numpy(), rtol=0, atol=1e-12)


def _cases():
    frame = mixed_frame()
    Xm, Ym = task_data("multilabel", n=120)
    return [
        (boostlab.AdaBoostClassifier(n_estimators=10, max_leaves=3), *_data()[:2]),
        (boostlab.AdaBoostMOClassifier(n_estimators=10), frame[["a", "b", "c"]], frame["label3"]),
        (boostlab.AdaBoostMRClassifier(n_estimators=10), Xm, Ym),
    ]


@pytest.mark.parametrize("case", range(3), ids=["binary-array", "multiclass-frame", "multilabel"])
def test_log_model_in_the_default_skops_format_round_trips(tracking, case):
    est, X, y = _cases()[case]
    est.fit(X, y)
    trusted = [f"{type(est).__module__}.{type(est).__qualname__}"]
    with mlflow.start_run():
        # pip_requirements given: MLflow's inference of them runs a subprocess (seconds).
        info = mlflow.sklearn.log_model(est, name="model", skops_trusted_types=trusted, pip_requirements=["boostlab"])
    flavor = mlflow.models.get_model_info(info.model_uri).flavors["sklearn"]
    assert flavor["serialization_format"] == "skops"
    loaded = mlflow.sklearn.load_model(info.model_uri)
    assert type(loaded) is type(est)
    assert loaded.model_.to_json() == est.model_.to_json()
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(loaded.classes_, est.classes_)
    # The pyfunc flavour predicts alike.
    pyfunc = mlflow.pyfunc.load_model(info.model_uri)
    np.testing.assert_array_equal(np.asarray(pyfunc.predict(X)), est.predict(X))


def test_a_clone_of_the_callback_logs_to_the_same_run(tracking):
    from sklearn.base import clone

    with mlflow.start_run() as run:
        cb = MLflowCallback(["train_error"], prefix="p/")
    est = boostlab.AdaBoostClassifier(n_estimators=3, callbacks=[cb])
    copied = clone(est).callbacks[0]
    assert copied is not cb
    assert (copied.run_id, copied.metrics, copied.prefix) == (run.info.run_id, ["train_error"], "p/")
    X, y, _ = _data(seed=4)
    clone(est).fit(X, y)
    steps, _ = _history(tracking, run.info.run_id, "p/train_error")
    assert steps == [1, 2, 3]
