"""Distributed training on Dask (issue 13): ``pip install 'boostlab[dask]'``.

Estimators named like the peers' (``lightgbm.dask``, ``xgboost.dask``):
:class:`DaskAdaBoostClassifier`, :class:`DaskRealAdaBoostClassifier`,
:class:`DaskTAdaBoostClassifier`, :class:`DaskSecBoostClassifier`,
:class:`DaskAdaBoostMHClassifier`, :class:`DaskAdaBoostMOClassifier` and
:class:`DaskAdaBoostMRClassifier`. Each takes the parameters of its local estimator (it *is* one:
a subclass, whose parameter handling it reuses) plus

- ``client``: the ``distributed.Client`` to train on. By default None: the default client.
- ``timeout``: seconds any one exchange between workers (a connection, a reduction) may take
  before ``fit`` fails naming the worker. By default 120; > 0.
- ``transport``: what the workers' sums travel over: ``"dask"`` (Dask's own communication layer,
  ``distributed.comm``: connections opened by Dask with the workers' protocol — tcp, tls, ucx —
  and security) or ``"tcp"`` (plain TCP sockets between the workers, TLS-wrapped when the
  workers use TLS, as lightgbm.dask's). The same model bit for bit either way. By default
  ``"dask"``; ``"dask"`` or ``"tcp"``.

``fit(X, y, sample_weight=None)`` takes a dask array or a dask DataFrame ``X`` (numeric,
categorical with known categories — the same in every partition — and string columns; NaN and
nulls are missing values), ``y`` and ``sample_weight`` as dask arrays or Series partitioned like
``X``. The partitions are persisted and stay where they are: one long-running task per worker
holding data trains on that worker's rows (SPMD), the workers' sums travel over TCP sockets
between the workers, whose addresses Dask exchanges, or over Dask's comms (``transport``,
:mod:`boostlab._collective`), and every
worker ends with the same model. t-AdaBoost's ``t="auto"`` chooses t as the local estimator does
(the same inner folds over all the rows, every inner fit distributed).
``predict``, ``predict_proba`` and ``decision_function`` return dask collections computed where
the data live; ``to_local()`` returns the fitted local estimator; models save and load as the
local ones (``save_model``, ``load_model``). The design, the costs and what to do after a
failure are in docs/distributed.md.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
import time
import uuid

import numpy as np

try:
    import dask
    import dask.array as da
    import distributed
    from distributed import futures_of, wait
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "boostlab.dask needs dask.distributed, an optional dependency: pip install 'boostlab[dask]'"
    ) from e

from . import _boostlab
from ._base import _callbacks, _float, _int
from ._data import column_form, core_feature_names
from ._collective import Collective, DaskFitError, check_transport
from ._estimators import (
    AdaBoostClassifier,
    AdaBoostMHClassifier,
    AdaBoostMOClassifier,
    AdaBoostMRClassifier,
    RealAdaBoostClassifier,
    SecBoostClassifier,
    TAdaBoostClassifier,
)

__all__ = [
    "DaskAdaBoostClassifier",
    "DaskAdaBoostMHClassifier",
    "DaskAdaBoostMOClassifier",
    "DaskAdaBoostMRClassifier",
    "DaskFitError",
    "DaskRealAdaBoostClassifier",
    "DaskSecBoostClassifier",
    "DaskTAdaBoostClassifier",
]

_DEFAULT_TIMEOUT = 120.0

# The worker each partition was last trained on, by partition key (this process's fits). A fit
# places a partition on a worker holding it; but Dask moves and copies partitions between fits (a
# prediction task run on another worker, work stealing, `client.replicate`, the active memory
# manager dropping one of two copies). Choosing among the current holders by address alone could
# then put a partition on another rank: another training order, other last bits. A partition stays
# on the worker it last trained on while that worker is alive — Dask brings the data back to it
# when it was moved — so two fits of the same data are bit-identical (session 9).
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


# ---------------------------------------------------------------------------------- input kinds


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


# ---------------------------------------------------------------------------------- worker side


def _part_info(X, y, w, kinds, multilabel, want_y=False):
    """What the client needs of one partition before training: its row count, its labels (those
    with a positive weight too), its categorical levels and its weights' range; with `want_y`
    the labels themselves (to draw `validation_fraction`'s split over all the rows)."""
    import pandas as pd

    n = X.shape[0]
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"a partition of y has {y.shape[0]} rows, the matching partition of X {n}")
    info = {"n": n}
    if want_y:
        info["y"] = y
    if multilabel:
        info["labels"] = np.unique(y, axis=0) if n else y.reshape(0, *y.shape[1:])
    else:
        y = y.reshape(-1)
        info["labels"] = np.unique(y)
    if w is not None:
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        if w.shape[0] != n:
            raise ValueError(f"a partition of sample_weight has {w.shape[0]} rows, the matching partition of X {n}")
        info["w_finite"] = bool(np.all(np.isfinite(w)))
        info["w_min"] = float(w.min()) if n else np.inf
        if not multilabel:
            info["labels_positive"] = np.unique(y[w > 0])
    if kinds is not None:
        levels = {}
        for j, kind in enumerate(kinds):
            if kind == "categorical":
                s = X.iloc[:, j]
                if isinstance(s.dtype, pd.CategoricalDtype):
                    levels[j] = {"categories": [str(c) for c in s.dtype.categories]}
                codes, uniques = pd.factorize(s, use_na_sentinel=True)
                levels.setdefault(j, {})["present"] = sorted({str(u) for u in uniques})
        info["levels"] = levels
    return info


def _part_columns(x, kinds, levels):
    """One partition's rows as the extension's column list, read in place where possible
    (session 8: no concatenation of a worker's partitions): a numpy block's columns are strided
    views of it (float32 and float64 as they are, other numbers as float64); a DataFrame's numeric
    columns as float64 (NaN missing), its categorical ones as codes into the global levels (-1
    missing)."""
    import pandas as pd

    if kinds is None:
        X = np.asarray(x)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        return _core_columns([X[:, j] for j in range(X.shape[1])], None, None)
    cols = []
    for j, kind in enumerate(kinds):
        s = x.iloc[:, j]
        if kind == "numeric":
            cols.append(s.to_numpy(dtype=np.float64, na_value=np.nan))
        else:
            index = {name: i for i, name in enumerate(levels[j])}
            codes, uniques = pd.factorize(s, use_na_sentinel=True)
            lut = np.array([index[str(u)] for u in uniques], dtype=np.int64)
            codes = np.asarray(codes, dtype=np.int64)
            cols.append(np.where(codes >= 0, lut[np.clip(codes, 0, None)] if lut.size else -1, -1).astype(np.int64))
    return _core_columns(cols, kinds, levels)


