"""Issue 13: distributed training on Dask (`boostlab.dask`).

Each test module's cluster is its own `distributed.LocalCluster` (2 worker processes × 1 thread):
no external service. The distributed model must be the single-machine model on the same rows
(same trees, α and leaf values within 1e-9 relative: the workers' sums are added in another order
than one machine's), give the same predictions, and be bit-identical from one distributed fit to
the next; a worker killed mid-fit must fail the fit with an error naming it, within the timeout,
leaving no task behind.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import numpy as np
import pytest

if not os.environ.get("CI"):
    # Under CI, scripts/test.sh installs dask: a missing one fails the import below.
    pytest.importorskip("distributed", reason="boostlab.dask needs pip install 'boostlab[dask]'")
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import distributed  # noqa: E402
import pandas as pd  # noqa: E402

import boostlab  # noqa: E402
from boostlab import dask as bdask  # noqa: E402

REL = 1e-9


def _cluster():
    """2 worker processes × 1 thread; without work stealing, so that a partition stays on the
    worker that holds its data (the tests place partitions on purpose)."""
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", worker_dashboard_address=":0"
    )


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.scheduler.work-stealing": False}), _cluster() as cluster, distributed.Client(
        cluster
    ) as c:
        yield c


def _data(n=700, seed=3, classes=2):
    """Numeric columns with missing values, a categorical column with known categories (one of
    them absent from the data) and missing values, labels and positive weights (some zero)."""
    rng = np.random.RandomState(seed)
    a = rng.normal(size=n).round(2)
    b = rng.uniform(-2, 2, size=n)
    b[rng.rand(n) < 0.15] = np.nan
    cat = rng.choice(["red", "green", "blue", "teal"], size=n).astype(object)
    cat[rng.rand(n) < 0.1] = None
    c = pd.Categorical(cat, categories=["blue", "green", "red", "teal", "violet"])
    score = a + np.nan_to_num(b) * 0.6 + (cat == "red") - 0.8 * (cat == "teal") + rng.normal(scale=0.6, size=n)
    if classes == 2:
        y = np.where(score > 0.2, "pos", "neg").astype(object)
    else:
        y = np.where(score > 0.9, 2, np.where(score > -0.4, 1, 0)).astype(np.int64)
    w = rng.uniform(0.2, 2.0, size=n)
    w[rng.rand(n) < 0.05] = 0.0
    X = pd.DataFrame({"a": a, "b": b, "c": c})
    return X, pd.Series(y, name="y"), pd.Series(w, name="w")


def _place(client, frames, sizes, owners):
    """Dask collections of `frames` (pandas objects) split into partitions of `sizes` rows, the
    i-th held by worker `owners[i]` (an index into the sorted worker addresses)."""
    workers = sorted(client.scheduler_info()["workers"])
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    out = []
    for f in frames:
        futs = [
            client.scatter(f.iloc[bounds[i] : bounds[i + 1]], workers=[workers[owners[i]]])
            for i in range(len(sizes))
        ]
        # Persisted, as a user's data would be (the partitions stay where their futures are).
        out.append(client.persist(dd.from_delayed(futs, meta=f.iloc[:0], verify_meta=False)))
    return out


def _in_training_order(est, frames, sizes):
    """The rows of `frames` in the order the distributed fit trained on them: rank by rank (the
    workers sorted by address), each worker's partitions in order (`training_order_`)."""
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    idx = np.concatenate([np.arange(bounds[p], bounds[p + 1]) for p in est.training_order_])
    return [f.iloc[idx] if hasattr(f, "iloc") else f[idx] for f in frames]


def _fit_checked(est, *args, **kwargs):
    """`fit`, then the invariants of every distributed fit's record."""
    est.fit(*args, **kwargs)
    st = est.comm_stats_
    assert st["ranks"] == est.n_workers_ == len(est.workers_) == len(st["per_rank"])
    # Every rank took part in every reduction (the same sequence of calls).
    assert len({(r["reductions"], r["values"]) for r in st["per_rank"]}) == 1
    if st["ranks"] > 1:
        assert st["reductions"] >= est.model_.n_trees
    return est


