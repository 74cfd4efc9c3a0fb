"""The driver's side of a Spark fit, before any task of the training stage starts: the columns
(checked against the schema), one aggregation job for the facts every rank must share (classes,
categorical levels, the weights' range, the vectors' size), checked as the local estimators check
them, and the frame the barrier stage reads."""

from __future__ import annotations

import json

import numpy as np
from pyspark.ml.functions import vector_to_array
from pyspark.ml.linalg import VectorUDT
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .._shards import global_meta


def _field(schema, name, what):
    if name not in schema.fieldNames():
        raise ValueError(f"{what} {name!r}: no such column; the columns are {schema.fieldNames()}")
    return schema[name].dataType


def _is_number(dt) -> bool:
    return isinstance(dt, (T.NumericType, T.BooleanType))


def _numbers_array(dt) -> bool:
    return isinstance(dt, T.ArrayType) and _is_number(dt.elementType)


def feature_exprs(params, schema):
    """The feature columns as expressions, and whether they are one vector: `featuresCols` (each
    numeric → double, string → itself, a categorical feature) when given, else `featuresCol`
    (a vector or an array of numbers → array<double>)."""
    cols = params.getOrDefault("featuresCols")
    if cols:
        exprs = []
        for c in cols:
            dt = _field(schema, c, "featuresCols: column")
            if _is_number(dt):
                exprs.append(F.col(c).cast("double"))
            elif isinstance(dt, T.StringType):
                exprs.append(F.col(c))
            else:
                raise ValueError(
                    f"featuresCols: column {c!r} has type {dt.simpleString()}: numeric, boolean or "
                    "string (categorical) expected"
                )
        return exprs, False
    c = params.getOrDefault("featuresCol")
    dt = _field(schema, c, "featuresCol")
    if isinstance(dt, VectorUDT):
        return [vector_to_array(F.col(c), "float64")], True
    if _numbers_array(dt):
        return [F.col(c).cast("array<double>")], True
    raise ValueError(
        f"featuresCol {c!r} has type {dt.simpleString()}: a vector (pyspark.ml.linalg) or an array of "
        "numbers expected; or give the feature columns as featuresCols"
    )


def _label_expr(est, schema, c):
    """The label as double (classes), or as array<double> of 0/1 values (multi-label)."""
    dt = _field(schema, c, "labelCol")
    if _is_number(dt):
        return F.col(c).cast("double"), False
    if est._multilabel and isinstance(dt, VectorUDT):
        return vector_to_array(F.col(c), "float64"), True
    if est._multilabel and _numbers_array(dt):
        return F.col(c).cast("array<double>"), True
    want = "numeric, or an array / vector of 0/1 values (multi-label)" if est._multilabel else "numeric"
    raise ValueError(
        f"labelCol {c!r} has type {dt.simpleString()}: {want} expected (index string labels with "
        "pyspark.ml.feature.StringIndexer)"
    )


def _local_only_checks(params, est, validation):
    """What the Spark estimators do not do: refused before any work."""
    if isinstance(getattr(est, "loss", "logistic"), str) is False:
        raise ValueError("invalid parameter `loss`: boostlab.spark takes a loss name (a callable is local only)")
    if getattr(est, "t", None) == "auto":
        raise ValueError('invalid parameter `t`: "auto" (inner cross-validation) is local only; give a number')
    if getattr(est, "n_iter_no_change", None) is not None and not validation:
        raise ValueError(
            "n_iter_no_change (early stopping) needs validation rows: set validationIndicatorCol "
            "(a boolean column, true for the validation rows)"
        )


def _check_ranges(est):
    """The registry's range of every numeric booster parameter (the core's check at the start of
    a fit, here before any job)."""
    import numbers

    from .. import _boostlab

    given = est.get_params(deep=False)
    for e in _boostlab.parameter_registry():
        v = given.get(e["python_kw"]) if e["python_kw"] else None
        if isinstance(v, numbers.Real) and not isinstance(v, bool) and e["interval"] is not None:
            _boostlab.check_parameter(e["name"], float(v))