def _shard_parts(parts, meta):
    """A rank's partitions as the extension's `("parts", [...])` form, in order."""
    return ("parts", [_part_columns(p[1], meta["kinds"], meta["levels"]) for p in parts])


def _training_parts(parts, meta):
    """A rank's partitions `(i, x, y, w[, mask])` as `(i, x, y, w)` of their training rows, and the
    rows `validation_fraction` held out (`(valid_x, valid_y)` lists): with a split, each
    partition's boolean mask (the fifth element) marks them; otherwise the partitions as they are."""
    if not meta.get("split"):
        return [p[:4] for p in parts], [], []
    train, valid_x, valid_y = [], [], []
    for i, x, y, w, mask in parts:
        keep = ~mask
        valid_x.append(x[mask] if _array_rows(meta) else x.iloc[mask])
        valid_y.append(np.asarray(y)[mask])
        w = None if w is None else np.asarray(w, dtype=np.float64).reshape(-1)[keep]
        train.append((i, x[keep] if _array_rows(meta) else x.iloc[keep], np.asarray(y)[keep], w))
    return train, valid_x, valid_y


def _rank_weights(parts, meta):
    """The sample weights of a rank's training rows (float64), or None without weights."""
    if not meta["weighted"]:
        return None
    ws = [np.asarray(p[3], dtype=np.float64).reshape(-1) for p in parts]
    return np.concatenate(ws) if ws else np.empty(0)


def _core_columns(cols, kinds, levels):
    """The extension's column list of `cols` (see `_data`)."""
    out = []
    for j, c in enumerate(cols):
        if kinds is not None and kinds[j] == "categorical":
            out.append((np.ascontiguousarray(c, dtype=np.int64), list(levels[j])))
        else:
            # Read in place, strided or not (a dask array's column is a view of its row block).
            out.append(column_form(c))
    return out


def _fit_shard_spmd(shard, meta, rank, size, allreduce, cancelled):
    """The SPMD fit: the core trains on this rank's rows only (as bins from the merged mapper),
    and every sum over rows goes through `allreduce`."""
    model = _boostlab.fit_shard(
        meta["feature_names"],
        shard["bins"],
        meta["kind"],
        shard["y"],
        meta["class_names"],
        meta["params_json"],
        "",  # the shard is binned: the mapper travels in it
        rank,
        size,
        allreduce,
        shard["w"],
        meta["loss"],
        [_round_check(rank, cancelled)] + ([_publisher(meta["publish"])] if rank == 0 and meta.get("publish") else []),
        meta["n_jobs"],
        valid=shard.get("valid"),
        init_model=meta.get("init"),
    )
    return model.to_json()


def _publisher(queue_name):
    """Rank 0's round callback with user callbacks: each round's record goes to the client through
    a `distributed.Queue` (one scheduler message per round), where the callbacks run."""
    from distributed import Queue

    queue = Queue(queue_name)

    def publish(record):
        queue.put(dict(record))

    return publish


def _round_check(rank, cancelled):
    """A round callback that stops a rank whose task was cancelled (another rank failed)."""

    def check(_record):
        if cancelled():
            raise DaskFitError(f"boostlab.dask: rank {rank}'s fit was cancelled")

    return check


def _cancel_check():
    """A function telling whether the calling task has been cancelled (by the client, after
    another rank failed): the running rank then stops at its next reduction or round."""
    from distributed import get_worker
    from distributed.worker import thread_state

    worker = get_worker()
    key = getattr(thread_state, "key", None)

    def cancelled():
        ts = worker.state.tasks.get(key)
        return ts is None or ts.state not in ("executing", "long-running")

    return cancelled


_HUBS: dict[str, Collective] = {}
_HUBS_LOCK = threading.Lock()


def _open_hub(fit_id, addrs, timeout, transport="dask"):
    """First round (a short task on rank 0's worker): rank 0 starts listening, and its address goes
    back to the client, which gives it to the other ranks. The listener waits for rank 0's
    training task for at most `timeout`, then closes itself."""
    from distributed import get_worker

    coll = Collective(fit_id, 0, addrs, timeout, transport=transport)
    address = coll.open_root(get_worker().security.get_listen_args("worker"))
    with _HUBS_LOCK:
        _HUBS[fit_id] = coll

    def expire():
        with _HUBS_LOCK:
            left = _HUBS.pop(fit_id, None)
        if left is not None:
            left.close()

    t = threading.Timer(timeout, expire)
    t.daemon = True
    t.start()
    return address


def _hub_count():
    """Open listeners in this worker process (the tests check that none is left behind)."""
    with _HUBS_LOCK:
        return len(_HUBS)


def _assemble_shard(parts, meta, mapper_json, valid_parts=None):
    """Round 3 (pinned to the worker, its result stays there): the worker's partitions, in order,
    binned straight into one matrix of bins with the merged mapper (`bin_shard`: each partition
    read where it is, no float copy made or kept; `mapper_json` from `_merge_summaries`), with the
    targets and weights (global classes),
    and its validation rows (`meta["validation"]`): the rows of `valid_parts` (an `eval_set`'s
    partitions given to this rank), or those of its own partitions that `validation_fraction`
    held out (each partition's boolean mask, the fifth element of its entry)."""
    parts, valid_x, valid_y = _training_parts(parts, meta)
    if valid_parts is not None:
        valid_x = [p[0] for p in valid_parts]
        valid_y = [p[1] for p in valid_parts]
    bins = _boostlab.bin_shard(meta["feature_names"], _shard_parts(parts, meta), mapper_json)
    n = bins.n_rows
    shard = {"bins": bins, "y": _core_target([p[2] for p in parts], n, meta), "w": _rank_weights(parts, meta), "n": n}
    if meta.get("validation"):
        shard["valid"] = _valid_form(valid_x, valid_y, meta)
    return shard


