"""Early stopping (eval_set, validation_fraction + n_iter_no_change): the best staged iteration is
kept, locally and on Dask."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

import boostlab

from helpers import task_data


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
def test_early_stopping_keeps_the_best_staged_iteration(cls, kind, kw, metric):
    X, y = task_data(kind, n=250, seed=1)
    X_val, y_val = task_data(kind, n=400, seed=2)
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
    want_metric = "hamming" if kind == "multilabel" else ("one-error" if kind == "multiclass" else "error")
    assert curve.model_.eval_metric == want_metric


def test_validation_fraction_is_a_seeded_stratified_split():
    X, y = task_data("binary", n=400, seed=3)
    est = boostlab.RealAdaBoostClassifier(
        n_estimators=200, n_iter_no_change=4, validation_fraction=0.25, random_state=11
    ).fit(X, y)
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.25, stratify=y, random_state=11)
    ref = boostlab.RealAdaBoostClassifier(n_estimators=200, n_iter_no_change=4, random_state=11).fit(
        X_tr, y_tr, eval_set=[(X_va, y_va)]
    )
    assert est.model_.to_json() == ref.model_.to_json()
    assert est.best_iteration_ is not None and est.model_.n_trees < 200


def test_secboost_stops_on_its_loss_and_metrics_are_checked():
    X, y = task_data("binary", n=200, seed=4)
    X_val, y_val = task_data("binary", n=200, seed=5)
    est = boostlab.SecBoostClassifier(n_estimators=15).fit(X, y, eval_set=[(X_val, y_val)])
    assert est.model_.eval_metric == "loss"
    assert np.all(np.isfinite(est.history_["valid_metric"]))
    with pytest.raises(ValueError, match="eval_metric"):
        boostlab.AdaBoostClassifier(eval_metric="loss").fit(X, y, eval_set=[(X_val, y_val)])
    with pytest.raises(ValueError, match="not seen in training"):
        boostlab.AdaBoostClassifier().fit(X, y, eval_set=[(X_val, np.where(y_val == "yes", "yes", "maybe"))])


def test_model_file_keeps_best_iteration_and_reloads_the_parameters(tmp_path):
    X, y = task_data("binary", n=250, seed=1)
    X_val, y_val = task_data("binary", n=300, seed=2)
    est = boostlab.AdaBoostClassifier(n_estimators=60, max_leaves=8, learning_rate=0.3, n_iter_no_change=3)
    est.fit(X, y, eval_set=[(X_val, y_val)])
    est.save_model(tmp_path / "m.json")
    back = boostlab.load_model(tmp_path / "m.json")
    assert back.best_iteration_ == est.best_iteration_
    assert back.get_params()["learning_rate"] == 0.3 and back.get_params()["n_iter_no_change"] == 3
    np.testing.assert_array_equal(back.predict(X_val), est.predict(X_val))


@pytest.mark.parametrize(
    "cls, kw, metric",
    [
        ("DaskRealAdaBoostClassifier", {"max_leaves": 8}, None),
        ("DaskSecBoostClassifier", {"max_leaves": 4}, "loss"),
        ("DaskAdaBoostMHClassifier", {"max_leaves": 4}, "hamming"),
    ],
    ids=["real-error", "secboost-loss", "mh-hamming"],
)
@pytest.mark.dask
def test_early_stopping_on_a_dask_eval_set(client, bdask, cls, kw, metric):
    """Validation rows spread over the ranks (one worker holds none of them in the second
    case): the metric's sums are added over the ranks each round, every rank stops at the same
    round, and the model is the local fit's with the same validation data."""
    from dask_helpers import REL, assert_same_model, dask_data, fit_checked, in_training_order, place

    cls = getattr(bdask, cls)
    classes = 3 if cls is bdask.DaskAdaBoostMHClassifier else 2
    X, y, w = dask_data(n=700, seed=3, classes=classes)
    Xv, yv, _ = dask_data(n=300, seed=8, classes=classes)
    sizes = [90, 260, 40, 310]
    dX, dy, dw = place(client, [X, y, w], sizes, [0, 1, 0, 1])
    kw = dict(kw, n_estimators=300, n_iter_no_change=4, eval_metric=metric, random_state=5)
    placements = [([120, 180], [1, 0]), ([100, 200], [0, 0])]
    for v_sizes, v_owners in placements if metric is None else placements[:1]:
        dXv, dyv = place(client, [Xv, yv], v_sizes, v_owners)
        est = fit_checked(cls(client=client, timeout=60, **kw), dX, dy, sample_weight=dw, eval_set=[(dXv, dyv)])
        Xo, yo, wo = in_training_order(est, [X, y, w], sizes)
        local = cls._local_cls(**kw).fit(Xo, yo, sample_weight=wo, eval_set=[(Xv, yv)])
        # Early stopping did stop, at the same round, with the same best iteration.
        assert local.model_.n_trees < 300 and local.best_iteration_ is not None
        assert "early stopping" in str(local.history_["stop_reason"].iloc[-1])
        assert len(est.history_) == len(local.history_)
        assert est.best_iteration_ == local.best_iteration_
        assert_same_model(est, local)
        np.testing.assert_allclose(
            est.history_["valid_metric"].to_numpy(), local.history_["valid_metric"].to_numpy(), rtol=REL, atol=0
        )
        np.testing.assert_array_equal(est.predict(dX).compute().to_numpy(), local.predict(X))


@pytest.mark.dask
def test_early_stopping_with_validation_fraction_on_dask(client, bdask):
    """`validation_fraction` holds out the local estimator's rows (the same stratified, seeded
    split of all the rows): the model equals the local estimator's, whose training rows come in
    another order (sums round differently: within REL)."""
    from dask_helpers import assert_same_model, dask_data, fit_checked, place

    X, y, w = dask_data(n=800, seed=4)
    sizes = [300, 100, 250, 150]
    dX, dy, dw = place(client, [X, y, w], sizes, [1, 0, 0, 1])
    kw = dict(n_estimators=300, max_leaves=8, n_iter_no_change=3, validation_fraction=0.25, random_state=9)
    est = fit_checked(bdask.DaskRealAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    local = boostlab.RealAdaBoostClassifier(**kw).fit(X, y, sample_weight=w)
    assert local.model_.n_trees < 300 and "early stopping" in str(local.history_["stop_reason"].iloc[-1])
    assert est.best_iteration_ == local.best_iteration_ and len(est.history_) == len(local.history_)
    assert_same_model(est, local)
    np.testing.assert_array_equal(est.history_["valid_metric"].to_numpy(), local.history_["valid_metric"].to_numpy())
