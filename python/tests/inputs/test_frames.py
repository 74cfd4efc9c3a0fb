"""Inputs: numpy (any memory order), lists, scipy sparse, pandas and polars DataFrames give the
same model as the equivalent numpy input; categorical and string columns are categorical features;
nulls are missing values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
import scipy.sparse as sp

import boostlab

from helpers import core_model, mixed_frame


def _numeric(n=200, p=5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p))
    X[rng.rand(n, p) < 0.3] = 0.0  # zeros, for the sparse inputs
    X[rng.rand(n, p) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * 0.5 + rng.normal(scale=0.3, size=n) > 0).astype(int)
    return X, y


def _est():
    return boostlab.TAdaBoostClassifier(n_estimators=15, t=0.7, max_leaves=5)


def _model(X, y):
    return core_model(_est().fit(X, y), names=False)


def test_numeric_inputs_give_the_same_model():
    X, y = _numeric()
    want = _model(X, y)
    names = [f"x{j}" for j in range(X.shape[1])]
    inputs = {
        "fortran": np.asfortranarray(X),
        "list": X.tolist(),
        "csr": sp.csr_matrix(X),
        "csc": sp.csc_matrix(X),
        "coo array": sp.coo_array(X),
        "pandas": pd.DataFrame(X, columns=names),
        "pandas nullable": pd.DataFrame(X, columns=names).astype("Float64"),
        "polars": pl.DataFrame(X, schema=names, orient="row"),
        "readonly": np.require(X, requirements="C").copy(),
    }
    inputs["readonly"].setflags(write=False)
    for name, Xi in inputs.items():
        assert _model(Xi, y) == want, name
    # A strided (non-contiguous) view is read in place.
    wide = np.empty((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    assert _model(wide[:, ::2], y) == want


def test_polars_nulls_and_pandas_na_are_missing():
    X, y = _numeric()
    names = [f"x{j}" for j in range(X.shape[1])]
    want = _model(X, y)
    pdf = pd.DataFrame(X, columns=names).astype("Float64")
    pdf = pdf.mask(pdf.isna(), pd.NA)
    assert _model(pdf, y) == want
    # polars: NaN and null are both missing.
    plf = pl.DataFrame(X, schema=names, orient="row").with_columns(pl.all().fill_nan(None))
    assert plf.null_count().sum_horizontal().item() > 0
    assert _model(plf, y) == want


def test_integer_and_boolean_columns_are_numeric():
    rng = np.random.RandomState(3)
    n = 150
    ints = rng.randint(0, 5, size=n)
    flags = rng.rand(n) < 0.4
    y = ((ints > 2) ^ flags).astype(int)
    want = _model(np.column_stack([ints, flags]).astype(float), y)
    assert _model(pd.DataFrame({"i": ints, "f": flags}), y) == want
    assert _model(pl.DataFrame({"i": ints, "f": flags}), y) == want
    nullable = pd.DataFrame({"i": pd.array(ints, dtype="Int64"), "f": pd.array(flags, dtype="boolean")})
    assert _model(nullable, y) == want


def _categorical_frames():
    df = mixed_frame()
    X = df[["a", "b", "c"]]
    cat = X.assign(c=X["c"].astype("category"))
    # Categories in another order, with an unused one: the model keeps the sorted observed levels.
    reordered = X.assign(c=pd.Categorical(X["c"], categories=["purple", "red", "blue", "green"]))
    strings = X.assign(c=X["c"].astype("string"))
    c = pl.Series("c", [v if isinstance(v, str) else None for v in X["c"]], dtype=pl.String)
    polars_str = pl.DataFrame({"a": X["a"].to_numpy(), "b": X["b"].to_numpy(), "c": c})
    polars_cat = polars_str.with_columns(pl.col("c").cast(pl.Categorical))
    polars_enum = polars_str.with_columns(pl.col("c").cast(pl.Enum(["red", "green", "blue"])))
    frames = {
        "object": X,
        "category": cat,
        "reordered categories": reordered,
        "string": strings,
        "polars string": polars_str,
        "polars categorical": polars_cat,
        "polars enum": polars_enum,
    }
    return frames, df["label"]


def test_categorical_columns_give_the_same_model_from_every_frame():
    frames, y = _categorical_frames()
    models = {name: core_model(_est().fit(X, y)) for name, X in frames.items()}
    want = models["object"]
    assert want["schema"]["kinds"] == ["numeric", "numeric", "categorical"]
    assert want["schema"]["levels"][2] == ["blue", "green", "red"]
    for name, m in models.items():
        assert m == want, name


def test_categorical_prediction_maps_levels_by_name_and_unseen_to_missing():
    frames, y = _categorical_frames()
    est = _est().fit(frames["object"], y)
    want = est.decision_function(frames["object"])
    for name, X in frames.items():
        np.testing.assert_array_equal(est.decision_function(X), want, err_msg=name)
    X = frames["object"].copy()
    missing = X.assign(c=None)
    unseen = X.assign(c="ultraviolet")
    np.testing.assert_array_equal(est.decision_function(unseen), est.decision_function(missing))


def test_a_float_column_for_a_categorical_feature_is_refused():
    frames, y = _categorical_frames()
    est = _est().fit(frames["object"], y)
    floats = np.linspace(0.0, 1.0, len(y))
    want = "column 'c' holds floating-point numbers .*, but the model's feature 'c' is categorical"
    with pytest.raises(ValueError, match=want):
        est.predict(frames["object"].assign(c=floats))
    with pytest.raises(ValueError, match=want):
        est.predict(pl.from_pandas(frames["object"]).with_columns(pl.Series("c", floats)))
    # Integer columns stay accepted: their values are matched to the levels as text.
    codes = est.decision_function(frames["object"].assign(c=np.arange(len(y)) % 3))
    np.testing.assert_array_equal(codes, est.decision_function(frames["object"].assign(c=None)))


def test_numeric_array_for_categorical_features_matches_whole_numbers_as_levels():
    rng = np.random.default_rng(4)
    n = 200
    levels = rng.choice([1, 2, 3], size=n)
    a = rng.normal(size=n)
    y = np.where(a + (levels == 2) + rng.normal(scale=0.4, size=n) > 0.5, "pos", "neg")
    frame = pd.DataFrame({"a": a, "c": pd.Categorical(levels)})
    est = _est().fit(frame, y)
    assert est.model_.feature_kinds == ["numeric", "categorical"]
    array = np.column_stack([a, levels.astype(np.float64)])
    with pytest.warns(UserWarning, match="valid feature names"):
        got = est.decision_function(array)
    # 2.0 is the level "2", as the frame's category 2.
    np.testing.assert_array_equal(got, est.decision_function(frame))
    # A whole number that names no level, and NaN, are missing values.
    missing = est.decision_function(frame.assign(c=None))
    for value in (0.0, 7.0, np.nan):
        with pytest.warns(UserWarning, match="valid feature names"):
            np.testing.assert_array_equal(est.decision_function(np.column_stack([a, np.full(n, value)])), missing)
    # The same from a sparse matrix.
    with pytest.warns(UserWarning, match="valid feature names"):
        np.testing.assert_array_equal(est.decision_function(sp.csr_matrix(array)), got)
    # Other numbers are refused, with the feature's name.
    with pytest.warns(UserWarning, match="valid feature names"), pytest.raises(
        ValueError, match="column 1 holds the number 2.5, but the model's feature 'c' is categorical"
    ):
        est.predict(np.column_stack([a, np.where(levels == 2, 2.5, levels)]))


def test_feature_names_are_checked():
    frames, y = _categorical_frames()
    est = _est().fit(frames["object"], y)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    assert est.n_features_in_ == 3
    with pytest.raises(ValueError, match="feature names"):
        est.predict(frames["object"][["b", "a", "c"]])
    # A numeric array's whole numbers for a categorical feature are matched to its levels as
    # text: 0 names no level of "c", a missing value.
    with pytest.warns(UserWarning, match="feature names"):
        zeros = est.decision_function(np.zeros((3, 3)))
    missing = frames["object"].iloc[:3].assign(a=0.0, b=0.0, c=None)
    np.testing.assert_array_equal(zeros, est.decision_function(missing))


def test_unsupported_column_types_are_rejected():
    X = pd.DataFrame({"t": pd.date_range("2020-01-01", periods=4), "x": [1.0, 2, 3, 4]})
    with pytest.raises(TypeError, match="dtype"):
        boostlab.AdaBoostClassifier().fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="infinite|Input X contains infinity"):
        boostlab.AdaBoostClassifier().fit(pd.DataFrame({"x": [1.0, np.inf, 3, 4]}), [0, 1, 0, 1])
