"""Arrow inputs: pyarrow tables and record batches, polars frames, duckdb results and any object with
``__arrow_c_stream__`` or ``__arrow_c_array__`` give the same model and predictions as the
equivalent pandas frame; string and dictionary columns are categorical features, nulls are missing
values, and no pyarrow is needed."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import polars as pl
import pytest

import boostlab

from helpers import ROOT, core_model, optional_module

pa = optional_module("pyarrow")


def _est():
    return boostlab.TAdaBoostClassifier(n_estimators=15, t=0.7, max_leaves=5)


def _data(n=300, seed=5):
    """Float, float32, int, boolean, string and dictionary columns, with nulls in most of them,
    as a pyarrow table and as the pandas frame the existing path reads the same way."""
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n).round(3)
    f32 = rng.normal(size=n).astype(np.float32)
    i = rng.integers(0, 6, size=n)
    flag = rng.random(n) < 0.4
    s = rng.choice(["red", "green", "blue", ""], size=n).astype(object)
    d = rng.choice(["x", "y", "z"], size=n).astype(object)
    f_null = rng.random(n) < 0.1
    i_null = rng.random(n) < 0.1
    s[rng.random(n) < 0.1] = None
    d[rng.random(n) < 0.1] = None
    score = np.where(f_null, 0, f) + 0.5 * f32 + (i > 3) + (s == "red") - (d == "z") + rng.normal(scale=0.5, size=n)
    y = np.where(score > 0.3, "pos", "neg")
    table = pa.table(
        {
            "f": pa.array(f, mask=f_null),
            "f32": pa.array(f32),
            "i": pa.array(i, mask=i_null),
            "flag": pa.array(flag),
            "s": pa.array(s, type=pa.string()),
            "d": pa.array(d, type=pa.string()).dictionary_encode(),
        }
    )
    frame = pd.DataFrame(
        {
            "f": np.where(f_null, np.nan, f),
            "f32": f32,
            "i": pd.Series(i, dtype="Int64").mask(i_null),
            "flag": flag,
            "s": s,
            "d": pd.Categorical(d),
        }
    )
    return table, frame, y


def _chunked(table, size=70):
    """The same table in record batches of `size` rows (a chunked table)."""
    return pa.Table.from_batches(table.to_batches(max_chunksize=size))


class _StreamOnly:
    """An object that offers only the Arrow C stream interface."""

    def __init__(self, table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


class _ArrayOnly:
    """An object that offers only the Arrow C array interface (one record batch)."""

    def __init__(self, batch):
        self._batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self._batch.__arrow_c_array__(requested_schema)


def test_a_pyarrow_table_gives_the_pandas_model_and_predictions():
    table, frame, y = _data()
    want_est = _est().fit(frame, y)
    want = core_model(want_est)
    assert want["schema"]["kinds"] == ["numeric", "numeric", "numeric", "numeric", "categorical", "categorical"]
    assert want["schema"]["levels"][4] == ["", "blue", "green", "red"]
    for name, X in {
        "table": table,
        "chunked table": _chunked(table),
        "record batch": table.combine_chunks().to_batches()[0],
        "stream only": _StreamOnly(_chunked(table, 41)),
        "array only": _ArrayOnly(table.combine_chunks().to_batches()[0]),
        "pandas with Arrow dtypes": table.to_pandas(types_mapper=pd.ArrowDtype),
        "polars": pl.from_arrow(table),
    }.items():
        est = _est().fit(X, y)
        assert core_model(est) == want, name
        assert list(est.feature_names_in_) == ["f", "f32", "i", "flag", "s", "d"], name
        np.testing.assert_array_equal(est.decision_function(X), want_est.decision_function(frame), err_msg=name)
        np.testing.assert_array_equal(want_est.predict_proba(X), want_est.predict_proba(frame), err_msg=name)
    np.testing.assert_array_equal(want_est.predict_contrib(table), want_est.predict_contrib(frame))


def test_a_record_batch_reader_is_read_once():
    table, frame, y = _data()
    reader = pa.RecordBatchReader.from_batches(table.schema, _chunked(table).to_batches())
    assert core_model(_est().fit(reader, y)) == core_model(_est().fit(frame, y))


def test_polars_categorical_and_enum_columns_are_categorical_features():
    table, frame, y = _data()
    base = pl.from_arrow(table).with_columns(pl.col("d").cast(pl.String))
    want = core_model(_est().fit(frame, y))
    for name, X in {
        "categorical": base.with_columns(pl.col("d").cast(pl.Categorical)),
        "enum": base.with_columns(pl.col("d").cast(pl.Enum(["z", "y", "x", "unused"]))),
        "string": base,
        "several chunks": pl.concat([base[:100], base[100:]], rechunk=False),
    }.items():
        assert core_model(_est().fit(X, y)) == want, name


def test_prediction_maps_arrow_strings_to_the_model_levels():
    table, frame, y = _data()
    est = _est().fit(table, y)
    # Levels unseen in training and nulls are missing values, whatever the dictionary holds.
    unseen = table.set_column(4, "s", pa.array(["ultraviolet"] * len(y)))
    nulls = table.set_column(4, "s", pa.nulls(len(y), pa.string()))
    np.testing.assert_array_equal(est.decision_function(unseen), est.decision_function(nulls))
    other_dict = table.set_column(5, "d", pa.array(frame["d"].astype(object), type=pa.large_string()))
    np.testing.assert_array_equal(est.decision_function(other_dict), est.decision_function(table))


def test_duckdb_results_are_arrow_inputs():
    duckdb = optional_module("duckdb")
    table, frame, y = _data()
    want = core_model(_est().fit(frame, y))
    con = duckdb.connect()
    con.register("t", table)
    rel = con.sql("select * from t")
    assert core_model(_est().fit(rel, y)) == want
    assert core_model(_est().fit(rel.arrow(), y)) == want


def test_unsupported_arrow_types_are_refused_naming_the_column():
    table = pa.table({"x": [1.0, 2.0, 3.0, 4.0], "when": pa.array([1, 2, 3, 4], type=pa.timestamp("s"))})
    with pytest.raises(ValueError, match="column 'when' has Arrow type Timestamp"):
        boostlab.AdaBoostClassifier().fit(table, [0, 1, 0, 1])
    nested = pa.table({"x": [1.0, 2.0, 3.0, 4.0], "l": pa.array([[1], [2], [3], [4]])})
    with pytest.raises(ValueError, match="column 'l' has Arrow type List"):
        boostlab.AdaBoostClassifier().fit(nested, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="column 'n' has dtype Null"):
        boostlab.AdaBoostClassifier().fit(pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "n": [None] * 4}), [0, 1, 0, 1])


def test_a_float_column_for_a_categorical_feature_is_refused():
    table, frame, y = _data()
    est = _est().fit(table, y)
    floats = pa.array(np.linspace(0, 1, len(y)))
    want = "column 'd' holds floating-point numbers .*the model's feature 'd' is categorical"
    with pytest.raises(ValueError, match=want):
        est.predict(table.set_column(5, "d", floats))


def test_a_polars_fit_needs_no_pyarrow():
    code = """
import sys
sys.modules["pyarrow"] = None
import numpy as np, polars as pl, boostlab
rng = np.random.default_rng(0)
X = pl.DataFrame({"a": rng.normal(size=200), "c": rng.choice(["u", "v"], size=200)})
X = X.with_columns(pl.col("c").cast(pl.Categorical))
y = (X["a"].to_numpy() > 0).astype(int)
est = boostlab.AdaBoostClassifier(n_estimators=5).fit(X, y)
assert "pyarrow" not in sys.modules or sys.modules["pyarrow"] is None
print(est.model_.feature_kinds, est.predict(X).sum())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "['numeric', 'categorical']" in out.stdout


def test_arrow_float_columns_without_nulls_are_read_in_place():
    # The model is the same from a float32 table and the float32 numpy array (f32 read as f32).
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 3)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    table = pa.table({f"f{j}": X[:, j] for j in range(3)})
    a = json.loads(_est().fit(X, y).model_.to_json())
    b = json.loads(_est().fit(_chunked(table, 128), y).model_.to_json())
    for m in (a, b):
        m.pop("param_sources", None)
        m["schema"].pop("names")
    assert a == b
