"""Distributed training on Dask (`boostlab.dask`): the distributed model is the single-machine model
on the same rows (same trees, α and leaf values within 1e-9 relative: the workers' sums are added in
another order than one machine's), gives the same predictions, and is bit-identical from one
distributed fit to the next. The tests share one `distributed.LocalCluster` (2 worker processes ×
1 thread, the `client` fixture): no external service."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

if not os.environ.get("CI"):
    # Under CI, scripts/test.sh installs dask: a missing one fails the import below.
    pytest.importorskip("distributed", reason="boostlab.dask needs pip install 'boostlab[dask]'")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402

import boostlab  # noqa: E402
from boostlab import dask as bdask  # noqa: E402

from dask_helpers import (  # noqa: E402
    assert_refit_identical,
    assert_same_model,
    dask_data,
    fit_checked,
    in_training_order,
    place,
)

pytestmark = pytest.mark.dask


BINARY = [
    (bdask.DaskAdaBoostClassifier, {"max_leaves": 4}),
    (bdask.DaskRealAdaBoostClassifier, {"max_leaves": 8}),
    (bdask.DaskTAdaBoostClassifier, {"t": 0.6, "max_leaves": 4}),
    (bdask.DaskSecBoostClassifier, {"max_leaves": 4}),
]


MULTI = [
    (bdask.DaskAdaBoostMHClassifier, {"max_leaves": 4}),
    (bdask.DaskAdaBoostMOClassifier, {"max_leaves": 4}),
    (bdask.DaskAdaBoostMRClassifier, {"max_leaves": 4}),
]


@pytest.mark.parametrize(
    "cls, kw", BINARY + MULTI, ids=[c.__name__ for c, _ in BINARY + MULTI]
)
def test_every_booster_equals_the_local_fit(client, cls, kw):
    classes = 2 if (cls, kw) in BINARY else 3
    X, y, w = dask_data(classes=classes)
    # Uneven partitions, interleaved over the two workers.
    sizes, owners = [90, 260, 40, 310], [0, 1, 0, 1]
    dX, dy, dw = place(client, [X, y, w], sizes, owners)
    est = cls(n_estimators=12, random_state=5, client=client, timeout=60, **kw)
    fit_checked(est, dX, dy, sample_weight=dw)
    assert est.training_order_ == [0, 2, 1, 3]
    local = cls._local_cls(n_estimators=12, random_state=5, **kw).fit(
        *in_training_order(est, [X, y], sizes), sample_weight=in_training_order(est, [w], sizes)[0]
    )
    assert est.n_workers_ == 2
    assert est.comm_stats_["reductions"] >= 1
    assert_same_model(est, local)
    np.testing.assert_array_equal(est.classes_, local.classes_)
    np.testing.assert_array_equal(est.predict(dX).compute().to_numpy(), local.predict(X))
    proba = est.predict_proba(dX)
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), local.predict_proba(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.decision_function(dX).compute(), local.decision_function(X), rtol=1e-9, atol=1e-12)
    # Two distributed fits: bit-identical models.
    again = fit_checked(cls(n_estimators=12, random_state=5, client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    assert_refit_identical(again, est)


def test_t_auto_chooses_the_local_t(client):
    """t="auto" on Dask — the inner folds drawn over every row as the local fit draws
    them, each (t, fold) inner fit and the refit distributed: the same t, the same
    `t_selection_` (the error counts are exact without weights: equal scores) and the same model."""
    X, y, w = dask_data(n=600, seed=7)
    sizes, owners = [130, 250, 220], [0, 1, 0]
    dX, dy, dw = place(client, [X, y, w], sizes, owners)
    kw = dict(t="auto", t_grid=[0.0, 0.4, 0.8, 1.0], t_folds=3, n_estimators=6, max_leaves=4, random_state=5)
    est = fit_checked(bdask.DaskTAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy)
    assert est.training_order_ == [0, 2, 1]
    local = boostlab.TAdaBoostClassifier(**kw).fit(*in_training_order(est, [X, y], sizes))
    assert est.t_selection_ == local.t_selection_
    assert len(set(local.t_selection_["scores"])) > 1, "the grid's errors differ: the choice is tested"
    assert_same_model(est, local)
    np.testing.assert_array_equal(est.predict(dX).compute().to_numpy(), local.predict(X))
    # With sample weights: the weighted errors summed over the ranks (rounding only).
    est_w = fit_checked(bdask.DaskTAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    local_w = boostlab.TAdaBoostClassifier(**kw).fit(
        *in_training_order(est, [X, y], sizes), sample_weight=in_training_order(est, [w], sizes)[0]
    )
    assert est_w.t_selection_["t"] == local_w.t_selection_["t"]
    np.testing.assert_allclose(est_w.t_selection_["scores"], local_w.t_selection_["scores"], rtol=1e-12)
    assert_same_model(est_w, local_w)
    again = fit_checked(bdask.DaskTAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    assert_refit_identical(again, est_w)


def test_eight_reductions_a_round_for_8_leaf_real_adaboost(client):
    """7 histograms and one booster sum a round (the edge sums travel with Z, the
    covers at the end of the fit), counted by `comm_stats_` (a 12-round fit minus a 4-round one:
    the set-up's and the end's calls cancel); every reduction's payload is what rank 0 moved."""
    X, y, _ = dask_data(n=2000, seed=5)
    dX, dy = place(client, [X, y], [900, 1100], [0, 1])
    fits = {}
    for rounds in (4, 12):
        est = fit_checked(
            # The boosting rounds' own reductions (calibration's fold fits would add theirs).
            bdask.DaskRealAdaBoostClassifier(
                n_estimators=rounds, max_leaves=8, calibration=None, client=client, timeout=60
            ),
            dX,
            dy,
        )
        assert est.model_.n_trees == rounds
        assert all(len(t["leaf_values"]) == 8 for t in json.loads(est.model_.to_json())["trees"])
        fits[rounds] = est.comm_stats_
    assert fits[12]["reductions"] - fits[4]["reductions"] == 8 * 8
    st = fits[12]
    # A star of 2 ranks: rank 0 receives and sends each reduced vector once.
    assert st["bytes_through_rank0"] == 2 * 8 * st["values_reduced"]


