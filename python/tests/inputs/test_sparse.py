"""Scipy sparse input is read without densifying. CSR, CSC, COO, sparse arrays, float32
or float64 values, int32 or int64 indices, unsorted or duplicate entries: the model is the dense
model's JSON bit for bit and predictions are equal; the extension reads the CSC arrays in place, and
fitting a large 1 %-dense matrix costs far less memory than its dense form."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

import boostlab
from boostlab._data import csc_form

from helpers import core_model

ESTIMATORS = [
    lambda: boostlab.AdaBoostClassifier(n_estimators=10),
    lambda: boostlab.RealAdaBoostClassifier(n_estimators=10, max_leaves=8),
    lambda: boostlab.TAdaBoostClassifier(n_estimators=10, t=0.8, max_leaves=8),
]


def _sparse(n=5000, p=7, seed=0):
    """A float64 CSC matrix of float32-representable values, 15 % stored: ties, explicit zeros,
    −0.0 and explicit NaN (missing) among them; and a target depending on it. 5000 rows: more
    than one prediction block of 4096 rows."""
    rng = np.random.RandomState(seed)
    D = rng.normal(size=(n, p)).astype(np.float32).astype(np.float64)
    D[:, 1] = np.round(D[:, 1] * 2) / 2  # few distinct values (zeros among them)
    stored = rng.rand(n, p) < 0.15
    stored[:, 3] = rng.rand(n) < 0.6  # a denser column
    D[~stored] = 0.0
    D[stored & (rng.rand(n, p) < 0.05)] = np.nan
    D[stored & (rng.rand(n, p) < 0.03)] = -0.0
    rows, cols = np.nonzero(stored)
    X = sp.csc_matrix((D[rows, cols], (rows, cols)), shape=(n, p))  # explicit zeros kept
    y = (np.nan_to_num(D[:, 0]) + np.nan_to_num(D[:, 1]) * 0.5 + rng.normal(scale=0.3, size=n) > 0.1)
    return X, y.astype(int)


def _unsorted_with_duplicates(X):
    """The same matrix as CSC with each column's entries reversed and its first value split in two
    halves stored twice (halves of a float add back exactly)."""
    X = X.tocsc()
    data, indices, indptr = [], [], [0]
    for j in range(X.shape[1]):
        lo, hi = X.indptr[j], X.indptr[j + 1]
        d, i = list(X.data[lo:hi][::-1]), list(X.indices[lo:hi][::-1])
        if d:
            d = [d[0] / 2, d[0] / 2] + d[1:]
            i = [i[0], i[0]] + i[1:]
        data += d
        indices += i
        indptr.append(len(data))
    out = sp.csc_matrix((np.array(data), np.array(indices, dtype=np.int32), np.array(indptr)), shape=X.shape)
    assert not out.has_canonical_format
    return out


def _int64(X):
    X = X.copy()
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    return X


def _variants(X):
    X32 = X.astype(np.float32)
    return {
        "csc float64": X,
        "csr float64": X.tocsr(),
        "csc float32": X32,
        "csr float32": X32.tocsr(),
        "coo float64": X.tocoo(),
        "csr_array float32": sp.csr_array(X32),
        "csc int64 indices": _int64(X),
        "csr int64 indices float32": _int64(X32.tocsr()),
        "csc unsorted with duplicates": _unsorted_with_duplicates(X),
    }


@pytest.mark.parametrize("make", ESTIMATORS)
def test_sparse_models_equal_the_dense_model_bit_for_bit(make):
    X, y = _sparse()
    dense = X.toarray()
    # Stored NaN and −0.0 (which scipy's `toarray` turns into +0.0: the same bins).
    assert np.isnan(dense).any() and (np.signbit(X.data) & (X.data == 0)).any()
    ref = make().fit(dense, y)
    want = core_model(ref, names=False)
    want_d = ref.decision_function(dense)
    want_p = ref.predict_proba(dense)
    want_s = np.stack(list(ref.staged_decision_function(dense)))
    for name, Xi in _variants(X).items():
        est = make().fit(Xi, y)
        assert core_model(est, names=False) == want, name
        # Prediction from sparse rows (blocks of 4096) equals the dense prediction.
        np.testing.assert_array_equal(est.decision_function(Xi), want_d, err_msg=name)
        np.testing.assert_array_equal(ref.predict_proba(Xi), want_p, err_msg=name)
        np.testing.assert_array_equal(ref.predict(Xi), ref.predict(dense), err_msg=name)
        np.testing.assert_array_equal(np.stack(list(ref.staged_decision_function(Xi))), want_s, err_msg=name)


def test_sampled_binning_from_sparse_equals_dense():
    # More than BIN_SAMPLE_ROWS (200 000) rows: thresholds from the seeded sample of rows.
    rng = np.random.RandomState(3)
    n = 210_000
    X = sp.random(n, 3, density=0.3, format="csr", dtype=np.float64, random_state=rng)
    X.data = np.round(X.data * 1000) / 7  # many distinct values: sampled quantiles
    y = (X[:, 0].toarray().ravel() > 0.2).astype(int)
    a = boostlab.AdaBoostClassifier(n_estimators=3).fit(X, y)
    b = boostlab.AdaBoostClassifier(n_estimators=3).fit(X.toarray(), y)
    assert core_model(a, names=False) == core_model(b, names=False)


def test_the_extension_receives_the_sparse_buffers():
    X, _ = _sparse(n=300)
    for Xi in (X, X.astype(np.float32), _int64(X)):
        form = csc_form(Xi)
        assert form[0] == "csc" and form[1] == Xi.shape[0]
        assert np.shares_memory(form[2], Xi.indptr) and np.shares_memory(form[3], Xi.indices)
        assert np.shares_memory(form[4], Xi.data), "values read in place"
        assert form[4].dtype == Xi.dtype and form[3].dtype == Xi.indices.dtype


def test_sparse_bad_values_are_errors():
    X, y = _sparse(n=300)
    bad = X.copy()
    bad.data[5] = np.inf
    with pytest.raises(ValueError, match="infinity|infinite"):
        boostlab.AdaBoostClassifier(n_estimators=3).fit(bad, y)
    # A matrix whose arrays were broken after construction is an error, not a crash.
    broken = X.copy()
    broken.indices = broken.indices.copy()
    broken.indices[0] = X.shape[0] + 5
    broken.has_canonical_format = True
    with pytest.raises(ValueError, match="malformed CSC matrix"):
        boostlab.AdaBoostClassifier(n_estimators=3).fit(broken, y)


MEMORY_SCRIPT = textwrap.dedent(
    """
    import json, tracemalloc
    import numpy as np, scipy.sparse as sp
    import boostlab

    def status(key):
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key + ":"))

    def reset_peak():
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS

    n, d = 300_000, 400
    rng = np.random.default_rng(0)
    X = sp.random(n, d, density=0.01, format="csr", dtype=np.float32, random_state=rng)
    y = (X[:, 0].toarray().ravel() + rng.random(n) > 0.5).astype(int)
    # The fit's own memory (calibration's fold fits would add a copy of two thirds of the bins,
    # docs/explanation/probabilities.md).
    est = boostlab.AdaBoostClassifier(n_estimators=2, calibration=None)
    out = {"dense_bytes": n * d * 8, "sparse_bytes": X.data.nbytes + X.indices.nbytes}
    tracemalloc.start()
    reset_peak()
    base = status("VmRSS")
    est.fit(X, y)
    out["fit_rss"] = status("VmHWM") - base
    out["fit_traced"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    reset_peak()
    base = status("VmRSS")
    est.decision_function(X)
    out["predict_rss"] = status("VmHWM") - base
    out["predict_traced"] = tracemalloc.get_traced_memory()[1]
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.slow
def test_fitting_a_large_sparse_matrix_never_densifies_it():
    # 300 000 × 400 at 1 % density, float32: 14 MB stored, 960 MB as dense float64 (the former
    # path), 120 MB of bins. A fresh process, so earlier tests do not blur the peak.
    res = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT], capture_output=True, text=True, check=True)
    m = json.loads(res.stdout)
    print(m)
    dense = m["dense_bytes"]
    # The bins (n × d bytes = dense / 8) plus working memory; a dense copy would be 960 MB.
    assert m["fit_rss"] < dense // 4, m
    assert m["predict_rss"] < dense // 20, m
    # numpy allocations: the target, weights and the CSR → CSC copy of the stored values only.
    assert m["fit_traced"] < dense // 20, m
    assert m["predict_traced"] < dense // 20, m
