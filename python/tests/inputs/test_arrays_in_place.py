"""Arrays are read in place. The same values as float32 or float64, in C or Fortran order, as
strided or read-only views, from numpy, pandas, polars or scipy sparse give bit-identical models
and predictions, and a float32 input is never copied to float64."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import polars as pl
import pytest
import scipy.sparse as sp

import boostlab
from boostlab._data import column_form, matrix_form

from helpers import core_model


def _data(n=3000, p=6, seed=0):
    """float32 values (exactly representable in float64), with zeros, NaN and ties."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 2) / 2  # few distinct values
    X[rng.rand(n, p) < 0.2] = 0.0
    X[rng.rand(n, p) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * 0.5 + rng.normal(scale=0.3, size=n) > 0)
    return X, y.astype(int)


ESTIMATORS = [
    lambda: boostlab.AdaBoostClassifier(n_estimators=12),
    lambda: boostlab.RealAdaBoostClassifier(n_estimators=12, max_leaves=8),
    lambda: boostlab.TAdaBoostClassifier(n_estimators=12, t=0.8, max_leaves=8),
]


def _layouts(X32):
    """The same values in every layout the estimators read in place (and a few they copy)."""
    X64 = X32.astype(np.float64)
    names = [f"x{j}" for j in range(X32.shape[1])]
    wide = np.full((X32.shape[0] * 2, X32.shape[1] * 3), 7.0, dtype=np.float32)
    wide[::2, 1::3] = X32
    readonly = X32.copy()
    readonly.setflags(write=False)
    return {
        "float32 C": X32,
        "float64 C": X64,
        "float32 F": np.asfortranarray(X32),
        "float64 F": np.asfortranarray(X64),
        "float32 strided rows and columns": wide[::2, 1::3],
        "float32 read-only": readonly,
        "float64 big-endian (copied)": X64.astype(">f8"),
        "pandas float32": pd.DataFrame(X32, columns=names),
        "pandas float64": pd.DataFrame(X64, columns=names),
        "polars float32": pl.DataFrame(X32, schema=names, orient="row").fill_nan(None),
        "polars float64": pl.DataFrame(X64, schema=names, orient="row"),
        "csr float32": sp.csr_matrix(np.nan_to_num(X32, nan=0.0)),
    }


@pytest.mark.parametrize("make", ESTIMATORS)
def test_same_values_in_every_layout_give_bit_identical_models(make):
    X32, y = _data()
    layouts = _layouts(X32)
    want = core_model(make().fit(X32, y), names=False)
    dense_ref = make().fit(np.nan_to_num(X32, nan=0.0), y)
    for name, Xi in layouts.items():
        if name.startswith("csr"):
            # Sparse input has no NaN (absent entries are 0): compare with the same dense values.
            assert core_model(make().fit(Xi, y), names=False) == core_model(dense_ref, names=False), name
            assert core_model(make().fit(Xi.tocsc(), y), names=False) == core_model(dense_ref, names=False), name
            continue
        assert core_model(make().fit(Xi, y), names=False) == want, name


def test_predictions_read_every_layout_in_place_and_agree():
    X32, y = _data(n=9000)  # more than two prediction blocks of 4096 rows
    est = boostlab.TAdaBoostClassifier(n_estimators=10, t=0.8, max_leaves=8).fit(X32, y)
    want_d = est.decision_function(X32)
    want_p = est.predict_proba(X32)
    want_staged = np.stack(list(est.staged_decision_function(X32)))
    assert est.decision_function(X32.astype(np.float64)).tobytes() == want_d.tobytes()
    for name, Xi in _layouts(X32).items():
        if name.startswith(("csr", "pandas", "polars")):
            Xi = Xi.to_numpy() if hasattr(Xi, "to_numpy") else Xi
            if sp.issparse(Xi):
                continue
        np.testing.assert_array_equal(est.decision_function(Xi), want_d, err_msg=name)
        np.testing.assert_array_equal(est.predict_proba(Xi), want_p, err_msg=name)
        np.testing.assert_array_equal(np.stack(list(est.staged_decision_function(Xi))), want_staged, err_msg=name)
    # Sparse prediction equals dense prediction of the same values.
    Z = np.nan_to_num(X32, nan=0.0)
    np.testing.assert_array_equal(est.decision_function(sp.csr_matrix(Z)), est.decision_function(Z))


def test_the_extension_receives_the_callers_buffer():
    X32, _ = _data(n=100)
    for X in (X32, np.asfortranarray(X32), X32[::3, 1:5]):
        form = matrix_form(X)
        assert form[0] == "matrix" and form[1].dtype == np.float32
        assert np.shares_memory(form[1], X), "no copy"
        buf, n, d, s0, s1 = form[1:]
        # The views the extension builds read the array's values.
        got = np.array([[buf[i * s0 + j * s1] for j in range(d)] for i in range(n)])
        np.testing.assert_array_equal(got, X)
    col = pd.DataFrame(X32)[2]
    assert np.shares_memory(column_form(col.to_numpy(copy=False))[1], col.to_numpy(copy=False))


def test_no_float64_copy_of_a_float32_input():
    X32, y = _data(n=200_000, p=40)
    est = boostlab.AdaBoostClassifier(n_estimators=3)
    tracemalloc.start()
    try:
        est.fit(X32, y)
        _, fit_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        est.decision_function(X32)
        _, predict_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # X is 32 MB; a float64 copy would be 64 MB, a float32 one 32 MB. numpy's allocations for y
    # (np.unique: 8 MB), the weights and the scores stay far below.
    assert fit_peak < X32.nbytes // 2, fit_peak
    assert predict_peak < X32.nbytes // 2, predict_peak


def test_infinity_is_an_error_and_nan_is_missing_for_float32():
    X32, y = _data(n=200)
    bad = X32.copy()
    bad[5, 2] = np.inf
    with pytest.raises(ValueError, match="infinity|infinite"):
        boostlab.AdaBoostClassifier(n_estimators=3).fit(bad, y)
    est = boostlab.AdaBoostClassifier(n_estimators=3).fit(X32, y)
    with pytest.raises(ValueError, match="infinity|infinite"):
        est.predict(bad)
    # float32 NaN and float64 NaN are the same missing value.
    assert core_model(est, names=False) == core_model(
        boostlab.AdaBoostClassifier(n_estimators=3).fit(X32.astype(np.float64), y), names=False
    )