def test_a_worker_with_only_an_empty_partition(client):
    X, y, w = dask_data(n=500, seed=11)
    # Worker 1 holds one partition, with no rows: it trains on an empty shard.
    dX, dy, dw = place(client, [X, y, w], [200, 0, 300], [0, 1, 0])
    est = bdask.DaskRealAdaBoostClassifier(n_estimators=10, max_leaves=8, client=client, timeout=60)
    fit_checked(est, dX, dy, sample_weight=dw)
    assert est.training_order_ == [0, 2, 1]
    Xo, yo, wo = in_training_order(est, [X, y, w], [200, 0, 300])
    local = boostlab.RealAdaBoostClassifier(n_estimators=10, max_leaves=8).fit(Xo, yo, sample_weight=wo)
    assert est.n_workers_ == 2
    assert_same_model(est, local)
    # All the data on one worker: the other one is left out (one rank).
    dX1, dy1 = place(client, [X, y], [250, 250], [1, 1])
    one = fit_checked(bdask.DaskRealAdaBoostClassifier(n_estimators=10, max_leaves=8, client=client), dX1, dy1)
    assert one.n_workers_ == 1
    assert_same_model(one, boostlab.RealAdaBoostClassifier(n_estimators=10, max_leaves=8).fit(X, y))


def test_dask_arrays_multilabel_save_load_to_local(client, tmp_path):
    rng = np.random.RandomState(2)
    n = 600
    X = rng.normal(size=(n, 5))
    X[rng.rand(n, 5) < 0.05] = np.nan
    Y = np.stack(
        [np.nan_to_num(X[:, 0]) > 0, np.nan_to_num(X[:, 1] + X[:, 2]) > 0.3, np.nan_to_num(X[:, 3]) < -0.5], axis=1
    )
    Y = Y.astype(np.int64)
    dX = da.from_array(X, chunks=((100, 350, 150), (2, 3)))
    dY = da.from_array(Y, chunks=(200, 3))
    est = fit_checked(bdask.DaskAdaBoostMHClassifier(n_estimators=8, max_leaves=4, client=client), dX, dY)
    local = boostlab.AdaBoostMHClassifier(n_estimators=8, max_leaves=4).fit(
        *in_training_order(est, [X, Y], [100, 350, 150])
    )
    assert_same_model(est, local)
    pred = est.predict(dX)
    assert isinstance(pred, da.Array) and pred.shape == (n, 3)
    np.testing.assert_array_equal(pred.compute(), local.predict(X))
    # to_local(): the fitted local estimator, same parameters and model.
    loc = est.to_local()
    assert type(loc) is boostlab.AdaBoostMHClassifier
    assert loc.get_params() == local.get_params()
    np.testing.assert_array_equal(loc.predict(X), local.predict(X))
    # Model files: as the local estimators'.
    path = tmp_path / "m.json"
    est.save_model(path)
    back = bdask.DaskAdaBoostMHClassifier.load_model(path)
    assert isinstance(back, bdask.DaskAdaBoostMHClassifier)
    np.testing.assert_array_equal(back.predict(dX).compute(), local.predict(X))
    assert type(boostlab.load_model(path)) is boostlab.AdaBoostMHClassifier