def _array_rows(meta) -> bool:
    """True when the features are a dask array's blocks (numpy), not DataFrame partitions."""
    return meta["kinds"] is None


def _valid_form(xparts, yparts, meta):
    """This rank's validation rows as the extension's `valid` tuple `(columns, kind, y, names)`
    (possibly of no rows): numeric columns as float64, categorical ones as codes with their own
    levels (the core re-codes them onto the training levels by name, as for prediction)."""
    import pandas as pd

    kinds = meta["kinds"]
    d = len(meta["feature_names"])
    if kinds is None:
        mats = [np.asarray(p) for p in xparts]
        X = np.concatenate(mats, axis=0) if mats else np.empty((0, d))
        X = X.astype(np.float64) if X.dtype not in (np.float32, np.float64) else X
        cols = [column_form(X[:, j]) for j in range(d)]
        n = X.shape[0]
    else:
        frame = pd.concat(xparts, axis=0) if xparts else None
        n = 0 if frame is None else frame.shape[0]
        cols = []
        for j, kind in enumerate(kinds):
            if frame is None:
                cols.append(column_form(np.empty(0)) if kind == "numeric" else (np.empty(0, dtype=np.int64), []))
                continue
            s = frame.iloc[:, j]
            if kind == "numeric":
                cols.append(column_form(s.to_numpy(dtype=np.float64, na_value=np.nan)))
            else:
                codes, uniques = pd.factorize(s, use_na_sentinel=True)
                cols.append((np.asarray(codes, dtype=np.int64), [str(u) for u in uniques]))
    return cols, meta["kind"], _core_target(yparts, n, meta), list(meta["class_names"])


def _core_target(yparts, n, meta):
    """The core's target of `n` rows from label partitions: class indices into the global
    classes, or a 0/1 uint8 matrix (multi-label)."""
    ys = [np.asarray(v) for v in yparts]
    if meta["kind"] == "multilabel":
        y = np.concatenate(ys, axis=0) if ys else np.empty((0, meta["y_width"]))
        return np.ascontiguousarray(y.reshape(n, -1) != 0, dtype=np.uint8)
    y = np.concatenate([v.reshape(-1) for v in ys]) if ys else np.empty(0)
    return np.searchsorted(meta["classes"], y).astype(np.int64)


def _weight_prefix(start, parts, meta):
    """The running sum of the sample weights over the ranks, left to right (the single machine's
    cumulative sums, for the weighted bin sample)."""
    w = _rank_weights(_training_parts(parts, meta)[0], meta)
    return float(_boostlab.weight_prefix(start, w if w is not None else np.empty(0)))


def _shard_summary(parts, meta, rank, weight_offset, total_weight):
    """Round 2: this rank's binning summary (the core's sampled binning by global row index), read
    from its partitions where they are."""
    parts = _training_parts(parts, meta)[0]
    return _boostlab.shard_summary(
        meta["feature_names"],
        _shard_parts(parts, meta),
        meta["params_json"],
        meta["rank_offsets"][rank],
        meta["n_rows"],
        _rank_weights(parts, meta),
        weight_offset,
        total_weight,
    )


def _merge_summaries(summaries, meta):
    """The bin mapper (JSON) from the ranks' summaries, in rank order."""
    return _boostlab.bin_mapper_from_summaries(meta["feature_names"], list(summaries), meta["params_json"])


def _rank_task(fit_id, rank, addrs, hub, shard, meta, timeout):
    """One rank's long-running task: connects the collective, trains on the worker's shard, and
    checks that every rank holds the same model."""
    from distributed import get_worker

    cancelled = _cancel_check()
    if rank == 0:
        with _HUBS_LOCK:
            coll = _HUBS.pop(fit_id, None)
        if coll is None:
            raise DaskFitError(
                f"boostlab.dask: rank 0's listener (worker {addrs[0]}) expired before its task "
                f"started (timeout={timeout:g} s)"
            )
    else:
        coll = Collective(fit_id, rank, addrs, timeout, transport=meta.get("transport", "dask"))
    coll.cancelled = cancelled
    try:
        worker = get_worker()
        if meta["n_jobs"] is None:
            meta = dict(meta, n_jobs=worker.state.nthreads)
        if rank == 0:
            coll.wait_connected()
        else:
            coll.connect(hub, worker.security.get_connection_args("worker"))
        cpu0, wall0 = time.process_time(), time.perf_counter()
        allreduce, waits = _timed(coll.allreduce_shared)
        model_json = _fit_shard_spmd(shard, meta, rank, len(addrs), allreduce, cancelled)
        _agree(coll, model_json, rank, len(addrs))
        # The worker process's CPU seconds and the wall seconds of the training (all threads).
        stats = dict(coll.stats, cpu=time.process_time() - cpu0, wall=time.perf_counter() - wall0, waits=waits)
        return (model_json if rank == 0 else None), stats
    finally:
        coll.close()


def _timed(allreduce):
    """`allreduce` with its wall seconds counted by kind of reduction (session 8, to see where a
    rank waits for the others): a tree's first histogram (`root`: after a booster step, the
    other rank's step and root histogram are what this rank waits for), the next histograms
    (`children`: the other rank's split search and smaller child) and the small sums (`small`:
    the booster's steps, the set-up's). Returns the wrapper and the `{kind: [calls, seconds]}`
    dict it fills."""
    waits = {"root": [0, 0.0], "children": [0, 0.0], "small": [0, 0.0]}
    last = ["small"]

    def timed(buf):
        t = time.perf_counter()
        out = allreduce(buf)
        kind = "small" if buf.size < 1024 else ("children" if last[0] != "small" else "root")
        last[0] = kind
        w = waits[kind]
        w[0] += 1
        w[1] += time.perf_counter() - t
        return out

    return timed, waits


def _agree(coll, model_json, rank, size):
    """Every rank checks that all ranks hold the same model (one reduction of the models' SHA-256
    digests, each rank in its own slot): a last exchange that also proves every rank alive."""
    digest = np.frombuffer(hashlib.sha256(model_json.encode()).digest(), dtype=np.uint32).astype(np.float64)
    v = np.zeros(size * digest.size)
    v[rank * digest.size : (rank + 1) * digest.size] = digest
    all_digests = coll.allreduce(v).reshape(size, digest.size)
    if not np.all(all_digests == all_digests[0]):
        bad = [r for r in range(size) if not np.array_equal(all_digests[r], all_digests[0])]
        raise DaskFitError(f"boostlab.dask: ranks {bad} ended with a model different from rank 0's")