def plan_fit(params, dataset, est):
    """Checks the columns and the booster's parameters, runs the facts job and returns
    ``{"frame": the DataFrame of the barrier stage, "meta": what every rank needs}``."""
    schema = dataset.schema
    exprs, vector = feature_exprs(params, schema)
    label, multilabel = _label_expr(est, schema, params.getOrDefault("labelCol"))
    weighted = params.isDefined("weightCol") and bool(params.getOrDefault("weightCol"))
    validation = params.isDefined("validationIndicatorCol") and bool(params.getOrDefault("validationIndicatorCol"))
    cols = [e.alias(f"_f{j}") for j, e in enumerate(exprs)] if not vector else [exprs[0].alias("features")]
    cols.append(label.alias("label"))
    if weighted:
        wc = params.getOrDefault("weightCol")
        if not _is_number(_field(schema, wc, "weightCol")):
            raise ValueError(f"weightCol {wc!r} has type {schema[wc].dataType.simpleString()}: numeric expected")
        cols.append(F.col(wc).cast("double").alias("weight"))
    if validation:
        vc = params.getOrDefault("validationIndicatorCol")
        if not isinstance(_field(schema, vc, "validationIndicatorCol"), T.BooleanType):
            raise ValueError(
                f"validationIndicatorCol {vc!r} has type {schema[vc].dataType.simpleString()}: boolean expected"
            )
        cols.append(F.col(vc).alias("valid"))
    _local_only_checks(params, est, validation)
    n_jobs = est._n_jobs()
    est._params(multilabel)  # the estimator's own checks of its parameters
    _check_ranges(est)
    timeout = params.getOrDefault("timeout")
    if not timeout > 0:
        raise ValueError(f"invalid parameter `timeout`: expected a number of seconds > 0, got {timeout!r}")
    workers = params.getOrDefault("numWorkers")
    if workers is None:
        workers = dataset.sparkSession.sparkContext.defaultParallelism
    if workers < 1:
        raise ValueError(f"invalid parameter `numWorkers`: expected an integer ≥ 1, got {workers}")
    frame = dataset.select(*cols)

    kinds = None
    feature_cols = [f"_f{j}" for j in range(len(exprs))]
    if not vector:
        kinds = ["categorical" if isinstance(schema[c].dataType, T.StringType) else "numeric"
                 for c in params.getOrDefault("featuresCols")]
    info, valid_labels, n_features = _facts(frame, vector, weighted, validation, multilabel, kinds, feature_cols)

    if vector:
        est.n_features_in_ = n_features
        est.__dict__.pop("feature_names_in_", None)
    else:
        names = list(params.getOrDefault("featuresCols"))
        est.n_features_in_ = len(names)
        est.feature_names_in_ = np.asarray(names, dtype=object)
    meta = global_meta(est, [info], kinds, multilabel, weighted, n_jobs)
    if meta["kind"] == "classes" and len(meta["class_names"]) < 2:
        raise ValueError(
            f"labelCol {params.getOrDefault('labelCol')!r} has one class ({meta['class_names'][0]}) "
            "in the training rows: training needs two"
        )
    if validation:
        _check_valid_labels(valid_labels, meta)
        if est._clipped:
            meta["params_json"] = json.dumps(dict(json.loads(meta["params_json"]), eval_clipped=True))
    meta.update(
        vector=vector,
        n_features=est.n_features_in_,
        feature_cols=feature_cols,
        feature_names_in=list(getattr(est, "feature_names_in_", [])),
        validation=validation,
        split=False,
        timeout=float(timeout),
        n_jobs=n_jobs,
    )
    if frame.rdd.getNumPartitions() != workers:
        frame = frame.repartition(workers)
    return {"frame": frame, "meta": meta}


def _facts(frame, vector, weighted, validation, multilabel, kinds, feature_cols):
    """One aggregation job: per (label, validation flag), the rows, the weights' range, the
    vectors' sizes and the categorical columns' values. Returns (the training rows' info in the
    form of `_shards._part_info`, the validation rows' labels, the number of features)."""
    aggs = [F.count(F.lit(1)).alias("n")]
    if weighted:
        w = F.col("weight")
        bad = w.isNull() | F.isnan(w) | (F.abs(w) == float("inf"))
        aggs += [
            F.min(w).alias("w_min"),
            F.sum(F.when(w > 0, 1).otherwise(0)).alias("n_pos"),
            F.max(F.when(bad, 1).otherwise(0)).alias("w_bad"),
        ]
    if vector:
        aggs += [F.min(F.size("features")).alias("d_min"), F.max(F.size("features")).alias("d_max")]
    if multilabel:
        aggs += [F.min(F.size("label")).alias("k_min"), F.max(F.size("label")).alias("k_max")]
    cats = [j for j, k in enumerate(kinds or []) if k == "categorical"]
    aggs += [F.collect_set(feature_cols[j]).alias(f"levels{j}") for j in cats]
    groups = ["label"] + (["valid"] if validation else [])
    rows = frame.groupBy(*groups).agg(*aggs).collect()

    if not rows:
        raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
    if any(r["label"] is None for r in rows):
        raise ValueError("labelCol has null values")
    if validation and any(r["valid"] is None for r in rows):
        raise ValueError("validationIndicatorCol has null values")
    if not multilabel and any(np.isnan(r["label"]) for r in rows):
        raise ValueError("labelCol has NaN values")
    n_features = None
    if vector:
        lo, hi = min(r["d_min"] for r in rows), max(r["d_max"] for r in rows)
        if lo < 0:
            raise ValueError("featuresCol has null vectors")
        if lo != hi:
            raise ValueError(f"featuresCol: the vectors have different sizes (from {lo} to {hi})")
        if hi == 0:
            raise ValueError("featuresCol: the vectors have no elements")
        n_features = hi
    if multilabel and min(r["k_min"] for r in rows) != max(r["k_max"] for r in rows):
        raise ValueError("labelCol: the label arrays have different lengths")

    train = [r for r in rows if not (validation and r["valid"])]
    held = [r for r in rows if validation and r["valid"]]
    if not train:
        raise ValueError("no training rows: validationIndicatorCol is true on every row")
    if multilabel:
        labels = np.array([list(r["label"]) for r in train], dtype=np.float64)
    else:
        labels = np.array(sorted(r["label"] for r in train), dtype=np.float64)
    info = {"n": int(sum(r["n"] for r in train)), "labels": labels}
    if weighted:
        info["w_finite"] = not any(r["w_bad"] for r in train)
        info["w_min"] = float(min(r["w_min"] for r in train if r["w_min"] is not None)) if train else np.inf
        if not multilabel:
            info["labels_positive"] = np.array(sorted(r["label"] for r in train if r["n_pos"] > 0))
    info["levels"] = {
        j: {"present": sorted({str(v) for r in train for v in r[f"levels{j}"]})} for j in cats
    }
    valid_labels = [r["label"] for r in held]
    return info, valid_labels, n_features


def _check_valid_labels(valid_labels, meta):
    if not valid_labels:
        raise ValueError("validationIndicatorCol marks no rows: early stopping needs validation rows")
    if meta["kind"] == "multilabel":
        return
    seen = set(np.asarray(meta["classes"]).tolist())
    unknown = sorted({v for v in valid_labels if v not in seen})
    if unknown:
        raise ValueError(f"the validation rows have labels not seen in training: {unknown[:10]!r}")
