"""Optuna: `boostlab.callbacks.OptunaPruningCallback` reports each round's metric to the trial and
prunes it with `optuna.TrialPruned`, which stops `fit` and reaches the study."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

import boostlab
from boostlab.callbacks import OptunaPruningCallback

from helpers import optional_module

optuna = optional_module("optuna")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.6, size=n) > 0).astype(int)
    return X[:300], y[:300], [(X[300:], y[300:])]


def test_pruning_callback_reports_each_round_validation_metric():
    X, y, eval_set = _data()
    study = optuna.create_study(pruner=optuna.pruners.NopPruner())
    trial = study.ask()
    clf = boostlab.AdaBoostClassifier(n_estimators=12, max_leaves=3, callbacks=[OptunaPruningCallback(trial)])
    clf.fit(X, y, eval_set=eval_set)
    reported = study.trials[0].intermediate_values
    assert sorted(reported) == list(range(1, 13))
    np.testing.assert_array_equal([reported[s] for s in range(1, 13)], clf.history_["valid_metric"].to_numpy())


def test_pruning_callback_reports_another_record_key():
    X, y, eval_set = _data(seed=1)
    study = optuna.create_study()
    trial = study.ask()
    cb = OptunaPruningCallback(trial, metric="train_error")
    clf = boostlab.RealAdaBoostClassifier(n_estimators=5, callbacks=[cb]).fit(X, y)
    reported = study.trials[0].intermediate_values
    np.testing.assert_array_equal([reported[s] for s in range(1, 6)], clf.history_["train_error"].to_numpy())


def test_trial_pruned_stops_fit_and_leaves_the_estimator_unfitted():
    X, y, eval_set = _data()
    # Every reported error is above 0: the trial is pruned at the first round past the warm-up
    # (rounds 1 and 2; the pruner's steps below n_warmup_steps).
    study = optuna.create_study(pruner=optuna.pruners.ThresholdPruner(upper=0.0, n_warmup_steps=3))
    trial = study.ask()
    rounds = []
    clf = boostlab.AdaBoostMHClassifier(
        n_estimators=50, callbacks=[OptunaPruningCallback(trial), lambda r: rounds.append(r["round"])]
    )
    with pytest.raises(optuna.TrialPruned, match="round 3"):
        clf.fit(X, y, eval_set=eval_set)
    # Round 3's report prunes before the next callback runs.
    assert rounds == [1, 2]
    assert not hasattr(clf, "model_")
    assert sorted(study.trials[0].intermediate_values) == [1, 2, 3]


def test_study_records_pruned_and_complete_trials():
    X, y, eval_set = _data(seed=2)
    n_estimators = 30

    def objective(trial):
        clf = boostlab.AdaBoostClassifier(
            n_estimators=n_estimators,
            max_leaves=trial.suggest_int("max_leaves", 2, 8),
            learning_rate=trial.suggest_float("learning_rate", 0.05, 1.0),
            callbacks=[OptunaPruningCallback(trial)],
        )
        clf.fit(X, y, eval_set=eval_set)
        return float(clf.history_["valid_metric"].iloc[-1])

    pruner = optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=5)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0), pruner=pruner)
    study.optimize(objective, n_trials=10)
    states = [t.state for t in study.trials]
    assert set(states) <= {optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED}
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    pruned = [t for t in study.trials if t.state == optuna.trial.TrialState.PRUNED]
    assert len(complete) >= 2 and len(pruned) >= 1
    for t in complete:
        assert sorted(t.intermediate_values) == list(range(1, n_estimators + 1))
        assert t.value == t.intermediate_values[n_estimators]
    for t in pruned:
        assert 5 <= max(t.intermediate_values) < n_estimators
    assert study.best_value == min(t.value for t in complete)


def test_missing_metric_names_the_record_keys():
    X, y, _ = _data()
    trial = optuna.create_study().ask()
    clf = boostlab.AdaBoostClassifier(n_estimators=3, callbacks=[OptunaPruningCallback(trial)])
    with pytest.raises(KeyError, match="no 'valid_metric'.*eval_set.*train_error"):
        clf.fit(X, y)


def test_a_clone_reports_to_the_same_trial():
    trial = optuna.create_study().ask()
    est = boostlab.AdaBoostClassifier(callbacks=[OptunaPruningCallback(trial, metric="train_error")])
    cb = clone(est).callbacks[0]
    assert cb is not est.callbacks[0]
    assert cb.trial is trial and cb.metric == "train_error"
