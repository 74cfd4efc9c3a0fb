"""Data, placement and comparisons shared by the Dask tests (imported only where `distributed` is
installed)."""

from __future__ import annotations

import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd

from helpers import REL, assert_same_model  # noqa: F401 (the Dask tests import them from here)


def local_cluster():
    """2 worker processes × 1 thread. Create it without work stealing (`dask.config.set`), so that
    a partition stays on the worker that holds its data (the tests place partitions on purpose)."""
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", worker_dashboard_address=":0"
    )


def dask_data(n=700, seed=3, classes=2):
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


def place(client, frames, sizes, owners):
    """Dask collections of `frames` (pandas objects) split into partitions of `sizes` rows, the
    i-th held by worker `owners[i]` (an index into the sorted worker addresses)."""
    # (Every worker the placement names, registered: a worker the nanny is restarting is briefly
    # missing from the scheduler's list.)
    client.wait_for_workers(max(owners) + 1, timeout=60)
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


def in_training_order(est, frames, sizes):
    """The rows of `frames` in the order the distributed fit trained on them: rank by rank (the
    workers sorted by address), each worker's partitions in order (`training_order_`)."""
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    idx = np.concatenate([np.arange(bounds[p], bounds[p + 1]) for p in est.training_order_])
    return [f.iloc[idx] if hasattr(f, "iloc") else f[idx] for f in frames]


def fit_checked(est, *args, **kwargs):
    """`fit`, then the invariants of every distributed fit's record."""
    est.fit(*args, **kwargs)
    st = est.comm_stats_
    assert st["ranks"] == est.n_workers_ == len(est.workers_) == len(st["per_rank"])
    # Every rank took part in every reduction (the same sequence of calls).
    assert len({(r["reductions"], r["values"]) for r in st["per_rank"]}) == 1
    if st["ranks"] > 1:
        assert st["reductions"] >= est.model_.n_trees
    return est


def assert_refit_identical(a, b):
    """Two distributed fits of the same data: the same placement and bit-identical models (a fit
    keeps a partition on the worker it last trained on while that worker holds it, also when Dask
    kept a replica elsewhere in between)."""
    assert (a.training_order_, a.workers_) == (b.training_order_, b.workers_)
    assert a.model_.to_json() == b.model_.to_json()
