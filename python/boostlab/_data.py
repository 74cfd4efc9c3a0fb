"""Input conversion: numpy, scipy sparse, pandas and polars data to the core's feature columns.

The extension module takes features as a list of names plus *columns*, in one of three forms:

- ``("matrix", buffer, n, d, row_stride, col_stride)``: a 2-d float32 or float64 numpy array read
  in place — C or Fortran order or any strided view, never converted or copied. The
  buffer is a contiguous 1-d view spanning the array's elements (``as_strided``, no copy); the
  strides are in elements. NaN is missing;
- a CSC tuple ``("csc", n_rows, indptr, indices, data)`` read in place (int32 or int64 indices,
  float32 or float64 values, canonical: sorted row indices, no duplicates; absent entries are 0,
  explicit NaN is missing);
- a list with one entry per feature: ``("column", buffer, n, stride)`` (a numeric column read in
  place, float32 or float64) or a pair ``(int64 codes, level names)`` (categorical, code -1 =
  missing).

- an ``ArrowTable`` (the extension's import of an object with ``__arrow_c_stream__`` or
  ``__arrow_c_array__``: polars frames, pyarrow tables and record batches, duckdb results, pandas
  frames with Arrow dtypes): float columns read in place from the Arrow buffers, one chunk per
  record batch; nulls are missing; string and dictionary columns (polars ``Categorical`` and
  ``Enum``) are categorical with the distinct strings, sorted, as levels. No pyarrow is needed.

DataFrame columns of float32 or float64 dtype are read in place (each column's numpy buffer);
other numeric and boolean columns are converted to float64 column by column.
DataFrame columns of numeric or boolean dtype become numeric features; categorical, string and
object columns become categorical features whose levels are the distinct values as strings,
sorted, exactly as the command-line tool reads a CSV column. Nulls become missing values.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data


def _module_of(obj) -> str:
    return type(obj).__module__.split(".")[0]


def is_pandas_frame(X) -> bool:
    return _module_of(X) == "pandas" and type(X).__name__ == "DataFrame"


def is_polars_frame(X) -> bool:
    return _module_of(X) == "polars" and type(X).__name__ == "DataFrame"


def strided(a: np.ndarray):
    """`(buffer, strides in elements)` of a float32 or float64 array, read in place: `buffer` is a
    read-only contiguous 1-d view of the memory from the first element to the last (no copy).
    Arrays the extension cannot read in place (another dtype, byte-swapped, unaligned, negative
    strides) are copied first."""
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    size = a.itemsize
    live = [(n, s) for n, s in zip(a.shape, a.strides) if n > 1]
    if not (a.dtype.isnative and a.flags.aligned) or any(s < 0 or s % size for _, s in live):
        # A copy: `ascontiguousarray` returns a contiguous but unaligned array as it is (e.g. a
        # column that arrived over the network, deserialised in place).
        a = np.array(a, dtype=a.dtype.newbyteorder("="), order="C", copy=True)
    # Dimensions of one element never move: stride 0.
    el = [s // size if n > 1 else 0 for n, s in zip(a.shape, a.strides)]
    span = 1 + sum((n - 1) * s for n, s in zip(a.shape, el)) if a.size else 0
    buf = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(size,), writeable=False)
    return buf, el


def matrix_form(X: np.ndarray):
    """The extension's form of a 2-d float array (read in place)."""
    buf, (s0, s1) = strided(X)
    return ("matrix", buf, X.shape[0], X.shape[1], s0, s1)


def column_form(v: np.ndarray):
    """The extension's form of a 1-d float array (read in place)."""
    buf, (s,) = strided(v)
    return ("column", buf, v.shape[0], s)


def csc_form(X):
    """The extension's form of a scipy sparse matrix or array, read in place: its CSC arrays
    (other formats are converted with scipy's `tocsc`, which copies the stored values only, never a
    dense matrix). Duplicate or unsorted row indices are first summed and sorted (a copy), as
    scipy's `toarray` sees them."""
    X = X.tocsc(copy=False)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    data = X.data
    if data.dtype not in (np.float32, np.float64):
        data = data.astype(np.float64)
    index = X.indices.dtype if X.indices.dtype in (np.int32, np.int64) else np.int64
    return (
        "csc",
        X.shape[0],
        np.ascontiguousarray(X.indptr, dtype=index),
        np.ascontiguousarray(X.indices, dtype=index),
        np.ascontiguousarray(data),
    )


