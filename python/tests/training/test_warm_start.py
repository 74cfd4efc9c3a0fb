"""warm_start: more rounds on a fitted model give the model trained in one go, locally and on Dask."""

from __future__ import annotations

import numpy as np
import pytest

import boostlab

from helpers import ESTIMATOR_CASES, ESTIMATOR_IDS, small_estimator, task_data


@pytest.mark.parametrize("cls,kind,kw", ESTIMATOR_CASES, ids=ESTIMATOR_IDS)
@pytest.mark.parametrize("lr", [1.0, 0.4])
def test_warm_start_equals_one_go(cls, kind, kw, lr):
    X, y = task_data(kind)
    one_go = small_estimator(cls, 20, learning_rate=lr, **kw).fit(X, y)
    est = small_estimator(cls, 8, learning_rate=lr, warm_start=True, **kw).fit(X, y)
    assert est.model_.n_trees == 8
    first = est.model_
    est.set_params(n_estimators=20).fit(X, y)
    assert est.model_ is not first
    assert est.model_.to_json() == one_go.model_.to_json()
    np.testing.assert_array_equal(est.decision_function(X), one_go.decision_function(X))
    with pytest.raises(ValueError, match="n_estimators=5 must be larger or equal"):
        est.set_params(n_estimators=5).fit(X, y)


def test_warm_start_on_other_data_is_refused():
    X, y = task_data("binary")
    est = boostlab.AdaBoostClassifier(n_estimators=5, warm_start=True).fit(X, y)
    X2, y2 = task_data("binary", seed=9)
    with pytest.raises(ValueError, match="warm start"):
        est.set_params(n_estimators=10).fit(X2, y2)


@pytest.mark.dask
def test_warm_start_on_dask(client, bdask):
    """warm_start: every rank replays the fitted trees on its rows, then boosting goes on; the
    model is the one trained in one go (bit for bit on Dask, within REL of the local one), also
    when the model to continue was trained locally."""
    from dask_helpers import assert_refit_identical, assert_same_model, dask_data, fit_checked, in_training_order, place

    X, y, w = dask_data(n=600, seed=6)
    sizes = [250, 100, 250]
    dX, dy, dw = place(client, [X, y, w], sizes, [0, 1, 1])
    kw = dict(max_leaves=4, random_state=3)
    cls = bdask.DaskTAdaBoostClassifier
    est = cls(n_estimators=5, warm_start=True, t=0.7, client=client, timeout=60, **kw)
    fit_checked(est, dX, dy, sample_weight=dw)
    est.set_params(n_estimators=12)
    fit_checked(est, dX, dy, sample_weight=dw)
    assert est.model_.n_trees == 12
    one_go = fit_checked(cls(n_estimators=12, t=0.7, client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    assert_refit_identical(est, one_go)
    Xo, yo, wo = in_training_order(est, [X, y, w], sizes)
    local12 = cls._local_cls(n_estimators=12, t=0.7, **kw).fit(Xo, yo, sample_weight=wo)
    assert_same_model(est, local12)
    # A model trained locally, continued on Dask: its 5 α kept, the same 12-tree model.
    local5 = cls._local_cls(n_estimators=5, t=0.7, **kw).fit(Xo, yo, sample_weight=wo)
    cont = cls._from_local(local5).set_params(client=client, timeout=60, warm_start=True, n_estimators=12)
    fit_checked(cont, dX, dy, sample_weight=dw)
    np.testing.assert_array_equal(cont.estimator_weights_[:5], local5.estimator_weights_)
    assert_same_model(cont, local12)
    # Other data than the model's: the replay refuses (every rank, a clear error).
    other, _, _ = dask_data(n=600, seed=7)
    dO, = place(client, [other], sizes, [0, 1, 1])
    with pytest.raises(ValueError, match="warm start"):
        cls._from_local(local5).set_params(client=client, timeout=60, warm_start=True, n_estimators=12).fit(
            dO, dy, sample_weight=dw
        )
