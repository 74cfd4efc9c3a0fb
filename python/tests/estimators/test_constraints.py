"""`monotone_constraints` and `interaction_constraints` of the estimators: the fitted score is
monotone along each constrained feature (each label's for AdaBoost.MH), no tree path mixes
interaction groups, the keywords survive save/load, and wrong constraints are ValueErrors naming
the problem."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import boostlab

BINARY = [
    boostlab.AdaBoostClassifier,
    boostlab.RealAdaBoostClassifier,
    boostlab.TAdaBoostClassifier,
    boostlab.SecBoostClassifier,
]


def _bump(n=600, classes=2, seed=0):
    """Three features in [0, 1) with missing values; the label is a bump in feature 0."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    s = 1 - 2 * np.abs(X[:, 0] - 0.5) + 0.5 * X[:, 1] + 0.3 * rng.random(n)
    y = np.minimum((s / 1.8 * classes).astype(int), classes - 1)
    X[rng.random(X.shape) < 0.08] = np.nan
    return X, y


def _along(clf, X, feature, points=15, columns=None):
    """The scores (n_grid, points, n_outputs) of `points` rows with `feature` swept over a grid."""
    grid = np.linspace(-0.05, 1.05, 40)
    rows = np.repeat(X[:points][None, :, :], len(grid), axis=0)
    rows[:, :, feature] = grid[:, None]
    rows = rows.reshape(-1, X.shape[1])
    s = clf.decision_function(rows if columns is None else pd.DataFrame(rows, columns=columns))
    return s.reshape(len(grid), points, -1)


@pytest.mark.parametrize("cls", BINARY)
def test_binary_estimators_are_monotone_in_constrained_features(cls):
    X, y = _bump()
    clf = cls(n_estimators=12, max_leaves=8, monotone_constraints=[1, 0, -1], random_state=0).fit(X, y)
    assert (np.diff(_along(clf, X, 0), axis=0) >= 0).all()
    assert (np.diff(_along(clf, X, 2), axis=0) <= 0).all()


def test_constraint_binds_where_the_free_model_is_not_monotone():
    X, y = _bump()
    free = boostlab.RealAdaBoostClassifier(n_estimators=12, max_leaves=8).fit(X, y)
    assert (np.diff(_along(free, X, 0), axis=0) < 0).any()
    up = boostlab.RealAdaBoostClassifier(n_estimators=12, max_leaves=8, monotone_constraints={"f0": 1}).fit(X, y)
    assert (np.diff(_along(up, X, 0), axis=0) >= 0).all()


def test_mh_is_monotone_per_label_and_survives_save_load(tmp_path):
    X, y = _bump(classes=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    clf = boostlab.AdaBoostMHClassifier(
        n_estimators=10,
        max_leaves=6,
        variant="real",
        monotone_constraints={"a": -1},
        interaction_constraints=[["a", "b"]],
    ).fit(frame, y)
    s = _along(clf, X, 0, columns=frame.columns)
    assert s.shape[2] == 3
    assert (np.diff(s, axis=0) <= 0).all()
    path = tmp_path / "m.json"
    clf.save_model(path)
    loaded = boostlab.load_model(path)
    assert loaded.get_params()["monotone_constraints"] == {"a": -1.0}
    assert loaded.get_params()["interaction_constraints"] == [["a", "b"]]
    np.testing.assert_array_equal(loaded.decision_function(frame), clf.decision_function(frame))


def test_no_tree_path_mixes_interaction_groups():
    X, y = _bump(n=800)
    clf = boostlab.RealAdaBoostClassifier(n_estimators=10, max_leaves=8, interaction_constraints=[[0, 1], [2]])
    clf.fit(X, y)
    model = json.loads(clf.model_.to_json())
    for tree in model["trees"]:
        for used in _paths(tree["nodes"], 0, frozenset()):
            assert used <= {0, 1} or used <= {2}, used


def _paths(nodes, i, used):
    """The features split on along every root-to-leaf path below node `i`."""
    n = nodes[i]
    if n["type"] == "leaf":
        return [used]
    used = used | {n["feature"]}
    return _paths(nodes, n["left"], used) + _paths(nodes, n["right"], used)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"monotone_constraints": [1, 0]}, "one direction per feature (3 features)"),
        ({"monotone_constraints": [1, 0.5, 0]}, "-1, 0 or 1 for feature 1"),
        ({"monotone_constraints": {"nope": 1}}, "unknown feature 'nope'"),
        ({"monotone_constraints": ["up", 0, 0]}, "monotone_constraints"),
        ({"interaction_constraints": [[0, 7]]}, "below 3"),
        ({"interaction_constraints": "f0,f1"}, "interaction_constraints"),
    ],
)
def test_wrong_constraints_are_value_errors(kwargs, message):
    X, y = _bump(n=100)
    with pytest.raises(ValueError, match="invalid parameter") as e:
        boostlab.AdaBoostClassifier(n_estimators=2, **kwargs).fit(X, y)
    assert message in str(e.value)


def test_categorical_feature_is_refused_and_mo_takes_no_constraints():
    X, y = _bump(n=100, classes=3)
    frame = pd.DataFrame({"a": X[:, 0], "colour": pd.Categorical(np.array(["r", "g", "b"])[np.arange(100) % 3])})
    with pytest.raises(ValueError, match="categorical feature 'colour'"):
        boostlab.AdaBoostMHClassifier(n_estimators=2, monotone_constraints={"colour": 1}).fit(frame, y)
    # AdaBoost.MO and MR decode or rank outputs: the constraint could not be exact, so their
    # estimators have no such keyword (the core refuses it from the CLI and TOML).
    for cls in (boostlab.AdaBoostMOClassifier, boostlab.AdaBoostMRClassifier):
        with pytest.raises(TypeError):
            cls(monotone_constraints=[1])
