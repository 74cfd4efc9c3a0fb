"""Issue 15 (items 1, 2, 5, 6): learning_rate, early stopping (eval_set, validation_fraction +
n_iter_no_change), n_jobs and warm_start, for every estimator."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

import boostlab


def _data(kind: str, n: int = 300, seed: int = 0):
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
CASES = [
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
IDS = [f"{c.__name__}-{k}-{i}" for i, (c, k, _) in enumerate(CASES)]


def _est(cls, n, **kw):
    base = {"max_leaves": 4, "random_state": 5, "split_ties": "random"}
    base.update(kw)
    return cls(n_estimators=n, **base)


@pytest.mark.parametrize("cls,kind,kw", CASES, ids=IDS)
@pytest.mark.parametrize("lr", [1.0, 0.4])
def test_issue_15_warm_start_equals_one_go(cls, kind, kw, lr):
    X, y = _data(kind)
    one_go = _est(cls, 20, learning_rate=lr, **kw).fit(X, y)
    est = _est(cls, 8, learning_rate=lr, warm_start=True, **kw).fit(X, y)
    assert est.model_.n_trees == 8
    first = est.model_
    est.set_params(n_estimators=20).fit(X, y)
    assert est.model_ is not first
    assert est.model_.to_json() == one_go.model_.to_json()
    np.testing.assert_array_equal(est.decision_function(X), one_go.decision_function(X))
    with pytest.raises(ValueError, match="n_estimators=5 must be larger or equal"):
        est.set_params(n_estimators=5).fit(X, y)


def test_issue_15_warm_start_on_other_data_is_refused():
    X, y = _data("binary")
    est = boostlab.AdaBoostClassifier(n_estimators=5, warm_start=True).fit(X, y)
    X2, y2 = _data("binary", seed=9)
    with pytest.raises(ValueError, match="warm start"):
        est.set_params(n_estimators=10).fit(X2, y2)


@pytest.mark.parametrize("cls,kind,kw", CASES, ids=IDS)
def test_issue_15_learning_rate_scales_the_first_vote(cls, kind, kw):
    X, y = _data(kind)
    full = _est(cls, 3, **kw).fit(X, y)
    shrunk = _est(cls, 3, learning_rate=0.25, **kw).fit(X, y)
    a, b = full.estimator_weights_, shrunk.estimator_weights_
    assert b[0] == pytest.approx(0.25 * a[0], rel=1e-12)
    assert not np.array_equal(a[1:], b[1:])
    assert json.loads(shrunk.model_.params_json)["learning_rate"] == 0.25


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, float("nan"), "fast"])
def test_issue_15_bad_learning_rate_is_refused(bad):
    X, y = _data("binary")
    with pytest.raises(ValueError, match="learning_rate"):
        boostlab.AdaBoostClassifier(learning_rate=bad).fit(X, y)


def _naive_stop(values, k):
    best, best_t = np.inf, 0
    for i, v in enumerate(values):
        t = i + 1
        if v < best:
            best, best_t = v, t
        if t - best_t >= k:
            return best_t, t
    return best_t, len(values)


@pytest.mark.parametrize(
    "cls,kind,kw,metric",
    [
        (boostlab.AdaBoostClassifier, "binary", {}, "error"),
        (boostlab.TAdaBoostClassifier, "binary", {"t": 0.5, "clipped": True}, "error"),
        (boostlab.RealAdaBoostClassifier, "binary", {}, "error"),
        (boostlab.AdaBoostMHClassifier, "multiclass", {}, "error"),
        (boostlab.AdaBoostMHClassifier, "multilabel", {}, "hamming"),
    ],
)
def test_issue_15_early_stopping_keeps_the_best_staged_iteration(cls, kind, kw, metric):
    X, y = _data(kind, n=250, seed=1)
    X_val, y_val = _data(kind, n=400, seed=2)
    full = cls(n_estimators=80, max_leaves=8, **kw).fit(X, y)
    # The naive staged evaluation of the full model on the validation data: the error rate, or
    # for a 0/1 label matrix the Hamming loss (the share of wrong cells).
    values = [np.mean(p != y_val) for p in full.staged_predict(X_val)]
    k = 5
    best_t, stop_t = _naive_stop(values, k)
    es = cls(n_estimators=80, max_leaves=8, n_iter_no_change=k, **kw).fit(X, y, eval_set=[(X_val, y_val)])
    assert es.best_iteration_ == best_t - 1
    assert es.model_.n_trees == best_t
    np.testing.assert_array_equal(es.estimator_weights_, full.estimator_weights_[:best_t])
    assert len(es.history_) == stop_t and stop_t - best_t <= k
    np.testing.assert_array_equal(es.history_["valid_metric"].to_numpy(), np.array(values[:stop_t]))
    np.testing.assert_array_equal(es.predict(X_val), list(full.staged_predict(X_val))[best_t - 1])
    # Without n_iter_no_change the curve is recorded and nothing is cut.
    curve = cls(n_estimators=30, max_leaves=8, **kw).fit(X, y, eval_set=[(X_val, y_val)])
    assert curve.best_iteration_ is None and curve.model_.n_trees == 30
    np.testing.assert_array_equal(curve.history_["valid_metric"].to_numpy(), np.array(values[:30]))
    assert curve.model_.eval_metric == ("hamming" if kind == "multilabel" else ("one-error" if kind == "multiclass" else "error"))


def test_issue_15_validation_fraction_is_a_seeded_stratified_split():
    X, y = _data("binary", n=400, seed=3)
    est = boostlab.RealAdaBoostClassifier(
        n_estimators=200, n_iter_no_change=4, validation_fraction=0.25, random_state=11
    ).fit(X, y)
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.25, stratify=y, random_state=11)
    ref = boostlab.RealAdaBoostClassifier(n_estimators=200, n_iter_no_change=4, random_state=11).fit(
        X_tr, y_tr, eval_set=[(X_va, y_va)]
    )
    assert est.model_.to_json() == ref.model_.to_json()
    assert est.best_iteration_ is not None and est.model_.n_trees < 200


def test_issue_15_secboost_stops_on_its_loss_and_metrics_are_checked():
    X, y = _data("binary", n=200, seed=4)
    X_val, y_val = _data("binary", n=200, seed=5)
    est = boostlab.SecBoostClassifier(n_estimators=15).fit(X, y, eval_set=[(X_val, y_val)])
    assert est.model_.eval_metric == "loss"
    assert np.all(np.isfinite(est.history_["valid_metric"]))
    with pytest.raises(ValueError, match="eval_metric"):
        boostlab.AdaBoostClassifier(eval_metric="loss").fit(X, y, eval_set=[(X_val, y_val)])
    with pytest.raises(ValueError, match="not seen in training"):
        boostlab.AdaBoostClassifier().fit(X, y, eval_set=[(X_val, np.where(y_val == "yes", "yes", "maybe"))])


@pytest.mark.parametrize("cls,kind,kw", CASES, ids=IDS)
def test_issue_15_n_jobs_gives_bit_identical_models_and_predictions(cls, kind, kw):
    X, y = _data(kind, n=600)
    X_val, y_val = _data(kind, n=200, seed=8)
    out = []
    for n_jobs in (1, 2, 3, -1, None):
        est = _est(cls, 12, learning_rate=0.7, n_jobs=n_jobs, n_iter_no_change=50, **kw)
        est.fit(X, y, eval_set=[(X_val, y_val)])
        out.append((est.model_.to_json(), est.decision_function(X_val), np.stack(list(est.staged_decision_function(X_val)))))
    for m, d, s in out[1:]:
        assert m == out[0][0]
        np.testing.assert_array_equal(d, out[0][1])
        np.testing.assert_array_equal(s, out[0][2])


def test_issue_15_bad_n_jobs_is_refused():
    X, y = _data("binary")
    for bad in (0, 1.5, "all"):
        with pytest.raises(ValueError, match="n_jobs"):
            boostlab.AdaBoostClassifier(n_jobs=bad).fit(X, y)


def test_issue_15_model_file_keeps_best_iteration_and_reloads_the_parameters(tmp_path):
    X, y = _data("binary", n=250, seed=1)
    X_val, y_val = _data("binary", n=300, seed=2)
    est = boostlab.AdaBoostClassifier(n_estimators=60, max_leaves=8, learning_rate=0.5, n_iter_no_change=3)
    est.fit(X, y, eval_set=[(X_val, y_val)])
    est.save_model(tmp_path / "m.json")
    back = boostlab.load_model(tmp_path / "m.json")
    assert back.best_iteration_ == est.best_iteration_
    assert back.get_params()["learning_rate"] == 0.5 and back.get_params()["n_iter_no_change"] == 3
    np.testing.assert_array_equal(back.predict(X_val), est.predict(X_val))