def _assert_refit_identical(a, b):
    """Two distributed fits of the same data: the same placement and bit-identical models (a fit
    keeps a partition on the worker it last trained on while that worker holds it, also when Dask
    kept a replica elsewhere in between)."""
    assert (a.training_order_, a.workers_) == (b.training_order_, b.workers_)
    assert a.model_.to_json() == b.model_.to_json()


def _assert_same_model(dist, local):
    """Same trees (structure, features, thresholds, categories), α and leaf values within REL."""
    a = json.loads(dist.model_.to_json())
    b = json.loads(local.model_.to_json())
    for m in (a, b):
        m.pop("param_sources", None)
        m.pop("history", None)

    def walk(x, y, path):
        if isinstance(x, dict):
            assert isinstance(y, dict) and x.keys() == y.keys(), path
            for k in x:
                walk(x[k], y[k], f"{path}.{k}")
        elif isinstance(x, list):
            assert isinstance(y, list) and len(x) == len(y), path
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{path}[{i}]")
        elif isinstance(x, float) and not isinstance(x, bool):
            assert isinstance(y, (int, float)), path
            assert abs(x - y) <= REL * max(abs(x), abs(y), 1e-300) or x == y, f"{path}: {x!r} vs {y!r}"
        else:
            assert x == y, f"{path}: {x!r} vs {y!r}"

    walk(a, b, "model")
    np.testing.assert_allclose(dist.estimator_weights_, local.estimator_weights_, rtol=REL, atol=0)


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
def test_issue_13_every_booster_equals_the_local_fit(client, cls, kw):
    classes = 2 if (cls, kw) in BINARY else 3
    X, y, w = _data(classes=classes)
    # Uneven partitions, interleaved over the two workers.
    sizes, owners = [90, 260, 40, 310], [0, 1, 0, 1]
    dX, dy, dw = _place(client, [X, y, w], sizes, owners)
    est = cls(n_estimators=12, random_state=5, client=client, timeout=60, **kw)
    _fit_checked(est, dX, dy, sample_weight=dw)
    assert est.training_order_ == [0, 2, 1, 3]
    local = cls._local_cls(n_estimators=12, random_state=5, **kw).fit(
        *_in_training_order(est, [X, y], sizes), sample_weight=_in_training_order(est, [w], sizes)[0]
    )
    assert est.n_workers_ == 2
    assert est.comm_stats_["reductions"] >= 1
    _assert_same_model(est, local)
    np.testing.assert_array_equal(est.classes_, local.classes_)
    np.testing.assert_array_equal(est.predict(dX).compute().to_numpy(), local.predict(X))
    proba = est.predict_proba(dX)
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), local.predict_proba(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.decision_function(dX).compute(), local.decision_function(X), rtol=1e-9, atol=1e-12)
    # Two distributed fits: bit-identical models.
    again = _fit_checked(cls(n_estimators=12, random_state=5, client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    _assert_refit_identical(again, est)


def test_issue_13_a_partition_stays_on_the_worker_it_last_trained_on():
    """Session 9: the placement rule. A partition goes to its last owner while that worker is
    alive (even when Dask copied or moved it meanwhile), else to its holder with the smallest
    address."""
    saved = dict(bdask._LAST_OWNER)
    bdask._LAST_OWNER.clear()
    try:
        a, b = "tcp://10.0.0.1:1", "tcp://10.0.0.2:1"
        both = {a, b}
        assert bdask._place_partitions(["p0", "p1"], {"p0": [b], "p1": [a]}, both) == [b, a]
        # Replicated everywhere: by address alone both would go to a.
        assert bdask._place_partitions(["p0", "p1"], {"p0": [a, b], "p1": [b, a]}, both) == [b, a]
        # Moved away from its last owner (which is alive): still trained there.
        assert bdask._place_partitions(["p0"], {"p0": [a]}, both) == [b]
        # Its last owner gone: the holder with the smallest address, remembered from then on.
        assert bdask._place_partitions(["p0", "p2"], {"p0": [b, a], "p2": [b]}, {a}) == [a, b]
        assert bdask._place_partitions(["p0"], {"p0": [b, a]}, both) == [a]
        with pytest.raises(bdask.DaskFitError, match="partition p9 has no worker"):
            bdask._place_partitions(["p9"], {}, both)
    finally:
        bdask._LAST_OWNER.clear()
        bdask._LAST_OWNER.update(saved)


def test_issue_13_a_replica_between_two_fits_keeps_them_bit_identical(client):
    """Session 9: after a fit, Dask may keep a copy of a partition on a second worker (here every
    partition is replicated to every worker; by address alone all would go to the first worker:
    one rank, another training order, other last bits). The second fit trains each partition
    where the first did: the same model, bit for bit."""
    X, y, w = _data(n=700, seed=12)
    sizes = [200, 150, 350]
    dX, dy, dw = _place(client, [X, y, w], sizes, [1, 0, 1])
    kw = dict(n_estimators=8, max_leaves=8, random_state=2, client=client, timeout=60)
    first = _fit_checked(bdask.DaskRealAdaBoostClassifier(**kw), dX, dy, sample_weight=dw)
    assert first.training_order_ == [1, 0, 2] and first.n_workers_ == 2
    futures = client.futures_of([dX, dy, dw])
    client.replicate(futures, n=2)
    again = _fit_checked(bdask.DaskRealAdaBoostClassifier(**kw), dX, dy, sample_weight=dw)
    _assert_refit_identical(again, first)


def test_issue_13_t_auto_chooses_the_local_t(client):
    """Session 7: t="auto" on Dask — the inner folds drawn over every row as the local fit draws
    them, each (t, fold) inner fit and the refit distributed: the same t, the same
    `t_selection_` (the error counts are exact without weights: equal scores) and the same model."""
    X, y, w = _data(n=600, seed=7)
    sizes, owners = [130, 250, 220], [0, 1, 0]
    dX, dy, dw = _place(client, [X, y, w], sizes, owners)
    kw = dict(t="auto", t_grid=[0.0, 0.4, 0.8, 1.0], t_folds=3, n_estimators=6, max_leaves=4, random_state=5)
    est = _fit_checked(bdask.DaskTAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy)
    assert est.training_order_ == [0, 2, 1]
    local = boostlab.TAdaBoostClassifier(**kw).fit(*_in_training_order(est, [X, y], sizes))
    assert est.t_selection_ == local.t_selection_
    assert len(set(local.t_selection_["scores"])) > 1, "the grid's errors differ: the choice is tested"
    _assert_same_model(est, local)
    np.testing.assert_array_equal(est.predict(dX).compute().to_numpy(), local.predict(X))
    # With sample weights: the weighted errors summed over the ranks (rounding only).
    est_w = _fit_checked(bdask.DaskTAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    local_w = boostlab.TAdaBoostClassifier(**kw).fit(
        *_in_training_order(est, [X, y], sizes), sample_weight=_in_training_order(est, [w], sizes)[0]
    )
    assert est_w.t_selection_["t"] == local_w.t_selection_["t"]
    np.testing.assert_allclose(est_w.t_selection_["scores"], local_w.t_selection_["scores"], rtol=1e-12)
    _assert_same_model(est_w, local_w)
    again = _fit_checked(bdask.DaskTAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    _assert_refit_identical(again, est_w)


def test_issue_13_eight_reductions_a_round_for_8_leaf_real_adaboost(client):
    """Session 7: 7 histograms and one booster sum a round (the edge sums travel with Z, the
    covers at the end of the fit), counted by `comm_stats_` (a 12-round fit minus a 4-round one:
    the set-up's and the end's calls cancel); every reduction's payload is what rank 0 moved."""
    X, y, _ = _data(n=2000, seed=5)
    dX, dy = _place(client, [X, y], [900, 1100], [0, 1])
    fits = {}
    for rounds in (4, 12):
        est = _fit_checked(
            bdask.DaskRealAdaBoostClassifier(n_estimators=rounds, max_leaves=8, client=client, timeout=60), dX, dy
        )
        assert est.model_.n_trees == rounds
        assert all(len(t["leaf_values"]) == 8 for t in json.loads(est.model_.to_json())["trees"])
        fits[rounds] = est.comm_stats_
    assert fits[12]["reductions"] - fits[4]["reductions"] == 8 * 8
    st = fits[12]
    # A star of 2 ranks: rank 0 receives and sends each reduced vector once.
    assert st["bytes_through_rank0"] == 2 * 8 * st["values_reduced"]


def test_issue_13_a_worker_with_only_an_empty_partition(client):
    X, y, w = _data(n=500, seed=11)
    # Worker 1 holds one partition, with no rows: it trains on an empty shard.
    dX, dy, dw = _place(client, [X, y, w], [200, 0, 300], [0, 1, 0])
    est = bdask.DaskRealAdaBoostClassifier(n_estimators=10, max_leaves=8, client=client, timeout=60)
    _fit_checked(est, dX, dy, sample_weight=dw)
    assert est.training_order_ == [0, 2, 1]
    Xo, yo, wo = _in_training_order(est, [X, y, w], [200, 0, 300])
    local = boostlab.RealAdaBoostClassifier(n_estimators=10, max_leaves=8).fit(Xo, yo, sample_weight=wo)
    assert est.n_workers_ == 2
    _assert_same_model(est, local)
    # All the data on one worker: the other one is left out (one rank).
    dX1, dy1 = _place(client, [X, y], [250, 250], [1, 1])
    one = _fit_checked(bdask.DaskRealAdaBoostClassifier(n_estimators=10, max_leaves=8, client=client), dX1, dy1)
    assert one.n_workers_ == 1
    _assert_same_model(one, boostlab.RealAdaBoostClassifier(n_estimators=10, max_leaves=8).fit(X, y))


def test_issue_13_dask_arrays_multilabel_save_load_to_local(client, tmp_path):
    rng = np.random.RandomState(2)
    n = 600
    X = rng.normal(size=(n, 5))
    X[rng.rand(n, 5) < 0.05] = np.nan
    Y = np.stack([np.nan_to_num(X[:, 0]) > 0, np.nan_to_num(X[:, 1] + X[:, 2]) > 0.3, np.nan_to_num(X[:, 3]) < -0.5], axis=1)
    Y = Y.astype(np.int64)
    dX = da.from_array(X, chunks=((100, 350, 150), (2, 3)))
    dY = da.from_array(Y, chunks=(200, 3))
    est = _fit_checked(bdask.DaskAdaBoostMHClassifier(n_estimators=8, max_leaves=4, client=client), dX, dY)
    local = boostlab.AdaBoostMHClassifier(n_estimators=8, max_leaves=4).fit(
        *_in_training_order(est, [X, Y], [100, 350, 150])
    )
    _assert_same_model(est, local)
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


def test_issue_13_unaligned_buffers_are_copied():
    """Columns deserialised from the network can be contiguous but unaligned: they are copied
    (they used to reach the extension as they were and be refused)."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = boostlab.RealAdaBoostClassifier(n_estimators=5).fit(X, y)
    raw = bytearray(X.nbytes + 1)
    U = np.frombuffer(raw, dtype=np.float64, offset=1, count=X.size).reshape(X.shape)
    U[...] = X
    assert not U.flags.aligned
    np.testing.assert_array_equal(est.decision_function(U), est.decision_function(X))
    frame = pd.DataFrame({"a": U[:, 0], "b": U[:, 1], "c": U[:, 2]}, copy=False)
    local = boostlab.RealAdaBoostClassifier(n_estimators=5).fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    np.testing.assert_array_equal(local.predict(frame), local.predict(pd.DataFrame(X, columns=["a", "b", "c"])))


def _binned_shard(parts, meta, full_columns):
    """A rank's shard from `parts` (the worker's function, run here), and the bins of the same
    rows binned in one piece (`full_columns`, the concatenated rows) with the same mapper."""
    from boostlab import _boostlab

    names = meta["feature_names"]
    params_json = json.dumps({"max_bins": 255})
    n = sum(len(p[2]) for p in parts)
    summary = bdask._shard_summary(parts, dict(meta, params_json=params_json, rank_offsets=[0], n_rows=n), 0, 0.0, 0.0)
    one_piece = _boostlab.shard_summary(names, full_columns, params_json, 0, n, bdask._rank_weights(parts, meta))
    assert summary == one_piece  # the summary of the partitions is that of the concatenated rows
    mapper = _boostlab.bin_mapper_from_summaries(names, [summary], params_json)
    shard = bdask._assemble_shard(parts, meta, mapper)
    return shard, _boostlab.bin_shard(names, full_columns, mapper).bins()


def test_issue_13_a_ranks_shard_is_its_bins_without_a_float_copy():
    """Session 8: a rank's shard is built from its partitions where they are: its features are the
    bins (n × d bytes, counted by Dask through `__sizeof__`) and no float matrix is kept; the
    bins (and the binning summary) are those of the partitions' rows concatenated — float32
    blocks (one empty) and DataFrame partitions with a categorical column alike."""
    rng = np.random.RandomState(0)
    n, d = 3000, 5
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[rng.rand(n, d) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) > 0).astype(np.int64)
    cuts = [0, 1000, 1000, n]
    meta = {
        "feature_names": [f"f{j}" for j in range(d)], "kinds": None, "levels": None, "kind": "classes",
        "classes": np.array([0, 1]), "weighted": False,
    }
    parts = [(i, X[a:b], y[a:b], None) for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]
    shard, want = _binned_shard(parts, meta, bdask._part_columns(X, None, None))
    bins = shard["bins"]
    assert bins.n_rows == n and bins.nbytes == n * d and sys.getsizeof(bins) >= n * d
    kept = [v for v in shard.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    assert kept == [] and shard["w"] is None
    np.testing.assert_array_equal(bins.bins(), want)
    assert want.max() > 100  # real quantile bins, not a degenerate case

    frame, labels, weights = _data(n=900, seed=4)
    levels = [None, None, sorted({str(v) for v in frame["c"].dropna()})]
    meta = dict(meta, feature_names=["a", "b", "c"], kinds=["numeric", "numeric", "categorical"], levels=levels,
                classes=np.array(["neg", "pos"], dtype=object), weighted=True)
    parts = [(i, frame.iloc[a:b], labels.iloc[a:b], weights.iloc[a:b]) for i, (a, b) in enumerate(zip([0, 400], [400, 900]))]
    shard, want = _binned_shard(parts, meta, bdask._part_columns(frame, meta["kinds"], levels))
    np.testing.assert_array_equal(shard["bins"].bins(), want)
    assert shard["bins"].nbytes == 900 * 3
    np.testing.assert_array_equal(shard["w"], weights.to_numpy())
    np.testing.assert_array_equal(shard["y"], (labels == "pos").to_numpy().astype(np.int64))


def test_issue_13_parameters_are_the_local_ones(client):
    from sklearn.base import clone

    est = bdask.DaskTAdaBoostClassifier(n_estimators=7, t=0.5, timeout=9.5)
    p = est.get_params()
    local = boostlab.TAdaBoostClassifier().get_params()
    assert set(p) == set(local) | {"client", "timeout", "transport"}
    assert p["t"] == 0.5 and p["timeout"] == 9.5 and p["client"] is None
    assert clone(est).get_params() == p
    X, y, _ = _data(n=100)
    dX, dy = dd.from_pandas(X, npartitions=2), dd.from_pandas(y, npartitions=2)
    # The local checks run first.
    with pytest.raises(ValueError, match="invalid parameter `t`"):
        bdask.DaskTAdaBoostClassifier(t="x", client=client).fit(dX, dy)
    with pytest.raises(ValueError, match="timeout"):
        bdask.DaskTAdaBoostClassifier(timeout=0, client=client).fit(dX, dy)
    with pytest.raises(TypeError, match="dask array or a dask DataFrame"):
        bdask.DaskAdaBoostClassifier(client=client).fit(X, y)
    with pytest.raises(ValueError, match="Only binary classification"):
        _, y3, _ = _data(n=100, classes=3)
        bdask.DaskAdaBoostClassifier(client=client).fit(dX, dd.from_pandas(y3, npartitions=2))
    unknown = dX.assign(c=dX["c"].cat.as_unknown())
    with pytest.raises(ValueError, match="unknown categories"):
        bdask.DaskAdaBoostClassifier(client=client).fit(unknown, dy)
    # A validation set's unseen labels.
    other = dd.from_pandas(y.replace("pos", "other"), npartitions=2)
    with pytest.raises(ValueError, match="labels not seen in training"):
        bdask.DaskAdaBoostClassifier(n_iter_no_change=2, client=client).fit(dX, dy, eval_set=[(dX, other)])


@pytest.mark.parametrize(
    "cls, kw, metric",
    [
        (bdask.DaskRealAdaBoostClassifier, {"max_leaves": 8}, None),
        (bdask.DaskSecBoostClassifier, {"max_leaves": 4}, "loss"),
        (bdask.DaskAdaBoostMHClassifier, {"max_leaves": 4}, "hamming"),
    ],
    ids=["real-error", "secboost-loss", "mh-hamming"],
)
def test_issue_13_early_stopping_on_a_dask_eval_set(client, cls, kw, metric):
    """Validation rows spread over the ranks (one worker holds none of them in the second
    case): the metric's sums are added over the ranks each round, every rank stops at the same
    round, and the model is the local fit's with the same validation data."""
    classes = 3 if cls is bdask.DaskAdaBoostMHClassifier else 2
    X, y, w = _data(n=700, seed=3, classes=classes)
    Xv, yv, _ = _data(n=300, seed=8, classes=classes)
    sizes = [90, 260, 40, 310]
    dX, dy, dw = _place(client, [X, y, w], sizes, [0, 1, 0, 1])
    kw = dict(kw, n_estimators=300, n_iter_no_change=4, eval_metric=metric, random_state=5)
    placements = [([120, 180], [1, 0]), ([100, 200], [0, 0])]
    for v_sizes, v_owners in placements if metric is None else placements[:1]:
        dXv, dyv = _place(client, [Xv, yv], v_sizes, v_owners)
        est = _fit_checked(cls(client=client, timeout=60, **kw), dX, dy, sample_weight=dw, eval_set=[(dXv, dyv)])
        Xo, yo, wo = _in_training_order(est, [X, y, w], sizes)
        local = cls._local_cls(**kw).fit(Xo, yo, sample_weight=wo, eval_set=[(Xv, yv)])
        # Early stopping did stop, at the same round, with the same best iteration.
        assert local.model_.n_trees < 300 and local.best_iteration_ is not None
        assert "early stopping" in str(local.history_["stop_reason"].iloc[-1])
        assert len(est.history_) == len(local.history_)
        assert est.best_iteration_ == local.best_iteration_
        _assert_same_model(est, local)
        np.testing.assert_allclose(
            est.history_["valid_metric"].to_numpy(), local.history_["valid_metric"].to_numpy(), rtol=REL, atol=0
        )
        np.testing.assert_array_equal(est.predict(dX).compute().to_numpy(), local.predict(X))


def test_issue_13_early_stopping_with_validation_fraction(client):
    """`validation_fraction` holds out the local estimator's rows (the same stratified, seeded
    split of all the rows): the model equals the local estimator's, whose training rows come in
    another order (sums round differently: within REL)."""
    X, y, w = _data(n=800, seed=4)
    sizes = [300, 100, 250, 150]
    dX, dy, dw = _place(client, [X, y, w], sizes, [1, 0, 0, 1])
    kw = dict(n_estimators=300, max_leaves=8, n_iter_no_change=3, validation_fraction=0.25, random_state=9)
    est = _fit_checked(bdask.DaskRealAdaBoostClassifier(client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    local = boostlab.RealAdaBoostClassifier(**kw).fit(X, y, sample_weight=w)
    assert local.model_.n_trees < 300 and "early stopping" in str(local.history_["stop_reason"].iloc[-1])
    assert est.best_iteration_ == local.best_iteration_ and len(est.history_) == len(local.history_)
    _assert_same_model(est, local)
    np.testing.assert_array_equal(est.history_["valid_metric"].to_numpy(), local.history_["valid_metric"].to_numpy())


def test_issue_13_warm_start_on_dask(client):
    """warm_start: every rank replays the fitted trees on its rows, then boosting goes on; the
    model is the one trained in one go (bit for bit on Dask, within REL of the local one), also
    when the model to continue was trained locally."""
    X, y, w = _data(n=600, seed=6)
    sizes = [250, 100, 250]
    dX, dy, dw = _place(client, [X, y, w], sizes, [0, 1, 1])
    kw = dict(max_leaves=4, random_state=3)
    cls = bdask.DaskTAdaBoostClassifier
    est = cls(n_estimators=5, warm_start=True, t=0.7, client=client, timeout=60, **kw)
    _fit_checked(est, dX, dy, sample_weight=dw)
    est.set_params(n_estimators=12)
    _fit_checked(est, dX, dy, sample_weight=dw)
    assert est.model_.n_trees == 12
    one_go = _fit_checked(cls(n_estimators=12, t=0.7, client=client, timeout=60, **kw), dX, dy, sample_weight=dw)
    _assert_refit_identical(est, one_go)
    Xo, yo, wo = _in_training_order(est, [X, y, w], sizes)
    local12 = cls._local_cls(n_estimators=12, t=0.7, **kw).fit(Xo, yo, sample_weight=wo)
    _assert_same_model(est, local12)
    # A model trained locally, continued on Dask: its 5 α kept, the same 12-tree model.
    local5 = cls._local_cls(n_estimators=5, t=0.7, **kw).fit(Xo, yo, sample_weight=wo)
    cont = cls._from_local(local5).set_params(client=client, timeout=60, warm_start=True, n_estimators=12)
    _fit_checked(cont, dX, dy, sample_weight=dw)
    np.testing.assert_array_equal(cont.estimator_weights_[:5], local5.estimator_weights_)
    _assert_same_model(cont, local12)
    # Other data than the model's: the replay refuses (every rank, a clear error).
    other, _, _ = _data(n=600, seed=7)
    dO, = _place(client, [other], sizes, [0, 1, 1])
    with pytest.raises(ValueError, match="warm start"):
        cls._from_local(local5).set_params(client=client, timeout=60, warm_start=True, n_estimators=12).fit(
            dO, dy, sample_weight=dw
        )


def test_issue_13_t_schedule_and_callbacks_on_dask(client):
    """A t schedule retempers every rank alike (the local model); the callbacks run on the client
    with every round's record (rank 0 publishes them), and one that raises stops the fit with its
    exception, as locally, leaving no model and no task."""
    X, y, w = _data(n=500, seed=12)
    sizes = [200, 300]
    dX, dy, dw = _place(client, [X, y, w], sizes, [1, 0])
    kw = dict(n_estimators=10, max_leaves=4, t_schedule="linear:0.5:1.2:6", random_state=2)
    seen, local_seen = [], []
    est = bdask.DaskTAdaBoostClassifier(client=client, timeout=60, callbacks=[seen.append], **kw)
    _fit_checked(est, dX, dy, sample_weight=dw)
    Xo, yo, wo = _in_training_order(est, [X, y, w], sizes)
    local = boostlab.TAdaBoostClassifier(callbacks=[local_seen.append], **kw).fit(Xo, yo, sample_weight=wo)
    _assert_same_model(est, local)
    assert [r["round"] for r in seen] == [r["round"] for r in local_seen] == list(range(1, 11))
    assert [r["t"] for r in seen] == [r["t"] for r in local_seen]  # the schedule's temperatures
    assert len({r["t"] for r in seen}) == 6

    class Enough(Exception):
        pass

    def stop_at_3(record):
        if record["round"] == 3:
            raise Enough("stopped by a callback")

    est2 = bdask.DaskTAdaBoostClassifier(n_estimators=1_000_000, max_leaves=4, client=client, timeout=60, callbacks=[stop_at_3])
    t0 = time.monotonic()
    with pytest.raises(Enough):
        est2.fit(dX, dy)
    assert time.monotonic() - t0 < 30
    assert not hasattr(est2, "model_")
    deadline = time.monotonic() + 15
    while sum(len(v) for v in client.processing().values()):
        assert time.monotonic() < deadline, client.processing()
        time.sleep(0.2)


@pytest.mark.parametrize("transport", ["tcp", "dask"])
def test_issue_13_a_worker_killed_mid_fit(transport):
    """The last test: it kills a worker (of its own cluster), with either transport: DaskFitError
    naming it within the timeout, no task processing, no worker thread busy, no listener left."""
    timeout = 20.0
    with dask.config.set({"distributed.scheduler.work-stealing": False}), _cluster() as cluster, distributed.Client(
        cluster
    ) as c:
        X, y, _ = _data(n=400)
        dX, dy = _place(c, [X, y], [200, 200], [0, 1])
        victim = sorted(c.scheduler_info()["workers"])[1]
        # A fit far too long to end by itself (about a millisecond of exchanges per round).
        est = bdask.DaskRealAdaBoostClassifier(
            n_estimators=1_000_000, max_leaves=8, client=c, timeout=timeout, transport=transport
        )

        def kill():
            # Wait until the ranks train, then end the victim's process.
            for _ in range(400):
                running = [k for v in c.processing().values() for k in v if "boostlab-fit" in str(k)]
                if len(running) >= 2:
                    break
                time.sleep(0.05)
            time.sleep(1.0)
            try:
                c.run(os._exit, 1, workers=[victim])
            except Exception:
                pass

        killer = threading.Thread(target=kill, daemon=True)
        killer.start()
        t0 = time.monotonic()
        with pytest.raises(bdask.DaskFitError, match=victim.replace(".", r"\.")) as err:
            est.fit(dX, dy)
        elapsed = time.monotonic() - t0
        assert "rank 1" in str(err.value)
        print(f"\nkilled worker (transport={transport}): {err.value} (after {elapsed:.1f} s)")
        killer.join()
        assert elapsed < timeout + 15, elapsed
        assert not hasattr(est, "model_")
        # No stray task: nothing is processing, no worker thread still runs a rank, no listener.
        deadline = time.monotonic() + 15
        while True:
            busy = sum(len(v) for v in c.processing().values())
            threads = c.run(lambda dask_worker: len(dask_worker.active_threads))
            hubs = c.run(bdask._hub_count)
            if busy == 0 and not any(threads.values()) and not any(hubs.values()):
                break
            assert time.monotonic() < deadline, (busy, threads, hubs)
            time.sleep(0.2)
