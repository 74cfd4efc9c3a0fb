"""The ranks' side of the data of a distributed fit, engine-neutral (`boostlab.dask`,
`boostlab.spark`): what the driver needs of each partition, the facts every rank trains alike by
(`global_meta`), and a rank's shard — its partitions binned straight into one matrix of bins, with
their targets, weights and validation rows."""

from __future__ import annotations

import json

import numpy as np

from . import _boostlab
from ._data import column_form, core_feature_names


def _part_info(X, y, w, kinds, multilabel, want_y=False):
    """What the client needs of one partition before training: its row count, its labels (those
    with a positive weight too), its categorical levels and its weights' range; with `want_y`
    the labels themselves (to draw `validation_fraction`'s split over all the rows)."""
    import pandas as pd

    n = X.shape[0]
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"a partition of y has {y.shape[0]} rows, the matching partition of X {n}")
    info = {"n": n, "d": X.shape[1] if len(X.shape) == 2 else 1}
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
    (no concatenation of a worker's partitions): a numpy block's columns are strided
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


def global_meta(self, infos, kinds, multilabel, weighted, n_jobs):
    """Labels, classes, levels and row offsets over all partitions, checked as the local
    estimators check them; and everything every rank needs to train alike. `self`: the estimator
    (a local one, or an engine's subclass of one) whose parameters and checks apply; `infos`:
    `_part_info`'s dicts (or one dict of the same keys over all the rows)."""
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
            declared = {
                tuple(i["levels"][j]["categories"]) for i in infos if "categories" in i["levels"].get(j, {})
            }
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
