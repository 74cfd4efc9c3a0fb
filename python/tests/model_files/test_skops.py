"""skops (MLflow's default format for scikit-learn models): a fitted estimator's state is plain
values, so skops rebuilds it trusting the estimator's class alone, with the same model."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import boostlab

from helpers import ESTIMATOR_CASES, ESTIMATOR_IDS, core_model, mixed_frame, optional_module, small_estimator, task_data

sio = optional_module("skops.io")


def _qualified(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


@pytest.mark.parametrize("case", ESTIMATOR_CASES, ids=ESTIMATOR_IDS)
def test_skops_rebuilds_every_estimator_trusting_only_its_class(case):
    cls, kind, kw = case
    X, y = task_data(kind)
    est = small_estimator(cls, 8, **kw).fit(X, y)
    history = est.history_  # cached: the table is not part of the state
    data = sio.dumps(est)
    assert sio.get_untrusted_types(data=data) == [_qualified(cls)]
    loaded = sio.loads(data, trusted=[_qualified(cls)])
    assert type(loaded) is cls
    assert core_model(loaded) == core_model(est)
    assert loaded.get_params() == est.get_params()
    np.testing.assert_array_equal(loaded.classes_, est.classes_)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(loaded.estimator_weights_, est.estimator_weights_)
    assert loaded.best_iteration_ == est.best_iteration_
    assert loaded.history_.equals(history)


def test_skops_keeps_feature_names_categorical_levels_and_string_labels():
    frame = mixed_frame()
    X, y = frame[["a", "b", "c"]], frame["label"]
    est = boostlab.TAdaBoostClassifier(n_estimators=6, t="auto", t_grid=[0.5, 1.0]).fit(X, y)
    loaded = sio.loads(sio.dumps(est), trusted=[_qualified(boostlab.TAdaBoostClassifier)])
    assert list(loaded.feature_names_in_) == ["a", "b", "c"]
    assert loaded.model_.feature_kinds == ["numeric", "numeric", "categorical"]
    assert loaded.t_selection_ == est.t_selection_
    assert list(loaded.classes_) == ["neg", "pos"]
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


def test_state_holds_the_model_as_json_text_and_no_extension_object():
    X, Y = task_data("multilabel")
    est = boostlab.AdaBoostMRClassifier(n_estimators=5).fit(X, Y)
    assert len(est.history_) == 5  # cached on the estimator
    state = est.__getstate__()
    assert "model_" not in state and "_history" not in state
    assert state["_model_json"] == est.model_.to_json()
    assert state["_y_dtype"] == np.dtype(Y.dtype).str
    assert not any(type(v).__module__.startswith("boostlab") for v in state.values())
    # pickle goes through the same state.
    again = pickle.loads(pickle.dumps(est))
    assert again._y_dtype == Y.dtype
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    # An unfitted estimator's state is its parameters.
    assert set(boostlab.AdaBoostClassifier().__getstate__()) == set(boostlab.AdaBoostClassifier().get_params())
