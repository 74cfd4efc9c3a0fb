"""Saving and loading: pickling, deep copies, clones and model files give the same estimator; file
errors are OS errors."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris

import boostlab

from helpers import ALL_ESTIMATORS, core_model

ALL = ALL_ESTIMATORS


def test_file_errors_are_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nonexistent.json"):
        boostlab.load_model(tmp_path / "nonexistent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="invalid model"):
        boostlab.load_model(bad)
    est = boostlab.AdaBoostClassifier(n_estimators=3).fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(OSError, match="no-such-dir"):
        est.save_model(tmp_path / "no-such-dir" / "m.json")


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_pickle_deepcopy_clone_and_model_files(cls, cancer, tmp_path):
    X, y = cancer
    est = cls(n_estimators=10, max_leaves=3).fit(X, y)
    want = est.decision_function(X)
    for other in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        assert type(other) is cls
        np.testing.assert_array_equal(other.decision_function(X), want)
        assert core_model(other) == core_model(est)
    assert pickle.loads(pickle.dumps(est.model_)).to_json() == est.model_.to_json()
    assert not hasattr(clone(est), "model_")
    est.save_model(tmp_path / "m.json")
    for loaded in (boostlab.load_model(tmp_path / "m.json"), cls.load_model(tmp_path / "m.json")):
        assert type(loaded) is cls
        # random_state=None is the seed 0, which the model file records.
        assert loaded.get_params() == {**est.get_params(), "random_state": 0}
        np.testing.assert_array_equal(loaded.classes_, est.classes_)
        np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
        np.testing.assert_array_equal(loaded.decision_function(X), want)


def test_load_model_checks_the_class(cancer, tmp_path):
    X, y = cancer
    boostlab.RealAdaBoostClassifier(n_estimators=3).fit(X, y).save_model(tmp_path / "m.json")
    with pytest.raises(ValueError, match="RealAdaBoostClassifier.load_model"):
        boostlab.TAdaBoostClassifier.load_model(tmp_path / "m.json")


def test_string_labels_round_trip_through_model_files(tmp_path):
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    est = boostlab.AdaBoostMHClassifier(n_estimators=10).fit(X, names)
    est.save_model(tmp_path / "m.json")
    loaded = boostlab.load_model(tmp_path / "m.json")
    assert list(loaded.classes_) == ["setosa", "versicolor", "virginica"]
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
