"""Where the data train: a partition stays on the worker it last trained on, a rank's shard is its
bins (no float copy), and buffers that arrive unaligned are copied."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

if not os.environ.get("CI"):
    # Under CI, scripts/test.sh installs dask: a missing one fails the import below.
    pytest.importorskip("distributed", reason="boostlab.dask needs pip install 'boostlab[dask]'")
import pandas as pd  # noqa: E402

import boostlab  # noqa: E402
from boostlab import dask as bdask  # noqa: E402
from boostlab.dask import _partitions, _placement  # noqa: E402

from dask_helpers import assert_refit_identical, dask_data, fit_checked, place  # noqa: E402

pytestmark = pytest.mark.dask


def test_a_partition_stays_on_the_worker_it_last_trained_on():
    """The placement rule. A partition goes to its last owner while that worker is
    alive (even when Dask copied or moved it meanwhile), else to its holder with the smallest
    address."""
    saved = dict(_placement._LAST_OWNER)
    _placement._LAST_OWNER.clear()
    try:
        a, b = "tcp://10.0.0.1:1", "tcp://10.0.0.2:1"
        both = {a, b}
        assert _placement._place_partitions(["p0", "p1"], {"p0": [b], "p1": [a]}, both) == [b, a]
        # Replicated everywhere: by address alone both would go to a.
        assert _placement._place_partitions(["p0", "p1"], {"p0": [a, b], "p1": [b, a]}, both) == [b, a]
        # Moved away from its last owner (which is alive): still trained there.
        assert _placement._place_partitions(["p0"], {"p0": [a]}, both) == [b]
        # Its last owner gone: the holder with the smallest address, remembered from then on.
        assert _placement._place_partitions(["p0", "p2"], {"p0": [b, a], "p2": [b]}, {a}) == [a, b]
        assert _placement._place_partitions(["p0"], {"p0": [b, a]}, both) == [a]
        with pytest.raises(bdask.DaskFitError, match="partition p9 has no worker"):
            _placement._place_partitions(["p9"], {}, both)
    finally:
        _placement._LAST_OWNER.clear()
        _placement._LAST_OWNER.update(saved)


def test_a_replica_between_two_fits_keeps_them_bit_identical(client):
    """After a fit, Dask may keep a copy of a partition on a second worker (here every
    partition is replicated to every worker; by address alone all would go to the first worker:
    one rank, another training order, other last bits). The second fit trains each partition
    where the first did: the same model, bit for bit."""
    X, y, w = dask_data(n=700, seed=12)
    sizes = [200, 150, 350]
    dX, dy, dw = place(client, [X, y, w], sizes, [1, 0, 1])
    kw = dict(n_estimators=8, max_leaves=8, random_state=2, client=client, timeout=60)
    first = fit_checked(bdask.DaskRealAdaBoostClassifier(**kw), dX, dy, sample_weight=dw)
    assert first.training_order_ == [1, 0, 2] and first.n_workers_ == 2
    futures = client.futures_of([dX, dy, dw])
    client.replicate(futures, n=2)
    again = fit_checked(bdask.DaskRealAdaBoostClassifier(**kw), dX, dy, sample_weight=dw)
    assert_refit_identical(again, first)


def _binned_shard(parts, meta, full_columns):
    """A rank's shard from `parts` (the worker's function, run here), and the bins of the same
    rows binned in one piece (`full_columns`, the concatenated rows) with the same mapper."""
    from boostlab import _boostlab

    names = meta["feature_names"]
    params_json = json.dumps({"max_bins": 255})
    n = sum(len(p[2]) for p in parts)
    shard_meta = dict(meta, params_json=params_json, rank_offsets=[0], n_rows=n)
    summary = _partitions._shard_summary(parts, shard_meta, 0, 0.0, 0.0)
    one_piece = _boostlab.shard_summary(names, full_columns, params_json, 0, n, _partitions._rank_weights(parts, meta))
    assert summary == one_piece  # the summary of the partitions is that of the concatenated rows
    mapper = _boostlab.bin_mapper_from_summaries(names, [summary], params_json)
    shard = _partitions._assemble_shard(parts, meta, mapper)
    return shard, _boostlab.bin_shard(names, full_columns, mapper).bins()


def test_a_ranks_shard_is_its_bins_without_a_float_copy():
    """A rank's shard is built from its partitions where they are: its features are the
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
    shard, want = _binned_shard(parts, meta, _partitions._part_columns(X, None, None))
    bins = shard["bins"]
    assert bins.n_rows == n and bins.nbytes == n * d and sys.getsizeof(bins) >= n * d
    kept = [v for v in shard.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    assert kept == [] and shard["w"] is None
    np.testing.assert_array_equal(bins.bins(), want)
    assert want.max() > 100  # real quantile bins, not a degenerate case

    frame, labels, weights = dask_data(n=900, seed=4)
    levels = [None, None, sorted({str(v) for v in frame["c"].dropna()})]
    meta = dict(meta, feature_names=["a", "b", "c"], kinds=["numeric", "numeric", "categorical"], levels=levels,
                classes=np.array(["neg", "pos"], dtype=object), weighted=True)
    parts = [
        (i, frame.iloc[a:b], labels.iloc[a:b], weights.iloc[a:b])
        for i, (a, b) in enumerate(zip([0, 400], [400, 900]))
    ]
    shard, want = _binned_shard(parts, meta, _partitions._part_columns(frame, meta["kinds"], levels))
    np.testing.assert_array_equal(shard["bins"].bins(), want)
    assert shard["bins"].nbytes == 900 * 3
    np.testing.assert_array_equal(shard["w"], weights.to_numpy())
    np.testing.assert_array_equal(shard["y"], (labels == "pos").to_numpy().astype(np.int64))


def test_unaligned_buffers_are_copied():
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
