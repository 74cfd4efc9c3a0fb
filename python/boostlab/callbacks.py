"""Callbacks for the estimators' ``callbacks`` parameter: Optuna pruning and MLflow tracking.

An estimator calls each callback after every boosting round with that round's record, a dict
(``round``, the booster's diagnostics such as ``alpha`` and ``train_error``, ``valid_metric``
when ``fit`` has validation data, ``stop_reason`` when boosting stops): the rows of ``history_``.
An exception raised by a callback stops ``fit`` with that exception and leaves the estimator
unfitted.

Neither Optuna nor MLflow is a dependency of boostlab: each callback imports its package when it
is created.

- :class:`OptunaPruningCallback` reports a metric of each round to an Optuna trial and raises
  ``optuna.TrialPruned`` when the trial's pruner says so.
- :class:`MLflowCallback` logs each round's numeric diagnostics as MLflow metrics, with the round
  as the step, to the run active when it is created (or a given run).

Both keep a reference to their trial or run when an estimator is cloned (scikit-learn's
``clone`` deep-copies parameters): the clones report to the same trial or run.
"""

from __future__ import annotations

import math
import numbers
import time

__all__ = ["MLflowCallback", "OptunaPruningCallback"]


def _metric_value(record, metric):
    """The record's value of `metric` as a float, or None when it is not a finite number."""
    if metric not in record:
        keys = sorted(k for k, v in record.items() if isinstance(v, numbers.Real))
        hint = (
            " (valid_metric is recorded only when fit has validation data: eval_set, or "
            "n_iter_no_change with validation_fraction)"
            if metric == "valid_metric"
            else ""
        )
        raise KeyError(f"the round's record has no {metric!r}{hint}; its numeric keys are {keys}")
    value = record[metric]
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


class OptunaPruningCallback:
    """Reports a metric of each boosting round to an Optuna trial, and prunes the trial.

    After every round, ``trial.report(record[metric], step=record["round"])``; when
    ``trial.should_prune()`` is then true, raises ``optuna.TrialPruned``, which stops ``fit``
    and reaches the objective's caller (Optuna records the trial as pruned).

    trial: an ``optuna.trial.Trial``.
    metric: the record's key to report, by default ``"valid_metric"`` (the validation metric,
    ``eval_metric``, recorded when ``fit`` has validation data: pass ``eval_set``). Any numeric
    key of the records can be used, e.g. ``"train_error"``. The study's direction must match it:
    ``"minimize"`` for errors and losses. Non-finite values are not reported.

    A record without ``metric`` raises a ``KeyError`` that lists the record's keys.

    Example::

        def objective(trial):
            clf = boostlab.AdaBoostClassifier(
                n_estimators=200,
                max_leaves=trial.suggest_int("max_leaves", 2, 16),
                callbacks=[OptunaPruningCallback(trial)],
            )
            clf.fit(X_train, y_train, eval_set=[(X_valid, y_valid)])
            return clf.history_["valid_metric"].iloc[-1]
    """

    def __init__(self, trial, metric: str = "valid_metric"):
        try:
            import optuna
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("OptunaPruningCallback needs optuna: pip install optuna") from e
        if not isinstance(metric, str):
            raise ValueError(f"invalid parameter `metric`: expected a record key (a string), got {metric!r}")
        self._pruned = optuna.TrialPruned
        self.trial = trial
        self.metric = metric

    def __call__(self, record):
        value = _metric_value(record, self.metric)
        if value is None:
            return
        step = int(record["round"])
        self.trial.report(value, step)
        if self.trial.should_prune():
            raise self._pruned(f"trial pruned at round {step} ({self.metric} = {value!r})")

    def __deepcopy__(self, memo):
        # A clone reports to the same trial (a trial holds its study's storage).
        return type(self)(self.trial, self.metric)

    def __repr__(self):
        return f"OptunaPruningCallback(trial={self.trial!r}, metric={self.metric!r})"


class MLflowCallback:
    """Logs each boosting round's diagnostics as MLflow metrics, with the round as the step.

    After every round, each numeric value of the round's record (except ``round``) is logged as
    the metric ``prefix + key`` at ``step=record["round"]``, in one batch; non-finite values are
    skipped. When boosting stops early, the reason is set as the tag ``prefix + "stop_reason"``.

    metrics: the record keys to log, e.g. ``["train_error", "valid_metric"]``. By default None:
    every numeric key.
    prefix: prepended to each metric name, e.g. ``"fold0/"``. By default ``""``.
    run_id: the run to log to. By default None: the run active when the callback is created
    (``with mlflow.start_run(): ...``); without one, creating the callback is an error.

    The run and the tracking URI are taken when the callback is created, not when it is called:
    ``fit`` calls callbacks from its worker thread, where MLflow's active run of the calling
    thread is not visible.
    """

    def __init__(self, metrics=None, *, prefix: str = "", run_id=None):
        try:
            import mlflow
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("MLflowCallback needs mlflow: pip install mlflow") from e
        if metrics is not None:
            if isinstance(metrics, str):
                metrics = [metrics]
            metrics = list(metrics)
            if not all(isinstance(m, str) for m in metrics):
                raise ValueError(f"invalid parameter `metrics`: expected None or record keys, got {metrics!r}")
        if not isinstance(prefix, str):
            raise ValueError(f"invalid parameter `prefix`: expected a string, got {prefix!r}")
        if run_id is None:
            run = mlflow.active_run()
            if run is None:
                raise ValueError(
                    "MLflowCallback: no active MLflow run: create the callback inside "
                    "`with mlflow.start_run():` or pass run_id"
                )
            run_id = run.info.run_id
        self.metrics = metrics
        self.prefix = prefix
        self.run_id = run_id
        self.tracking_uri = mlflow.get_tracking_uri()
        self._client = None

    def _mlflow_client(self):
        if self._client is None:
            from mlflow import MlflowClient

            self._client = MlflowClient(tracking_uri=self.tracking_uri)
        return self._client

    def __call__(self, record):
        from mlflow.entities import Metric

        step = int(record["round"])
        keys = self.metrics if self.metrics is not None else [k for k in record if k not in ("round", "stop_reason")]
        now = int(time.time() * 1000)
        batch = []
        for k in keys:
            v = _metric_value(record, k)
            if v is not None:
                batch.append(Metric(self.prefix + k, v, now, step))
        client = self._mlflow_client()
        if batch:
            client.log_batch(self.run_id, metrics=batch)
        reason = record.get("stop_reason")
        if reason is not None:
            client.set_tag(self.run_id, self.prefix + "stop_reason", str(reason))

    def __getstate__(self):
        # The client (a connection to the store) is not part of the state.
        return {**self.__dict__, "_client": None}

    def __deepcopy__(self, memo):
        # A clone logs to the same run.
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__getstate__())
        return new

    def __repr__(self):
        return f"MLflowCallback(metrics={self.metrics!r}, prefix={self.prefix!r}, run_id={self.run_id!r})"
