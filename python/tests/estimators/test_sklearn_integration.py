"""scikit-learn integration: no FutureWarning or DeprecationWarning from any estimator, the tags
each estimator declares, and metadata routing of `sample_weight` and `eval_set` through `Pipeline`
and `GridSearchCV`."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_iris, make_multilabel_classification
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import boostlab

from helpers import core_model, mixed_frame

BINARY = [
    boostlab.AdaBoostClassifier,
    boostlab.RealAdaBoostClassifier,
    boostlab.TAdaBoostClassifier,
    boostlab.SecBoostClassifier,
]
MULTI = [boostlab.AdaBoostMHClassifier, boostlab.AdaBoostMOClassifier, boostlab.AdaBoostMRClassifier]
MULTILABEL = [boostlab.AdaBoostMHClassifier, boostlab.AdaBoostMRClassifier]


def _targets(cls):
    """(X, y) pairs the estimator takes: numpy with NaN, a pandas frame with a categorical column,
    and a multi-label indicator matrix for the multi-label boosters."""
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[::17, 1] = np.nan
    frame = mixed_frame()
    if cls in BINARY:
        out = [(X, (y == 1).astype(int)), (frame[["a", "b", "c"]], frame["label"])]
    else:
        out = [(X, y), (frame[["a", "b", "c"]], frame["label3"])]
    if cls in MULTILABEL:
        Xm, Ym = make_multilabel_classification(n_samples=80, n_classes=3, random_state=0)
        out.append((Xm, Ym))
    return out


@pytest.mark.parametrize("cls", BINARY + MULTI, ids=lambda c: c.__name__)
def test_no_future_or_deprecation_warning_from_fit_predict_score(cls):
    for X, y in _targets(cls):
        with warnings.catch_warnings():
            warnings.simplefilter("error", FutureWarning)
            warnings.simplefilter("error", DeprecationWarning)
            est = cls(n_estimators=5, max_leaves=3).fit(X, y)
            pred = est.predict(X)
            proba = est.predict_proba(X)
            score = est.score(X, y)
            est.decision_function(X)
            list(est.staged_predict(X))
        assert pred.shape[0] == proba.shape[0] == len(y)
        assert 0.0 <= score <= 1.0


@pytest.mark.parametrize("cls", BINARY + MULTI, ids=lambda c: c.__name__)
def test_tags_declare_nan_categorical_sparse_and_the_supported_targets(cls):
    tags = cls().__sklearn_tags__()
    assert tags.estimator_type == "classifier"
    assert tags.input_tags.allow_nan is True
    assert tags.input_tags.categorical is True
    assert tags.input_tags.sparse is True
    assert tags.target_tags.required is True
    # A multi-label indicator is not multi-class multi-output (columns of more than two classes).
    assert tags.target_tags.multi_output is False
    assert tags.classifier_tags.multi_class is (cls in MULTI)
    assert tags.classifier_tags.multi_label is (cls in MULTILABEL)


@pytest.mark.parametrize("cls", BINARY + MULTI, ids=lambda c: c.__name__)
def test_multi_label_tag_matches_what_fit_accepts(cls):
    X, Y = make_multilabel_classification(n_samples=60, n_classes=3, random_state=1)
    est = cls(n_estimators=3)
    if est.__sklearn_tags__().classifier_tags.multi_label:
        assert est.fit(X, Y).predict(X).shape == Y.shape
    else:
        with pytest.raises(ValueError, match="1d array"):
            est.fit(X, Y)


def _weighted_data(seed=0, n=240):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] - 0.5 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0).astype(int)
    w = rng.uniform(0.1, 3.0, size=n)
    Xv = rng.normal(size=(60, 4))
    yv = (Xv[:, 0] - 0.5 * Xv[:, 1] > 0).astype(int)
    return X, y, w, [(Xv, yv)]


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_pipeline_routes_sample_weight_and_eval_set_to_fit(routing):
    X, y, w, eval_set = _weighted_data()
    est = boostlab.AdaBoostClassifier(n_estimators=12, max_leaves=3)
    pipe = Pipeline([("boost", est.set_fit_request(sample_weight=True, eval_set=True))])
    pipe.fit(X, y, sample_weight=w, eval_set=eval_set)
    direct = boostlab.AdaBoostClassifier(n_estimators=12, max_leaves=3).fit(X, y, sample_weight=w, eval_set=eval_set)
    unweighted = boostlab.AdaBoostClassifier(n_estimators=12, max_leaves=3).fit(X, y)
    assert core_model(pipe[-1]) == core_model(direct)
    assert core_model(pipe[-1]) != core_model(unweighted)
    # eval_set reached fit: the validation metric of each round, equal to the direct fit's.
    valid = pipe[-1].history_["valid_metric"].to_numpy()
    assert valid.shape == (12,) and np.all(np.isfinite(valid))
    np.testing.assert_array_equal(valid, direct.history_["valid_metric"].to_numpy())


def test_pipeline_with_a_transformer_routes_sample_weight_to_the_booster_only(routing):
    X, y, w, _ = _weighted_data(seed=1)
    pipe = Pipeline(
        [
            ("scale", StandardScaler().set_fit_request(sample_weight=False)),
            ("boost", boostlab.RealAdaBoostClassifier(n_estimators=8).set_fit_request(sample_weight=True)),
        ]
    )
    pipe.fit(X, y, sample_weight=w)
    Xs = StandardScaler().fit_transform(X)
    direct = boostlab.RealAdaBoostClassifier(n_estimators=8).fit(Xs, y, sample_weight=w)
    assert core_model(pipe[-1]) == core_model(direct)


def test_unrequested_sample_weight_is_refused_under_routing(routing):
    X, y, w, _ = _weighted_data()
    pipe = Pipeline([("boost", boostlab.AdaBoostClassifier(n_estimators=3))])
    with pytest.raises(UnsetMetadataPassedError, match="sample_weight"):
        pipe.fit(X, y, sample_weight=w)


def test_grid_search_routes_sample_weight_and_eval_set_to_each_fit(routing):
    X, y, w, eval_set = _weighted_data(seed=2)
    seen = []

    est = boostlab.AdaBoostMHClassifier(n_estimators=6, callbacks=[seen.append])
    est.set_fit_request(sample_weight=True, eval_set=True).set_score_request(sample_weight=True)
    cv = KFold(3, shuffle=True, random_state=0)
    gs = GridSearchCV(est, {"max_leaves": [2, 4]}, cv=cv).fit(X, y, sample_weight=w, eval_set=eval_set)
    # Every fit (2 candidates × 3 folds + the refit) saw the validation set in each round.
    assert len(seen) == 7 * 6
    assert all(np.isfinite(r["valid_metric"]) for r in seen)
    best = gs.best_params_["max_leaves"]
    # The refit equals a direct fit with the same weights and validation set.
    direct = boostlab.AdaBoostMHClassifier(n_estimators=6, max_leaves=best).fit(
        X, y, sample_weight=w, eval_set=eval_set
    )
    assert core_model(gs.best_estimator_) == core_model(direct)
    # Each fold's fit got that fold's weights: its test score equals a direct fit's weighted score.
    for k, (train, test) in enumerate(cv.split(X, y)):
        fold = boostlab.AdaBoostMHClassifier(n_estimators=6, max_leaves=best).fit(
            X[train], y[train], sample_weight=w[train], eval_set=eval_set
        )
        expected = fold.score(X[test], y[test], sample_weight=w[test])
        assert gs.cv_results_[f"split{k}_test_score"][gs.best_index_] == pytest.approx(expected, abs=1e-12)


def test_cross_validate_routes_sample_weight(routing):
    X, y, w, _ = _weighted_data(seed=3)
    est = boostlab.SecBoostClassifier(n_estimators=5)
    est.set_fit_request(sample_weight=True).set_score_request(sample_weight=False)
    cv = KFold(2)
    res = cross_validate(est, X, y, cv=cv, params={"sample_weight": w}, return_estimator=True)
    for fitted, (train, _) in zip(res["estimator"], cv.split(X)):
        direct = boostlab.SecBoostClassifier(n_estimators=5).fit(X[train], y[train], sample_weight=w[train])
        assert core_model(fitted) == core_model(direct)