def _encode(codes: np.ndarray, uniques) -> tuple[np.ndarray, list[str]]:
    """Re-codes factorised values (`codes` into `uniques`, -1 = missing) onto the sorted distinct
    string forms of the values (two values with the same string form become one level)."""
    names = np.array([str(u) for u in uniques], dtype=object)
    if names.size == 0:
        return np.full(codes.shape, -1, dtype=np.int64), []
    levels, remap = np.unique(names, return_inverse=True)
    codes = np.asarray(codes, dtype=np.int64)
    out = np.where(codes >= 0, remap.reshape(-1)[np.clip(codes, 0, None)], -1)
    return out.astype(np.int64), [str(v) for v in levels]


def _float_for_categorical(name, dtype) -> str:
    # Integers can be category codes (matched to the levels as text); a float column where the
    # model has a categorical feature would match no level and make every value missing.
    return (
        f"column {name!r} holds floating-point numbers ({dtype}), but the model's feature "
        f"{name!r} is categorical: pass its levels as strings or a categorical dtype"
    )


def _pandas_column(s, want: str | None):
    import pandas as pd

    dt = s.dtype
    is_cat = isinstance(dt, pd.CategoricalDtype)
    if want != "categorical" and not is_cat:
        if pd.api.types.is_complex_dtype(dt):
            raise ValueError(f"column {s.name!r}: complex data not supported")
        if dt in (np.float32, np.float64):
            # A numpy-backed float column: its buffer, read in place.
            return column_form(s.to_numpy(copy=False))
        if pd.api.types.is_bool_dtype(dt) or pd.api.types.is_numeric_dtype(dt):
            return column_form(s.to_numpy(dtype=np.float64, na_value=np.nan))
    if want == "categorical" and not is_cat and pd.api.types.is_float_dtype(dt):
        raise ValueError(_float_for_categorical(s.name, dt))
    if (
        is_cat
        or want == "categorical"
        or pd.api.types.is_object_dtype(dt)
        or pd.api.types.is_string_dtype(dt)
    ):
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        return _encode(codes, uniques)
    raise TypeError(
        f"column {s.name!r} has dtype {dt}: boostlab takes numeric, boolean, categorical or "
        "string columns"
    )


def _polars_column(s, want: str | None):
    import polars as pl

    dt = s.dtype
    numeric = dt.is_numeric() or dt == pl.Boolean
    if want != "categorical" and numeric:
        if dt in (pl.Float32, pl.Float64):
            # No copy when the column has no nulls (nulls become NaN in a new array).
            return column_form(s.to_numpy())
        return column_form(s.cast(pl.Float64).to_numpy())
    if want == "categorical" and dt.is_float():
        raise ValueError(_float_for_categorical(s.name, dt))
    if numeric or dt in (pl.String, pl.Categorical) or isinstance(dt, (pl.Categorical, pl.Enum)):
        strings = s.cast(pl.String)
        missing = strings.is_null().to_numpy()
        values = strings.to_numpy()
        present = values[~missing].astype(str)
        levels, inverse = np.unique(present, return_inverse=True)
        codes = np.full(len(s), -1, dtype=np.int64)
        codes[~missing] = inverse.reshape(-1)
        return codes, [str(v) for v in levels]
    raise TypeError(
        f"column {s.name!r} has dtype {dt}: boostlab takes numeric, boolean, categorical or "
        "string columns"
    )


def frame_columns(X, kinds=None) -> list:
    """The columns of a pandas or polars DataFrame; `kinds` (from a fitted model) forces a
    column to be read as categorical when the model saw it as categorical."""
    names = list(X.columns)
    want = kinds or [None] * len(names)
    if is_pandas_frame(X):
        return [_pandas_column(X.iloc[:, j], want[j]) for j in range(len(names))]
    return [_polars_column(X.get_column(name), want[j]) for j, name in enumerate(names)]


def is_arrow_input(X) -> bool:
    """True when `X` is read through the Arrow PyCapsule interface: any object with
    ``__arrow_c_stream__`` or ``__arrow_c_array__`` (polars, pyarrow, duckdb), except numpy
    arrays and pandas frames, which keep their own paths (their numpy buffers are read in place)
    unless a column has an Arrow dtype (``pd.ArrowDtype``)."""
    if isinstance(X, np.ndarray) or sp.issparse(X):
        return False
    if is_pandas_frame(X):
        import pandas as pd

        return hasattr(X, "__arrow_c_stream__") and any(isinstance(t, pd.ArrowDtype) for t in X.dtypes)
    kind = type(X)
    return hasattr(kind, "__arrow_c_stream__") or hasattr(kind, "__arrow_c_array__")


def _frame_of_names(names):
    """An empty DataFrame with the column names `names`, for scikit-learn's feature-name checks
    of an Arrow object it does not recognise (a duckdb relation, a bare stream)."""
    try:
        import pandas as pd

        return pd.DataFrame(columns=names)
    except ImportError:
        import polars as pl

        return pl.DataFrame(schema=names)