# ---------------------------------------------------------------------------------- prediction


def _predict_array_block(block, est, method):
    if block.shape[0] == 0:
        out = getattr(est, method)(np.zeros((1, block.shape[1]), dtype=block.dtype))
        return out[:0]
    return getattr(est, method)(block)


def _predict_frame_part(part, est, method):
    import pandas as pd

    if part.shape[0] == 0:
        out = np.empty((0,) + _out_tail(est, method))
    else:
        out = getattr(est, method)(part)
    if method == "predict" and out.ndim == 1:
        return pd.Series(out, index=part.index)
    return out


def _out_tail(est, method):
    """The shape of one row of `method`'s output (() for one value per row)."""
    m = est.model_
    k = len(est.classes_)
    if method == "predict":
        return (k,) if m.task == "multilabel" else ()
    if method == "predict_proba":
        return (k,)
    if m.task == "binary" or (m.task == "multiclass" and k == 2):
        return ()
    return (k,)


# ---------------------------------------------------------------------------------- estimators


class _DaskMixin:
    """The distributed ``fit`` and the dask predictions, over a local estimator class (the second
    base): parameters, their checks and everything about the model are the local estimator's."""

    _local_cls: type = None

    # ------------------------------------------------------------------ helpers

    def _client(self):
        if self.client is not None:
            return self.client
        try:
            return distributed.default_client()
        except ValueError as e:
            raise ValueError(
                f"{type(self).__name__}: no dask client; pass client= or create a distributed.Client first"
            ) from e

    def _timeout(self):
        t = _float("timeout", self.timeout)
        if t <= 0:
            raise ValueError(f"invalid parameter `timeout`: expected a number of seconds > 0, got {t!r}")
        return t

    def _transport(self):
        return check_transport(self.transport)

    def _refuse_local_only(self):
        if getattr(self, "callbacks", None) is not None:
            _callbacks(self.callbacks)  # the local check: a list of callables

    def _local_params(self):
        p = self.get_params(deep=False)
        p.pop("client", None)
        p.pop("timeout", None)
        p.pop("transport", None)
        return p

    # ------------------------------------------------------------------ fit

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Trains on the dask cluster (see the module's doc). X: a dask array or dask DataFrame;
        y: a dask array (1-d labels, or for AdaBoost.MH / MR a 2-d 0/1 indicator matrix) or dask
        Series, partitioned like X; sample_weight: likewise, non-negative, or None.

        eval_set: a list of one pair ``(X_val, y_val)`` of dask collections of the kind of X and
        y (any partitioning): each round's metric goes into ``history_["valid_metric"]`` and, with
        ``n_iter_no_change``, early stopping uses it, as the local estimator's. Without it and with
        ``n_iter_no_change``, ``validation_fraction`` of the rows is held out: the local
        estimator's split (the same rows, drawn from every row's label in partition order).
        With ``warm_start=True`` and a fitted model, the missing rounds are added to it (on the
        training data, as the local estimator).

        Raises `DaskFitError` naming the worker when a worker is lost or does not answer within
        `timeout`. Returns self."""
        self._refuse_local_only()
        timeout = self._timeout()
        transport = self._transport()
        client = self._client()
        n_iter_no_change = _int("n_iter_no_change", getattr(self, "n_iter_no_change", None), minimum=1, optional=True)
        init = self._warm_start_model()
        split = None
        if eval_set is None and n_iter_no_change is not None:
            split = _float("validation_fraction", getattr(self, "validation_fraction", 0.1))
            if not 0.0 < split < 1.0:
                raise ValueError(
                    f"invalid parameter `validation_fraction`: expected a number in (0, 1), got {split!r}"
                )
        self._reset_fitted()
        X, y, sample_weight, kinds = self._dask_inputs(X, y, sample_weight)
        valid_in = self._dask_eval_set(eval_set, X)
        multilabel = self._multilabel and y.ndim == 2 and y.shape[1] not in (1,)
        if _is_dask_array(y) and y.ndim == 2 and not self._multilabel:
            raise ValueError(f"{type(self).__name__}: y must be 1-d")
        n_jobs = self._n_jobs()

        colls = [X, y] + ([sample_weight] if sample_weight is not None else []) + list(valid_in or [])
        clock = [("start", time.perf_counter())]
        persisted = client.persist(colls)
        Xp, yp = persisted[0], persisted[1]
        wp = persisted[2] if sample_weight is not None else None
        vxf, vyf, v_owner = [], [], []
        if valid_in is not None:
            Xvp, yvp = persisted[-2], persisted[-1]
            vxf = _partition_futures(Xvp, _n_parts(Xvp))
            vyf = _partition_futures(yvp, _n_parts(Xvp))
        n_parts = _n_parts(Xp)
        for name, c in (("y", yp), ("sample_weight", wp)):
            if c is not None and _n_parts(c) != n_parts:
                raise ValueError(f"{name} must be partitioned like X: {_n_parts(c)} partitions, X has {n_parts}")
        xf = _partition_futures(Xp, n_parts)
        yf = _partition_futures(yp, n_parts)
        wf = _partition_futures(wp, n_parts) if wp is not None else [None] * n_parts
        every = [f for f in xf + yf + wf + vxf + vyf if f is not None]
        _wait(every, timeout, "persisting the data")
        alive = _alive_workers(client)
        owner = _place_partitions([f.key for f in xf + vxf], client.who_has(xf + vxf), alive)
        owner, v_owner = owner[: len(xf)], owner[len(xf) :]

        # Round 1: per-partition facts, computed on each partition's owner — pinned there
        # (`allow_other_workers=False`): the rows are read where they will train, and no task
        # copies a partition to a worker that does not train it.
        infos = [
            client.submit(
                _part_info, x, yy, ww, kinds, multilabel, split is not None,
                workers=[o], allow_other_workers=False, pure=False,
            )
            for x, yy, ww, o in zip(xf, yf, wf, owner)
        ]
        v_infos = [
            client.submit(_part_info, x, yy, None, kinds, multilabel, workers=[o], allow_other_workers=False, pure=False)
            for x, yy, o in zip(vxf, vyf, v_owner)
        ]
        _wait(infos + v_infos, timeout, "reading the partitions' labels and levels")
        infos, v_infos = client.gather(infos), client.gather(v_infos)
        masks = self._validation_masks(infos, split, multilabel) if split is not None else [None] * n_parts
        meta = self._global_meta(infos, kinds, multilabel, sample_weight is not None, n_jobs)
        if valid_in is not None or split is not None:
            self._check_validation(v_infos, masks, meta)
            meta["validation"], meta["split"] = True, split is not None
            if self._clipped:
                # t-AdaBoost predicting with its clipped model is scored as clipped (as locally).
                meta["params_json"] = json.dumps(dict(json.loads(meta["params_json"]), eval_clipped=True))
        if split is not None:
            for info, m in zip(infos, masks):
                info["n"] -= int(m.sum())  # the training rows
        meta["init"] = init
        meta["transport"] = transport
        clock.append(("inputs", time.perf_counter()))

        # Ranks: the workers holding partitions, in the order of their addresses. The rows are
        # trained on in rank order (each worker's partitions in their order): the model is the
        # local one on the rows in that order (`training_order_`).
        ranks = sorted(set(owner))
        parts_of = {a: [] for a in ranks}
        for i, (a, x, yy, ww) in enumerate(zip(owner, xf, yf, wf)):
            parts_of[a].append((i, x, yy, ww) + ((masks[i],) if split is not None else ()))
        # An eval_set's partitions: each to the rank holding it, else round robin.
        valid_of = {a: [] for a in ranks}
        for i, (a, x, yy) in enumerate(zip(v_owner, vxf, vyf)):
            valid_of[a if a in valid_of else ranks[i % len(ranks)]].append((x, yy))
        rows = [sum(infos[p[0]]["n"] for p in parts_of[a]) for a in ranks]
        meta["rank_offsets"] = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64).tolist()
        meta["n_rows"] = int(meta["rank_offsets"][-1])
        pin = {"allow_other_workers": False, "pure": False, "retries": 0}
        shards, later = [], []
        try:
            # Round 2: the bins, from every rank's summary of its partitions (merged on rank 0's
            # worker), and round 3: each worker's shard — its partitions binned with them —, kept
            # on the worker for training. The mapper goes from rank 0's worker to the others as a
            # task's input, not through the client: one wait for both rounds (session 8).
            mapper = self._bin_mapper(client, parts_of, ranks, meta, timeout, pin, later)
            shards = [
                client.submit(
                    _assemble_shard, parts_of[a], meta, mapper, valid_of[a] if valid_in else None, workers=[a], **pin
                )
                for a in ranks
            ]
            _supervise(client, shards, ranks, timeout, results=False)
            clock.append(("bins", time.perf_counter()))
            callbacks = _callbacks(getattr(self, "callbacks", None)) or []
            model_json, results = self._train(client, shards, ranks, meta, timeout, later, callbacks)
        finally:
            client.cancel(shards + later, force=True)
        clock.append(("training", time.perf_counter()))
        model = _boostlab.Model.from_json(model_json)
        self.classes_ = meta["classes"] if meta["kind"] == "classes" else np.arange(len(meta["class_names"]))
        if meta["kind"] == "multilabel":
            self._y_dtype = meta["y_dtype"]
        self._set_model(model)
        self.n_workers_ = len(ranks)
        self.workers_ = list(ranks)
        self.training_order_ = [p[0] for a in ranks for p in parts_of[a]]
        stats = results[0][1]
        self.comm_stats_ = {
            "ranks": len(ranks),
            "reductions": stats["reductions"],
            "values_reduced": stats["values"],
            # rank 0's traffic: it receives every other rank's vector and sends each the sum.
            "bytes_through_rank0": stats["bytes_sent"] + stats["bytes_received"],
            "per_rank": [s for _, s in results],
            # Wall seconds of each stage of `fit`, as seen by the client.
            "seconds": {k: round(t - clock[i][1], 4) for i, (k, t) in enumerate(clock[1:])},
        }
        return self

    @staticmethod
    def _bin_mapper(client, parts_of, ranks, meta, timeout, pin, later):
        """Round 2: the bins from the ranks' summaries of their partitions, merged in rank order
        (the core's sampled binning by global row index: the single machine's bins on the same
        rows); returns the future of the mapper's JSON, on rank 0's worker."""
        offsets = [0.0]
        if meta["weighted"]:
            # The running weight sum, rank after rank (a chain of tiny tasks).
            prev = 0.0
            chain = []
            for a in ranks:
                prev = client.submit(_weight_prefix, prev, parts_of[a], meta, workers=[a], **pin)
                chain.append(prev)
            later.extend(chain)
            # Futures, resolved on the workers: the client does not wait for them.
            total, offsets = chain[-1], [0.0] + chain[:-1]
        else:
            total, offsets = 0.0, [0.0] * len(ranks)
        summaries = [
            client.submit(_shard_summary, parts_of[a], meta, r, offsets[r], total, workers=[a], **pin)
            for r, a in enumerate(ranks)
        ]
        later.extend(summaries)
        # Merged on rank 0's worker (the summaries hold every sampled value, sorted, as f32 for
        # float32 data: ≈ 11 MB per rank at 2M × 28, which a client far from the cluster should
        # not download); the mapper goes from there to the ranks' shard tasks.
        merged = client.submit(_merge_summaries, summaries, meta, workers=[ranks[0]], **pin)
        later.append(merged)
        return merged

    @staticmethod
    def _train(client, shards, ranks, meta, timeout, later, callbacks=()):
        """Round 4: rank 0's listener, then one long-running task per rank. With `callbacks`, rank
        0 publishes each round's record to a queue the client drains, calling the callbacks in
        round order; one that raises cancels the ranks and its exception is raised (as locally:
        no model)."""
        fit_id = uuid.uuid4().hex
        queue = None
        if callbacks:
            queue = distributed.Queue(f"boostlab-rounds-{fit_id}", client=client)
            meta = dict(meta, publish=queue.name)
        hub = client.submit(
            _open_hub, fit_id, ranks, timeout, meta.get("transport", "dask"), workers=[ranks[0]], allow_other_workers=False, pure=False,
            key=f"boostlab-hub-{fit_id}",
        )
        later.append(hub)
        hub_address = _supervise(client, [hub], ranks[:1], timeout)[0]
        futs = [
            client.submit(
                _rank_task, fit_id, r, ranks, hub_address, sh, meta, timeout,
                workers=[a], allow_other_workers=False, pure=False, retries=0,
                key=f"boostlab-fit-{fit_id}-rank{r}",
            )
            for r, (a, sh) in enumerate(zip(ranks, shards))
        ]
        later.extend(futs)
        on_poll = _CallbackRunner(queue, callbacks) if queue is not None else None
        try:
            results = _supervise(client, futs, ranks, timeout, on_poll=on_poll)
            if on_poll is not None:
                on_poll(final=True)  # the last rounds' records
        finally:
            if queue is not None:
                queue.close()
        return results[0][0], results

    def _dask_eval_set(self, eval_set, X):
        """`eval_set`'s `(X_val, y_val)` as dask collections of X's kind, or None."""
        if eval_set is None:
            return None
        if not isinstance(eval_set, (list, tuple)) or len(eval_set) != 1 or len(eval_set[0]) != 2:
            raise ValueError("eval_set: expected a list of one (X_val, y_val) pair")
        Xv, yv = eval_set[0]
        if _is_dask_frame(X) != _is_dask_frame(Xv) or not (_is_dask_frame(Xv) or _is_dask_array(Xv)):
            raise TypeError(f"eval_set: X_val must be a dask {'DataFrame' if _is_dask_frame(X) else 'array'} like X")
        if _is_dask_frame(Xv):
            if list(Xv.columns) != list(X.columns):
                raise ValueError(f"eval_set: X_val has columns {list(Xv.columns)}, X has {list(X.columns)}")
        else:
            if Xv.ndim != 2 or Xv.shape[1] != X.shape[1]:
                raise ValueError(f"eval_set: X_val has shape {Xv.shape}; expected (n, {X.shape[1]})")
            if any(np.isnan(c) for c in Xv.chunks[0]):
                raise ValueError("eval_set: X_val has unknown chunk sizes: call compute_chunk_sizes() first")
            if len(Xv.chunks[1]) > 1:
                Xv = Xv.rechunk({1: -1})
        yv = self._align(Xv, yv, "eval_set's y_val")
        if yv is None:
            raise ValueError("eval_set: y_val is None")
        return Xv, yv

    def _validation_masks(self, infos, frac, multilabel):
        """`validation_fraction`'s held-out rows, one boolean mask per partition: the local
        estimator's split (scikit-learn's `train_test_split`, stratified by class for 1-d labels,
        seeded by `random_state`), which depends only on every row's label, in partition order.
        The client holds one label and one index per row while drawing it."""
        from sklearn.model_selection import train_test_split

        from ._base import _seed

        y_all = np.concatenate([i.pop("y") for i in infos], axis=0)
        n = y_all.shape[0]
        stratify = None if multilabel else y_all
        _, held = train_test_split(np.arange(n), test_size=frac, stratify=stratify, random_state=_seed(self.random_state))
        mask = np.zeros(n, dtype=bool)
        mask[held] = True
        bounds = np.concatenate([[0], np.cumsum([i["n"] for i in infos])])
        return [mask[bounds[p] : bounds[p + 1]] for p in range(len(infos))]

    @staticmethod
    def _check_validation(v_infos, masks, meta):
        """The validation rows' labels must be training classes (an eval_set's; a held-out
        part's are); there must be some."""
        n_valid = sum(i["n"] for i in v_infos) + sum(int(m.sum()) for m in masks if m is not None)
        if n_valid == 0:
            raise ValueError("eval_set: the validation data have no rows")
        if meta["kind"] == "multilabel":
            for i in v_infos:
                lab = np.asarray(i["labels"])
                if lab.size and lab.reshape(lab.shape[0], -1).shape[1] != meta["y_width"]:
                    raise ValueError(f"eval_set: y_val has {lab.shape[1]} label columns, expected {meta['y_width']}")
            return
        seen = set(np.asarray(meta["classes"]).tolist())
        unknown = sorted({c for i in v_infos for c in np.asarray(i["labels"]).tolist() if c not in seen}, key=str)
        if unknown:
            raise ValueError(f"eval_set: y_val has labels not seen in training: {unknown[:10]!r}")

    def _dask_inputs(self, X, y, sample_weight):
        """Checks the kinds of the inputs; returns (X, y, sample_weight, column kinds or None)."""
        if _is_dask_frame(X):
            meta_frame = X._meta
            kinds = []
            for c in X.columns:
                dt = X[c].dtype
                try:
                    kinds.append(_column_kind(dt))
                except (TypeError, ValueError) as e:
                    raise type(e)(f"column {c!r}: {e}") from None
                if kinds[-1] == "categorical" and str(dt) == "category" and not X[c].cat.known:
                    raise ValueError(
                        f"column {c!r} is categorical with unknown categories: make them known "
                        "(ddf.categorize() or astype(pandas.CategoricalDtype(categories)))"
                    )
            if len(X.columns) == 0:
                raise ValueError("X has no columns")
            from sklearn.utils.validation import validate_data

            validate_data(self, meta_frame, skip_check_array=True, reset=True)
        elif _is_dask_array(X):
            if X.ndim != 2:
                raise ValueError(f"X must be 2-d, got a {X.ndim}-d dask array")
            if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool) or np.issubdtype(X.dtype, np.complexfloating):
                raise ValueError(f"X has dtype {X.dtype}: numeric data expected")
            if any(np.isnan(c) for c in X.chunks[0]):
                raise ValueError("X has unknown chunk sizes: call X.compute_chunk_sizes() first")
            if len(X.chunks[1]) > 1:
                X = X.rechunk({1: -1})
            kinds = None
            self.n_features_in_ = X.shape[1]
            self.__dict__.pop("feature_names_in_", None)
        else:
            raise TypeError(
                f"{type(self).__name__}.fit takes a dask array or a dask DataFrame, got "
                f"{type(X).__name__}; use {self._local_cls.__name__} for in-memory data"
            )
        y = self._align(X, y, "y")
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        sample_weight = self._align(X, sample_weight, "sample_weight")
        return X, y, sample_weight, kinds

    @staticmethod
    def _align(X, v, name):
        if v is None:
            return None
        if _is_dask_frame(v):
            if len(v.columns) != 1:
                raise ValueError(f"{name}: a dask DataFrame with {len(v.columns)} columns; expected a Series")
            v = v[v.columns[0]]
        if _is_dask_series(v):
            if v.npartitions != _n_parts(X):
                raise ValueError(f"{name} must be partitioned like X: {v.npartitions} partitions, X has {_n_parts(X)}")
            return v
        if _is_dask_array(v):
            if _is_dask_array(X):
                if v.shape[0] != X.shape[0]:
                    raise ValueError(f"{name} has {v.shape[0]} rows, X has {X.shape[0]}")
                v = v.rechunk({0: X.chunks[0]} | ({1: -1} if v.ndim == 2 else {}))
            elif v.numblocks[0] != X.npartitions:
                raise ValueError(f"{name} must be partitioned like X")
            return v
        raise TypeError(f"{name} must be a dask array or dask Series, got {type(v).__name__}")

    def _global_meta(self, infos, kinds, multilabel, weighted, n_jobs):
        """Labels, classes, levels and row offsets over all partitions, checked as the local
        estimators check them; and everything every rank needs to train alike."""
        n_parts = [i["n"] for i in infos]
        total = int(sum(n_parts))
        if total == 0:
            raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
        if weighted:
            if not all(i.get("w_finite", True) for i in infos):
                raise ValueError("Input sample_weight contains NaN or infinity.")
            if min(i.get("w_min", np.inf) for i in infos) < 0:
                raise ValueError("Negative values in data passed to `sample_weight`")
        labels = [i["labels"] for i in infos if len(i["labels"])]
        if multilabel:
            rows = np.unique(np.concatenate(labels, axis=0), axis=0)
            kind, _, names, classes, y_dtype = self._prepare_y(rows, rows.shape[0], None)
        else:
            allv = np.unique(np.concatenate(labels))
            kind, _, names, classes, y_dtype = self._prepare_y(allv, allv.shape[0], None)
            if weighted:
                pos = np.unique(np.concatenate([i["labels_positive"] for i in infos]))
                if pos.size < 2:
                    raise ValueError(
                        f"sample_weight is positive on one class only ({pos!r}): training needs two classes"
                    )
        levels = None
        if kinds is not None:
            levels = []
            for j, k in enumerate(kinds):
                if k != "categorical":
                    levels.append(None)
                    continue
                declared = {tuple(i["levels"][j]["categories"]) for i in infos if "categories" in i["levels"].get(j, {})}
                if len(declared) > 1:
                    raise ValueError(
                        f"column {self.feature_names_in_[j]!r}: the partitions have different "
                        "categories; make them identical (astype(pandas.CategoricalDtype(...)))"
                    )
                present = set()
                for i in infos:
                    present.update(i["levels"][j]["present"])
                # The local estimators' levels: the distinct present values as strings, sorted.
                levels.append(sorted(present))
        params = self._params(kind == "multilabel")
        return {
            "kind": kind,
            "class_names": names,
            "classes": classes,
            "y_dtype": y_dtype,
            "y_width": len(names) if kind == "multilabel" else 1,
            "kinds": kinds,
            "levels": levels,
            "feature_names": core_feature_names(self, self.n_features_in_),
            "params_json": json.dumps(params, allow_nan=False),
            "loss": self._custom_loss(),
            "weighted": weighted,
            "n_jobs": n_jobs,
        }

    # ------------------------------------------------------------------ prediction

    def to_local(self):
        """The fitted local estimator (same parameters, same model): to predict on in-memory
        data, pickle or inspect without a cluster."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        est = self._local_cls(**self._local_params())
        for k, v in vars(self).items():
            if (k.endswith("_") and not k.startswith("__") and k not in self._dask_only_attrs) or k == "_y_dtype":
                setattr(est, k, v)
        return est

    _dask_only_attrs = ("n_workers_", "workers_", "comm_stats_")

    def _dask_predict(self, X, method):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        est = self.to_local()
        tail = _out_tail(est, method)
        if method == "predict" and not tail:
            dtype = np.asarray(est.classes_).dtype
        elif method == "predict":
            dtype = np.dtype(getattr(est, "_y_dtype", np.int64))
        else:
            dtype = np.dtype(np.float64)
        if _is_dask_array(X):
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has shape {X.shape}; expected (n, {self.n_features_in_})")
            if len(X.chunks[1]) > 1:
                X = X.rechunk({1: -1})
            if tail:
                return X.map_blocks(
                    _predict_array_block, est, method, chunks=(X.chunks[0], tail), dtype=dtype,
                    meta=np.empty((0, 0), dtype=dtype),
                )
            return X.map_blocks(
                _predict_array_block, est, method, drop_axis=1, dtype=dtype, meta=np.empty((0,), dtype=dtype)
            )
        if _is_dask_frame(X):
            if method == "predict" and not tail:
                import pandas as pd

                return X.map_partitions(_predict_frame_part, est, method, meta=pd.Series([], dtype=dtype))
            # An array meta: the result is a dask array (row chunks of unknown size).
            return X.map_partitions(_predict_frame_part, est, method, meta=np.empty((0,) + tail, dtype=dtype))
        raise TypeError(
            f"{type(self).__name__}.{method} takes a dask array or a dask DataFrame, got "
            f"{type(X).__name__}; use to_local() for in-memory data"
        )

    def predict(self, X):
        """Predicted labels, a dask array (dask array X) or dask Series (dask DataFrame X);
        computed lazily, partition by partition where the data live."""
        return self._dask_predict(X, "predict")

    def predict_proba(self, X):
        """Probability estimates as a dask array (n_samples, n_classes)."""
        return self._dask_predict(X, "predict_proba")

    def decision_function(self, X):
        """Scores as a dask array (see the local estimator's `decision_function`)."""
        return self._dask_predict(X, "decision_function")

    # ------------------------------------------------------------------ model files

    @classmethod
    def load_model(cls, path):
        """Reads a model file (from `save_model` or `boostlab train`) into this Dask estimator."""
        import os

        local = cls._local_cls.load_model(os.fspath(path))
        return cls._from_local(local)

    @classmethod
    def _from_local(cls, local):
        est = cls(**local.get_params(deep=False))
        for k, v in vars(local).items():
            if k.endswith("_") or k == "_y_dtype":
                setattr(est, k, v)
        return est


def _wait(futs, timeout, what):
    """Waits for short tasks (at most `timeout`); a task that failed raises its error, a cancelled
    one (its worker was lost) a `DaskFitError`."""
    try:
        wait(futs, timeout=timeout)
    except distributed.TimeoutError:
        raise DaskFitError(f"boostlab.dask: {what} took longer than timeout={timeout:g} s") from None
    except Exception as e:  # e.g. FuturesCancelledError: a worker holding data was lost
        raise DaskFitError(f"boostlab.dask: {what} failed ({type(e).__name__}: {e}); was a worker lost?") from e
    for f in futs:
        if f.status == "error":
            f.result()  # raises the task's exception
        if f.status == "cancelled":
            raise DaskFitError(f"boostlab.dask: {what}: a task was cancelled (worker lost?)")


class _CallbackRunner:
    """Calls the user's callbacks, on the client, with the records rank 0 published (in round
    order). Called while the ranks train; `final=True` after they finished: every record is then
    in the queue (rank 0 published it before its task ended)."""

    def __init__(self, queue, callbacks):
        self.queue, self.callbacks, self.seen = queue, callbacks, 0

    def __call__(self, final=False):
        while True:
            try:
                n = self.queue.qsize()
            except Exception:  # the scheduler is unreachable: the supervision reports it
                return
            if n == 0:
                return
            for record in self.queue.get(batch=n):
                self.seen += 1
                for f in self.callbacks:
                    f(record)
            if not final:
                return


def _supervise(client, futs, ranks, timeout, results=True, on_poll=None):
    """Waits for the ranks' tasks: returns their results, or raises the most telling error as
    soon as a task fails or is cancelled, or a rank's worker leaves the cluster (a lost worker's
    restricted task would otherwise wait forever), after giving the other ranks a moment to stop."""
    rank_of = {f.key: r for r, f in enumerate(futs)}
    while True:
        pending = [f for f in futs if not f.done()]
        if pending:
            try:
                wait(pending, timeout=1.0 if on_poll is None else 0.2, return_when="FIRST_COMPLETED")
            except Exception:  # a timeout, or a future cancelled because its worker left
                pass
        if on_poll is not None:
            try:
                on_poll()
            except BaseException:
                # A user callback raised: the fit stops (the ranks are cancelled by the caller's
                # cleanup) and the exception is the fit's, as locally.
                client.cancel(futs, force=True)
                raise
        failed = [f for f in futs if f.status in ("error", "cancelled", "lost")]
        if not failed and all(f.status == "finished" for f in futs):
            return client.gather(futs) if results else None
        alive = set(client.nthreads())
        lost = [r for r, a in enumerate(ranks) if a not in alive]
        if failed or lost:
            break
    # Give the other ranks a moment to fail too (they notice the closed connections), so that
    # the reported error is the first cause rather than its echo.
    try:
        wait(futs, timeout=min(timeout, 5.0))
    except Exception:
        pass
    lost = [r for r, a in enumerate(ranks) if a not in set(client.nthreads())]
    if lost:
        names = ", ".join(f"rank {r} (worker {ranks[r]})" for r in lost)
        raise DaskFitError(
            f"boostlab.dask: lost {names} during the fit; the other ranks were cancelled. "
            "Restart or replace the worker (the data it held must be persisted again) and fit again."
        )
    errors = [(rank_of[f.key], f.exception()) for f in futs if f.status == "error"]
    if not errors:
        raise DaskFitError(
            "boostlab.dask: the fit's tasks were cancelled: "
            + ", ".join(f"rank {rank_of[f.key]} (worker {ranks[rank_of[f.key]]})" for f in futs if f.status != "finished")
        )
    # The root cause: an error that is not the echo of a closed connection, else the first.
    errors.sort(key=lambda e: (isinstance(e[1], DaskFitError) and "lost the connection" in str(e[1]), e[0]))
    raise errors[0][1]


def _dask_class(local_cls, name):
    """The Dask estimator over `local_cls`: its parameters (the local constructor's signature, so
    that scikit-learn's get_params/clone see them) plus `client`, `timeout` and `transport`."""
    sig = inspect.signature(local_cls.__init__)
    extra = [
        inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None),
        inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=_DEFAULT_TIMEOUT),
        inspect.Parameter("transport", inspect.Parameter.KEYWORD_ONLY, default="dask"),
    ]

    def __init__(self, *args, client=None, timeout=_DEFAULT_TIMEOUT, transport="dask", **kwargs):
        local_cls.__init__(self, *args, **kwargs)
        self.client = client
        self.timeout = timeout
        self.transport = transport

    __init__.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + extra)
    doc = (
        f"{local_cls.__name__} trained on a Dask cluster (see :mod:`boostlab.dask`).\n\n"
        "client: the distributed.Client. By default None: the default client.\n"
        f"timeout: seconds one exchange between workers may take. By default {_DEFAULT_TIMEOUT:g}; > 0.\n"
        "transport: the channel of the workers' sums, TCP sockets between the workers or Dask's comms\n"
        "(distributed.comm; the same model). By default \"tcp\"; \"tcp\" or \"dask\".\n\n"
        f"The other parameters are {local_cls.__name__}'s:\n\n{local_cls.__doc__}"
    )
    cls = type(name, (_DaskMixin, local_cls), {"__init__": __init__, "__doc__": doc, "_local_cls": local_cls, "__module__": __name__})
    cls.__init__.__qualname__ = f"{name}.__init__"
    return cls


DaskAdaBoostClassifier = _dask_class(AdaBoostClassifier, "DaskAdaBoostClassifier")
DaskRealAdaBoostClassifier = _dask_class(RealAdaBoostClassifier, "DaskRealAdaBoostClassifier")
DaskTAdaBoostClassifier = _dask_class(TAdaBoostClassifier, "DaskTAdaBoostClassifier")
DaskSecBoostClassifier = _dask_class(SecBoostClassifier, "DaskSecBoostClassifier")
DaskAdaBoostMHClassifier = _dask_class(AdaBoostMHClassifier, "DaskAdaBoostMHClassifier")
DaskAdaBoostMOClassifier = _dask_class(AdaBoostMOClassifier, "DaskAdaBoostMOClassifier")
DaskAdaBoostMRClassifier = _dask_class(AdaBoostMRClassifier, "DaskAdaBoostMRClassifier")

