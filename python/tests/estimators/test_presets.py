"""Presets are defaults that explicit parameters override; seeded random ties."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import clone

import boostlab

PRESET = {
    "tree.grow_order": "count",
    "tree.pure_leaves": "forbid",
    "tree.max_split_candidates": 2000,
    "tree.split_ties": "random",
    "t_adaboost.leaf_values": "canonical",
}


def twins(n=240, seed=0):
    """Three features and their exact copies: every split has a tied twin."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, size=(n, 3)).astype(float)
    y = ((X[:, 0] + X[:, 1] > 11) ^ (rng.random(n) < 0.15)).astype(int)
    return np.hstack([X, X]), y


def sources(est):
    return json.loads(est.model_.param_sources_json)


def test_authors_mode_alone_gives_the_preset():
    X, y = twins()
    est = boostlab.TAdaBoostClassifier(authors_mode=True, n_estimators=3, max_nodes=7).fit(X, y)
    src = sources(est)
    for path, value in PRESET.items():
        assert src[path] == {"value": value, "source": "preset"}, path
    assert src["n_estimators"]["source"] == "user"
    assert src["max_bins"]["source"] == "default"
    assert json.loads(est.model_.params_json)["preset"] == "authors"


@pytest.mark.parametrize(
    "kwargs, path, value",
    [
        ({"grow_order": "weight"}, "tree.grow_order", "weight"),
        ({"pure_leaves": "allow"}, "tree.pure_leaves", "allow"),
        ({"max_split_candidates": "all"}, "tree.max_split_candidates", None),
        ({"max_split_candidates": 50}, "tree.max_split_candidates", 50),
        ({"split_ties": "lowest"}, "tree.split_ties", "lowest"),
        ({"leaf_values": "optimal"}, "t_adaboost.leaf_values", "optimal"),
    ],
)
def test_each_preset_field_yields_to_the_user(kwargs, path, value, tmp_path):
    X, y = twins()
    est = boostlab.TAdaBoostClassifier(authors_mode=True, n_estimators=3, max_nodes=7, **kwargs)
    src = sources(est.fit(X, y))
    assert src[path] == {"value": value, "source": "user"}
    for other, v in PRESET.items():
        if other != path:
            assert src[other] == {"value": v, "source": "preset"}, other
    # A reloaded estimator has the same parameters and refits to the same model.
    loaded = boostlab.TAdaBoostClassifier.load_model(_save(est, tmp_path / "m.json"))
    assert {k: v for k, v in loaded.get_params().items() if k != "random_state"} == {
        k: v for k, v in est.get_params().items() if k != "random_state"
    }
    refit = clone(loaded).fit(X, y)
    np.testing.assert_array_equal(refit.decision_function(X), est.decision_function(X))


def _save(est, path):
    est.save_model(path)
    return path


def test_random_ties_are_seeded():
    X, y = twins(300, seed=3)

    def trees(seed, ties="random"):
        # Twin features predict alike: the trees (which twin each split uses) tell the draws apart.
        est = boostlab.TAdaBoostClassifier(
            t=0.6, n_estimators=4, max_nodes=7, split_ties=ties, random_state=seed
        )
        return json.loads(est.fit(X, y).model_.to_json())["trees"]

    assert trees(1) == trees(1)
    assert any(trees(s) != trees(1) for s in range(2, 8))
    assert trees(1, "lowest") == trees(5, "lowest")
    # Every estimator takes split_ties.
    for cls in (boostlab.AdaBoostClassifier, boostlab.RealAdaBoostClassifier):
        est = cls(n_estimators=3, max_leaves=4, split_ties="random", random_state=2).fit(X, y)
        assert sources(est)["tree.split_ties"] == {"value": "random", "source": "user"}
    with pytest.raises(ValueError, match="split_ties"):
        boostlab.AdaBoostClassifier(split_ties="sideways").fit(X, y)