def _prepare_arrow(estimator, X, reset: bool):
    from sklearn.utils.validation import _get_feature_names

    from . import _boostlab

    if is_polars_frame(X):
        # polars exports a column of dtype Null with a buffer the Arrow import refuses.
        import polars as pl

        for name, dtype in X.schema.items():
            if dtype == pl.Null:
                raise ValueError(
                    f"column {name!r} has dtype Null (no values): boostlab takes numeric, boolean, "
                    "categorical or string columns"
                )
    table = _boostlab.arrow_table(X)
    names = table.names
    known = _get_feature_names(X) is not None
    validate_data(estimator, X if known else _frame_of_names(names), skip_check_array=True, reset=reset)
    shape = (table.n_rows, len(names))
    if shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={shape}) while a minimum of 1 is required.")
    if shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required.")
    return shape[0], table


class _ColumnNames:
    """A polars frame's shape and column names through the dataframe interchange protocol, which
    is how scikit-learn before 1.8 reads the names of frames other than pandas'."""

    def __init__(self, X):
        self.shape = X.shape
        self._names = [str(c) for c in X.columns]

    def __dataframe__(self, *args, **kwargs):
        return self

    def column_names(self):
        return self._names


def _with_names(X):
    from sklearn.utils.validation import _get_feature_names

    if is_polars_frame(X) and X.width > 0 and _get_feature_names(X) is None:
        return _ColumnNames(X)
    return X


def prepare_X(estimator, X, *, reset: bool, kinds=None, arrow: bool = True):
    """Validates `X` (setting or checking `n_features_in_` and `feature_names_in_`) and returns
    `(n_rows, columns)` in one of the forms the extension takes (`arrow=False`: never an
    ``ArrowTable``, for callers that read the columns themselves)."""
    if arrow and is_arrow_input(X):
        # A model's categorical features are matched by the extension (it has the schema).
        return _prepare_arrow(estimator, X, reset)
    if is_pandas_frame(X) or is_polars_frame(X):
        validate_data(estimator, _with_names(X), skip_check_array=True, reset=reset)
        n_rows, n_cols = X.shape
        if n_rows == 0:
            raise ValueError(
                f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required."
            )
        if n_cols == 0:
            raise ValueError(
                f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required."
            )
        return n_rows, frame_columns(X, kinds)
    if sp.issparse(X):
        X = validate_data(
            estimator,
            X,
            accept_sparse="csc",
            dtype=[np.float64, np.float32],
            ensure_all_finite="allow-nan",
            reset=reset,
        )
        if kinds is not None and "categorical" in kinds:
            return X.shape[0], array_columns(X, kinds, core_feature_names(estimator, X.shape[1]))
        return X.shape[0], csc_form(X)
    # float32 and float64 arrays keep their dtype, order and strides: read in place, not copied.
    X = validate_data(
        estimator, X, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan", reset=reset
    )
    if kinds is not None and "categorical" in kinds:
        return X.shape[0], array_columns(X, kinds, core_feature_names(estimator, X.shape[1]))
    return X.shape[0], matrix_form(X)


def array_columns(X, kinds, names) -> list:
    """The columns of a numeric array (dense or sparse) for a model with categorical features:
    the numeric features' columns read in place, and each categorical feature's whole numbers
    matched to the levels as text, as an integer DataFrame column is (3.0 is the level "3"; a
    number that names no level is an unseen level, NaN is missing). Other numbers are refused."""
    if sp.issparse(X):
        # Each feature becomes a dense column in this form: densified once.
        X = X.toarray()
    out = []
    for j, kind in enumerate(kinds):
        v = X[:, j]
        if kind != "categorical":
            out.append(column_form(v))
            continue
        missing = np.isnan(v)
        present = v[~missing]
        whole = np.isfinite(present) & (present == np.round(present))
        if not whole.all():
            raise ValueError(
                f"column {j} holds the number {float(present[~whole][0])!r}, but the model's feature "
                f"{names[j]!r} is categorical: in a numeric array its values must be whole numbers "
                "(matched to the levels as text) or NaN; pass a DataFrame with its levels as "
                "strings or a categorical dtype"
            )
        uniques, inverse = np.unique(present, return_inverse=True)
        codes = np.full(v.shape[0], -1, dtype=np.int64)
        codes[~missing] = inverse.reshape(-1)
        out.append(_encode(codes, [str(int(u)) for u in uniques]))
    return out


def core_feature_names(estimator, n_features: int) -> list[str]:
    """Feature names for the model: `feature_names_in_` when scikit-learn recorded them,
    otherwise `f0, f1, ...` (the core's names for a plain matrix)."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    return [f"f{j}" for j in range(n_features)]


def is_default_names(names) -> bool:
    return list(names) == [f"f{j}" for j in range(len(names))]