def test_parameters_are_the_local_ones(client):
    from sklearn.base import clone

    est = bdask.DaskTAdaBoostClassifier(n_estimators=7, t=0.5, timeout=9.5)
    p = est.get_params()
    local = boostlab.TAdaBoostClassifier().get_params()
    assert set(p) == set(local) | {"client", "timeout", "transport"}
    assert p["t"] == 0.5 and p["timeout"] == 9.5 and p["client"] is None
    assert clone(est).get_params() == p
    X, y, _ = dask_data(n=100)
    dX, dy = dd.from_pandas(X, npartitions=2), dd.from_pandas(y, npartitions=2)
    # The local checks run first.
    with pytest.raises(ValueError, match="invalid parameter `t`"):
        bdask.DaskTAdaBoostClassifier(t="x", client=client).fit(dX, dy)
    with pytest.raises(ValueError, match="timeout"):
        bdask.DaskTAdaBoostClassifier(timeout=0, client=client).fit(dX, dy)
    with pytest.raises(TypeError, match="dask array or a dask DataFrame"):
        bdask.DaskAdaBoostClassifier(client=client).fit(X, y)
    with pytest.raises(ValueError, match="Only binary classification"):
        _, y3, _ = dask_data(n=100, classes=3)
        bdask.DaskAdaBoostClassifier(client=client).fit(dX, dd.from_pandas(y3, npartitions=2))
    unknown = dX.assign(c=dX["c"].cat.as_unknown())
    with pytest.raises(ValueError, match="unknown categories"):
        bdask.DaskAdaBoostClassifier(client=client).fit(unknown, dy)
    # A validation set's unseen labels.
    other = dd.from_pandas(y.replace("pos", "other"), npartitions=2)
    with pytest.raises(ValueError, match="labels not seen in training"):
        bdask.DaskAdaBoostClassifier(n_iter_no_change=2, client=client).fit(dX, dy, eval_set=[(dX, other)])


def test_t_schedule_and_callbacks_on_dask(client):
    """A t schedule retempers every rank alike (the local model); the callbacks run on the client
    with every round's record (rank 0 publishes them), and one that raises stops the fit with its
    exception, as locally, leaving no model and no task."""
    X, y, w = dask_data(n=500, seed=12)
    sizes = [200, 300]
    dX, dy, dw = place(client, [X, y, w], sizes, [1, 0])
    kw = dict(n_estimators=10, max_leaves=4, t_schedule="linear:0.5:1.2:6", random_state=2)
    seen, local_seen = [], []
    est = bdask.DaskTAdaBoostClassifier(client=client, timeout=60, callbacks=[seen.append], **kw)
    fit_checked(est, dX, dy, sample_weight=dw)
    Xo, yo, wo = in_training_order(est, [X, y, w], sizes)
    local = boostlab.TAdaBoostClassifier(callbacks=[local_seen.append], **kw).fit(Xo, yo, sample_weight=wo)
    assert_same_model(est, local)
    assert [r["round"] for r in seen] == [r["round"] for r in local_seen] == list(range(1, 11))
    assert [r["t"] for r in seen] == [r["t"] for r in local_seen]  # the schedule's temperatures
    assert len({r["t"] for r in seen}) == 6

    class Enough(Exception):
        pass

    def stop_at_3(record):
        if record["round"] == 3:
            raise Enough("stopped by a callback")

    est2 = bdask.DaskTAdaBoostClassifier(
        n_estimators=1_000_000, max_leaves=4, client=client, timeout=60, callbacks=[stop_at_3]
    )
    t0 = time.monotonic()
    with pytest.raises(Enough):
        est2.fit(dX, dy)
    assert time.monotonic() - t0 < 30
    assert not hasattr(est2, "model_")
    deadline = time.monotonic() + 15
    while sum(len(v) for v in client.processing().values()):
        assert time.monotonic() < deadline, client.processing()
        time.sleep(0.2)


def test_partitions_with_different_column_counts_are_refused(client):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] > 0).astype(np.int64)
    # Two pieces declared 100 × 4, the second with a column fewer: dask cannot see the mismatch.
    parts = [
        da.from_delayed(client.scatter(X[:100]), shape=(100, 4), dtype=np.float64),
        da.from_delayed(client.scatter(X[100:, :-1]), shape=(100, 4), dtype=np.float64),
    ]
    dX = da.concatenate(parts, axis=0)
    dy = da.from_array(y, chunks=100)
    est = bdask.DaskAdaBoostClassifier(n_estimators=3, client=client, timeout=60)
    with pytest.raises(ValueError, match=r"partition 1 of X has 3 columns, but X has 4"):
        est.fit(dX, dy)


def test_arrow_backed_partitions_equal_the_local_fit(client):
    # pandas partitions with Arrow dtypes (pyarrow strings and floats), as dask-expr makes them.
    pa = pytest.importorskip("pyarrow")
    import pandas as pd

    from helpers import core_model

    X, y, _ = dask_data()
    arrow = X.assign(
        a=X["a"].astype(pd.ArrowDtype(pa.float64())),
        c=pd.Series(X["c"].astype(object), dtype=pd.ArrowDtype(pa.string())),
    )
    sizes, owners = [300, 400], [0, 1]
    dX, dy = place(client, [arrow, y], sizes, owners)
    kw = {"n_estimators": 8, "max_leaves": 4, "random_state": 5}
    est = fit_checked(bdask.DaskAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy)
    local_X, local_y = in_training_order(est, [X, y], sizes)
    local = boostlab.AdaBoostClassifier(**kw).fit(local_X, local_y)
    assert_same_model(est, local)
    # The local estimator reads the Arrow-backed frame through Arrow: the same model.
    from_arrow = boostlab.AdaBoostClassifier(**kw).fit(*in_training_order(est, [arrow, y], sizes))
    assert core_model(from_arrow) == core_model(local)
    np.testing.assert_array_equal(est.predict(dX).compute().to_numpy(), local.predict(X))
