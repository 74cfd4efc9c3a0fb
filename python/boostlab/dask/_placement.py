"""The client's view of the data: the kinds of dask inputs, the futures of a persisted
collection's partitions, and the worker each partition trains on."""

from __future__ import annotations

import threading

import dask
import dask.array as da
from distributed import futures_of

from ._collective import DaskFitError

# The worker each partition was last trained on, by partition key (this process's fits). A fit
# places a partition on a worker holding it; but Dask moves and copies partitions between fits (a
# prediction task run on another worker, work stealing, `client.replicate`, the active memory
# manager dropping one of two copies). Choosing among the current holders by address alone could
# then put a partition on another rank: another training order, other last bits. A partition stays
# on the worker it last trained on while that worker is alive — Dask brings the data back to it
# when it was moved — so two fits of the same data are bit-identical.
_LAST_OWNER: dict = {}
_LAST_OWNER_MAX = 1 << 16
_LAST_OWNER_LOCK = threading.Lock()


def _alive_workers(client):
    """The addresses of every worker of the cluster (some Dask versions list only five by
    default; older ones have no `n_workers` argument)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:
        info = client.scheduler_info()
    return set(info.get("workers") or {})


def _place_partitions(keys, who_has, alive):
    """The worker to train each partition on: its last owner while that worker is `alive`, else
    the holder with the smallest address. Raises DaskFitError for a partition no worker holds."""
    owner = []
    with _LAST_OWNER_LOCK:
        for k in keys:
            holders = sorted(who_has.get(k) or [])
            if not holders:
                raise DaskFitError(f"boostlab.dask: partition {k} has no worker (lost?)")
            last = _LAST_OWNER.get(k)
            owner.append(last if last in alive else holders[0])
        if len(_LAST_OWNER) + len(keys) > _LAST_OWNER_MAX:
            _LAST_OWNER.clear()
        _LAST_OWNER.update(zip(keys, owner))
    return owner


def _dask_dataframe_types():
    """(DataFrame, Series) of dask.dataframe, or () without it (it needs pandas and pyarrow)."""
    try:
        import dask.dataframe as dd
    except ImportError:
        return None
    return dd.DataFrame, dd.Series


def _is_dask_frame(X) -> bool:
    types = _dask_dataframe_types() if dask.is_dask_collection(X) else None
    return types is not None and isinstance(X, types[0])


def _is_dask_series(y) -> bool:
    types = _dask_dataframe_types() if dask.is_dask_collection(y) else None
    return types is not None and isinstance(y, types[1])


def _is_dask_array(X) -> bool:
    return isinstance(X, da.Array)


def _partition_futures(coll, n_parts):
    """The futures of a persisted collection's partitions (row blocks of an array), in order. The
    partition's index is the key's second element (dask renames persisted collections, so keys
    are matched by index, not by name)."""
    by_index = {}
    for f in futures_of(coll):
        k = f.key
        if not (isinstance(k, tuple) and len(k) >= 2 and all(i == 0 for i in k[2:])):
            raise ValueError(f"internal: unexpected partition key {k!r} (one column chunk expected)")
        by_index[k[1]] = f
    if sorted(by_index) != list(range(n_parts)):
        raise ValueError(f"internal: persisted collection has partitions {sorted(by_index)}, expected {n_parts}")
    return [by_index[i] for i in range(n_parts)]


def _n_parts(coll) -> int:
    return coll.npartitions if hasattr(coll, "npartitions") else coll.numblocks[0]


def _column_kind(dtype) -> str:
    """`numeric` or `categorical` for a DataFrame column's dtype (as the local estimators read
    them: categorical, string and object columns are categorical features)."""
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        if pd.api.types.is_complex_dtype(dtype):
            raise ValueError(f"complex data not supported (dtype {dtype})")
        return "numeric"
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return "categorical"
    raise TypeError(f"dtype {dtype}: boostlab takes numeric, boolean, categorical or string columns")
