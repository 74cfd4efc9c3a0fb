"""The Dask estimators: each is its local estimator (a subclass, whose parameters, checks and model
it reuses) with a distributed ``fit`` and predictions computed where the data live."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable

import distributed
import numpy as np

from .. import _boostlab
from .._estimators import (
    AdaBoostClassifier,
    AdaBoostMHClassifier,
    AdaBoostMOClassifier,
    AdaBoostMRClassifier,
    RealAdaBoostClassifier,
    SecBoostClassifier,
    TAdaBoostClassifier,
)
from .._parameters import _callbacks, _float, _int
from .._shards import _assemble_shard, _part_info, global_meta
from ._collective import check_transport
from ._placement import (
    _alive_workers,
    _column_kind,
    _is_dask_array,
    _is_dask_frame,
    _is_dask_series,
    _n_parts,
    _partition_futures,
    _place_partitions,
)
from ._training import _bin_mapper, _supervise, _train, _wait

_DEFAULT_TIMEOUT = 120.0


def _check_widths(infos, v_infos, X):
    """Every partition of X (and of eval_set's X) has the same number of columns: a collection
    whose chunk widths are unknown (`to_dask_array()`, `from_delayed`) can hold ragged partitions."""
    known = X.shape[1] if len(X.shape) == 2 and not np.isnan(X.shape[1]) else None
    want = known if known is not None else (infos[0]["d"] if infos else None)
    for what, group in (("X", infos), ("the eval_set's X", v_infos)):
        for p, info in enumerate(group):
            if info["d"] != want:
                raise ValueError(
                    f"partition {p} of {what} has {info['d']} columns, but X has {want}: every partition "
                    "must have the same columns (check how the collection was built, e.g. "
                    "`from_delayed` pieces or `to_dask_array(lengths=True)`)"
                )

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


class _DaskMixin:
    """The distributed ``fit`` and the dask predictions, over a local estimator class (the second
    base): parameters, their checks and everything about the model are the local estimator's."""

    _local_cls: type

    def __init_subclass__(cls, **kwargs):
        """Completes each Dask estimator's docstring with the Dask parameters and its local
        estimator's, names its ``__init__`` after it, and shows it as ``boostlab.dask``'s (where it
        is imported from, and pickled as)."""
        super().__init_subclass__(**kwargs)
        local = cls.__dict__.get("_local_cls")
        if local is None:
            return
        cls.__module__ = "boostlab.dask"
        cls.__init__.__qualname__ = f"{cls.__name__}.__init__"
        cls.__doc__ = (
            f"{cls.__doc__}\n\n"
            "client: the distributed.Client. By default None: the default client.\n"
            f"timeout: seconds one exchange between workers may take. By default {_DEFAULT_TIMEOUT:g}; > 0.\n"
            "transport: the channel of the workers' sums, Dask's comms (distributed.comm) or TCP sockets\n"
            "between the workers (the same model). By default \"dask\"; \"dask\" or \"tcp\".\n\n"
            f"The other parameters are {local.__name__}'s:\n\n{local.__doc__}"
        )

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
            client.submit(
                _part_info, x, yy, None, kinds, multilabel, workers=[o], allow_other_workers=False, pure=False
            )
            for x, yy, o in zip(vxf, vyf, v_owner)
        ]
        _wait(infos + v_infos, timeout, "reading the partitions' labels and levels")
        infos, v_infos = client.gather(infos), client.gather(v_infos)
        _check_widths(infos, v_infos, X)
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
            # task's input, not through the client: one wait for both rounds.
            mapper = _bin_mapper(client, parts_of, ranks, meta, timeout, pin, later)
            shards = [
                client.submit(
                    _assemble_shard, parts_of[a], meta, mapper, valid_of[a] if valid_in else None, workers=[a], **pin
                )
                for a in ranks
            ]
            _supervise(client, shards, ranks, timeout, results=False)
            clock.append(("bins", time.perf_counter()))
            callbacks = _callbacks(getattr(self, "callbacks", None)) or []
            model_json, results = _train(client, shards, ranks, meta, timeout, later, callbacks)
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

        from .._parameters import _seed

        y_all = np.concatenate([i.pop("y") for i in infos], axis=0)
        n = y_all.shape[0]
        stratify = None if multilabel else y_all
        _, held = train_test_split(
            np.arange(n), test_size=frac, stratify=stratify, random_state=_seed(self.random_state)
        )
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
        return global_meta(self, infos, kinds, multilabel, weighted, n_jobs)

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


def _dask_init(local_cls: type) -> Callable[..., None]:
    """The Dask estimator's ``__init__``: the local constructor's parameters (its signature, so that
    scikit-learn's get_params/clone see them) plus `client`, `timeout` and `transport`."""
    sig = inspect.signature(local_cls.__init__)  # type: ignore[misc]
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

    __init__.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + extra)  # type: ignore[attr-defined]
    return __init__


class DaskAdaBoostClassifier(_DaskMixin, AdaBoostClassifier):
    """AdaBoostClassifier trained on a Dask cluster (see :mod:`boostlab.dask`)."""

    _local_cls = AdaBoostClassifier
    __init__ = _dask_init(AdaBoostClassifier)


class DaskRealAdaBoostClassifier(_DaskMixin, RealAdaBoostClassifier):
    """RealAdaBoostClassifier trained on a Dask cluster (see :mod:`boostlab.dask`)."""

    _local_cls = RealAdaBoostClassifier
    __init__ = _dask_init(RealAdaBoostClassifier)


class DaskTAdaBoostClassifier(_DaskMixin, TAdaBoostClassifier):
    """TAdaBoostClassifier trained on a Dask cluster (see :mod:`boostlab.dask`)."""

    _local_cls = TAdaBoostClassifier
    __init__ = _dask_init(TAdaBoostClassifier)


class DaskSecBoostClassifier(_DaskMixin, SecBoostClassifier):
    """SecBoostClassifier trained on a Dask cluster (see :mod:`boostlab.dask`)."""

    _local_cls = SecBoostClassifier
    __init__ = _dask_init(SecBoostClassifier)


class DaskAdaBoostMHClassifier(_DaskMixin, AdaBoostMHClassifier):
    """AdaBoostMHClassifier trained on a Dask cluster (see :mod:`boostlab.dask`)."""

    _local_cls = AdaBoostMHClassifier
    __init__ = _dask_init(AdaBoostMHClassifier)


class DaskAdaBoostMOClassifier(_DaskMixin, AdaBoostMOClassifier):
    """AdaBoostMOClassifier trained on a Dask cluster (see :mod:`boostlab.dask`)."""

    _local_cls = AdaBoostMOClassifier
    __init__ = _dask_init(AdaBoostMOClassifier)


class DaskAdaBoostMRClassifier(_DaskMixin, AdaBoostMRClassifier):
    """AdaBoostMRClassifier trained on a Dask cluster (see :mod:`boostlab.dask`)."""

    _local_cls = AdaBoostMRClassifier
    __init__ = _dask_init(AdaBoostMRClassifier)
