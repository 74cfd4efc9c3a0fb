"""The Spark estimators and models: one generic pair (`_SparkBoostEstimator`, `_SparkBoostModel`)
parametrised by the local estimator class, whose constructor's parameters become Spark `Param`s
(documented from the parameter registry) and whose checks and model the pair reuses."""

from __future__ import annotations

import inspect
import json
import os
import uuid

import numpy as np
import pandas as pd
from pyspark.ml import Estimator, Model
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasFeaturesCol,
    HasLabelCol,
    HasPredictionCol,
    HasProbabilityCol,
    HasRawPredictionCol,
    HasValidationIndicatorCol,
    HasWeightCol,
)
from pyspark.ml.util import (
    DefaultParamsReadable,
    DefaultParamsReader,
    DefaultParamsWritable,
    DefaultParamsWriter,
    MLReadable,
    MLReader,
    MLWritable,
    MLWriter,
)

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
from .._io import _from_model
from ._inputs import feature_exprs, plan_fit
from ._training import RESULT_SCHEMA, SparkFitError, _rank_task

# Local parameters with no meaning on Spark: callables (`callbacks`) cannot travel in a saved
# pipeline, a warm start needs the fitted model the estimator does not keep, and the validation
# rows are `validationIndicatorCol`'s (not a fraction drawn by the driver).
_LOCAL_ONLY = ("callbacks", "warm_start", "validation_fraction")
_DEFAULT_TIMEOUT = 120.0


def _booster_params(local_cls):
    """(name, default, doc) of every parameter of `local_cls`'s constructor that Spark takes; the
    docs are the parameter registry's (the one list the CLI, TOML and Python come from)."""
    docs = {}
    for e in _boostlab.parameter_registry():
        if e["python_kw"] and e["python_kw"] not in docs:
            docs[e["python_kw"]] = e["doc"]
    out = []
    for name, p in inspect.signature(local_cls.__init__).parameters.items():
        if name == "self" or name in _LOCAL_ONLY:
            continue
        doc = docs.get(name) or f"{local_cls.__name__}'s `{name}` (see its documentation)"
        out.append((name, p.default, doc))
    return out


class _SparkBoostParams(
    HasFeaturesCol,
    HasLabelCol,
    HasWeightCol,
    HasValidationIndicatorCol,
    HasPredictionCol,
    HasProbabilityCol,
    HasRawPredictionCol,
):
    """The Spark parameters (columns, workers, timeout) and, per family, the booster's own."""

    featuresCols = Param(
        Params._dummy(),
        "featuresCols",
        "feature columns (numeric, boolean or string = categorical); when non-empty they are the "
        "features instead of featuresCol. By default [].",
        typeConverter=TypeConverters.toListString,
    )
    numWorkers = Param(
        Params._dummy(),
        "numWorkers",
        "ranks of the fit: tasks of the barrier stage, one partition each (the data are "
        "repartitioned when they have another number of partitions). By default None: the "
        "SparkContext's defaultParallelism; ≥ 1 and at most the cluster's task slots.",
        typeConverter=TypeConverters.toInt,
    )
    timeout = Param(
        Params._dummy(),
        "timeout",
        f"seconds one exchange between the ranks may take before the fit fails naming the rank. "
        f"By default {_DEFAULT_TIMEOUT:g}; > 0.",
        typeConverter=TypeConverters.toFloat,
    )

    _local_cls: type
    _booster_names: tuple = ()

    def __init_subclass__(cls, **kwargs):
        """Adds the local estimator's parameters as `Param`s (class attributes, as Spark's own)."""
        super().__init_subclass__(**kwargs)
        local = cls.__dict__.get("_local_cls")
        if local is None:
            return
        names = []
        defaults = {}
        for name, default, doc in _booster_params(local):
            if hasattr(_SparkBoostParams, name) or hasattr(Estimator, name) or hasattr(Model, name):
                raise TypeError(f"{cls.__name__}: the booster parameter {name!r} shadows a Spark attribute")
            setattr(cls, name, Param(Params._dummy(), name, doc))
            names.append(name)
            defaults[name] = default
        cls._booster_names = tuple(names)
        cls._booster_defaults = defaults
        cls.__module__ = "boostlab.spark"

    def _set_spark_defaults(self):
        self._setDefault(
            featuresCol="features",
            labelCol="label",
            predictionCol="prediction",
            probabilityCol="probability",
            rawPredictionCol="rawPrediction",
            featuresCols=[],
            numWorkers=None,
            timeout=_DEFAULT_TIMEOUT,
            **self._booster_defaults,
        )

    def setParams(self, **kwargs):
        """Sets parameters by name (Spark's and the booster's); an unknown name is a TypeError."""
        for k in kwargs:
            if not self.hasParam(k):
                raise TypeError(f"{type(self).__name__}: unknown parameter {k!r}")
        self._set(**kwargs)
        return self

    def _booster_kwargs(self):
        return {n: self.getOrDefault(n) for n in self._booster_names}

    def _local_estimator(self):
        """The local estimator of these booster parameters."""
        return self._local_cls(**self._booster_kwargs())


class _SparkBoostEstimator(_SparkBoostParams, Estimator, DefaultParamsWritable, DefaultParamsReadable):
    """The Spark estimator of one booster family (see :mod:`boostlab.spark`)."""

    _model_cls: type

    def __init__(self, **kwargs):
        super().__init__()
        self._set_spark_defaults()
        self.setParams(**kwargs)

    def _fit(self, dataset):
        est = self._local_estimator()
        plan = plan_fit(self, dataset, est)
        frame, meta = plan["frame"], plan["meta"]
        meta["fit_id"] = uuid.uuid4().hex
        try:
            rows = frame.mapInArrow(_rank_task(meta), RESULT_SCHEMA, barrier=True).collect()
        except Exception as e:  # Py4JJavaError, pyspark's own errors: the stage failed
            raise SparkFitError(_stage_error(e)) from e
        rows = sorted(rows, key=lambda r: r["rank"])
        model = _boostlab.Model.from_json(rows[0]["model"])
        est.classes_ = meta["classes"] if meta["kind"] == "classes" else np.arange(len(meta["class_names"]))
        if meta["kind"] == "multilabel":
            est._y_dtype = np.dtype(np.float64)
        est._set_model(model)
        out = self._model_cls(est)
        self._copyValues(out)
        out.comm_stats_ = [json.loads(r["stats"]) for r in rows]
        return out


def _stage_error(e) -> str:
    """The clearest message of a failed training stage: a rank's own `SparkFitError` (it names
    the rank, its host and what it was doing), else the task Spark reports (a killed process)."""
    import re

    text = str(e)
    ours = re.findall(r"SparkFitError: (boostlab\.spark: [^\n]*)", text)
    if ours:
        # A rank's own error rather than the echo of a connection its peer closed.
        ours.sort(key=lambda m: "lost the connection" in m)
        return ours[0]
    task = re.search(r"ResultTask\((\d+), (\d+)\)", text) or re.search(r"Task (\d+) in stage (\S+) failed", text)
    rank = task.group(2) if task and task.re.pattern.startswith("Result") else (task.group(1) if task else "?")
    if "exited unexpectedly" in text or "crashed" in text or "killed" in text.lower():
        return (
            f"boostlab.spark: rank {rank} (partition {rank} of the training stage) was lost: its Python "
            "process exited unexpectedly (killed, out of memory, or its executor was lost); the stage "
            "failed and the other ranks were stopped. Fit again (a new stage starts a clean fit)."
        )
    first = next((ln for ln in text.splitlines() if ln.strip()), type(e).__name__)
    return f"boostlab.spark: the training stage failed (rank {rank}): {first[:500]}"


class _SparkBoostModel(_SparkBoostParams, Model, MLWritable, MLReadable):
    """A fitted boostlab model on Spark: `transform` adds `rawPredictionCol`, `probabilityCol` and
    `predictionCol` (Arrow-backed pandas UDFs); saved and loaded with Spark's ML persistence (the
    model as the boostlab model file's JSON); `to_local()` / `from_local()` convert it to and from
    the local estimator."""

    def __init__(self, local=None):
        super().__init__()
        self._set_spark_defaults()
        self._local = local
        if local is not None:
            self._set(**_spark_values(local, self._booster_names))

    # ------------------------------------------------------------------ local estimator

    def to_local(self):
        """The fitted local estimator (the same model): to predict on in-memory data."""
        if self._local is None:
            raise ValueError(f"{type(self).__name__} holds no model")
        return self._local

    @classmethod
    def from_local(cls, estimator, **params):
        """The Spark model of a fitted local estimator of this family; `params` set Spark
        parameters (e.g. ``featuresCols=[...]`` for a model trained on named columns)."""
        from sklearn.utils.validation import check_is_fitted

        if not isinstance(estimator, cls._local_cls):
            raise TypeError(f"{cls.__name__}.from_local takes a fitted {cls._local_cls.__name__}")
        check_is_fitted(estimator)
        return cls(estimator).setParams(**params)

    # ------------------------------------------------------------------ transform

    def _transform(self, dataset):
        from pyspark.ml.functions import array_to_vector
        from pyspark.sql import functions as F
        from pyspark.sql.functions import pandas_udf

        est = self.to_local()
        exprs, vector = feature_exprs(self, dataset.schema)
        names = list(getattr(est, "feature_names_in_", [])) or [f"x{j}" for j in range(len(exprs))]
        multilabel = est.model_.task == "multilabel"
        pred_type = "array<double>" if multilabel else "double"
        width = len(est.classes_)

        @pandas_udf(f"raw array<double>, prob array<double>, pred {pred_type}")
        def predict(features: pd.DataFrame) -> pd.DataFrame:
            # One struct column in: its fields, a pandas DataFrame (an Arrow batch).
            n = len(features)
            if n == 0:
                return pd.DataFrame({"raw": [], "prob": [], "pred": []})
            if vector:
                X = np.stack(features.iloc[:, 0].to_numpy()).astype(np.float64, copy=False).reshape(n, -1)
            else:
                X = features.set_axis(names, axis=1).reset_index(drop=True)
            S = est._raw_scores(X)
            d = est._decision(S)
            raw = np.column_stack([-d, d]) if d.ndim == 1 else d
            proba = est._proba(S).reshape(n, width)
            pred = np.asarray(est._predict(S), dtype=np.float64)
            return pd.DataFrame({
                "raw": list(raw.astype(np.float64)),
                "prob": list(proba.astype(np.float64)),
                "pred": list(pred) if multilabel else pred,
            })

        tmp = f"_boostlab_{uuid.uuid4().hex[:8]}"
        out = dataset.withColumn(tmp, predict(F.struct(*[e.alias(f"_f{j}") for j, e in enumerate(exprs)])))
        return (
            out.withColumn(self.getRawPredictionCol(), array_to_vector(F.col(f"{tmp}.raw")))
            .withColumn(self.getProbabilityCol(), array_to_vector(F.col(f"{tmp}.prob")))
            .withColumn(self.getPredictionCol(), F.col(f"{tmp}.pred"))
            .drop(tmp)
        )

    # ------------------------------------------------------------------ persistence

    def write(self):
        """An `MLWriter`: the parameters (Spark's metadata) and the model's JSON (`model/`)."""
        return _ModelWriter(self)

    @classmethod
    def read(cls):
        return _ModelReader(cls)

    @classmethod
    def load(cls, path):
        """Reads a model saved with ``write().save(path)``."""
        return cls.read().load(path)

    def save(self, path):
        """Writes the model to `path` (fails if it exists; ``write().overwrite().save`` replaces)."""
        self.write().save(path)


def _spark_values(local, names):
    """The local estimator's parameters that Spark keeps (JSON values only)."""
    out = {}
    for k, v in local.get_params(deep=False).items():
        if k not in names:
            continue
        if isinstance(v, tuple):
            v = list(v)
        try:
            json.dumps(v)
        except TypeError:
            continue
        out[k] = v
    return out


class _ModelWriter(MLWriter):
    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path):
        DefaultParamsWriter.saveMetadata(self.instance, path, self.sparkSession)
        model_json = self.instance.to_local().model_.to_json()
        self.sparkSession.createDataFrame([(model_json,)], "model string").coalesce(1).write.text(
            os.path.join(path, "model")
        )


class _ModelReader(MLReader):
    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path):
        metadata = DefaultParamsReader.loadMetadata(path, self.sparkSession)
        lines = self.sparkSession.read.text(os.path.join(path, "model"), wholetext=True).collect()
        text = "".join(r.value for r in lines)
        local = _from_model(_boostlab.Model.from_json(text), self.cls._local_cls)
        model = self.cls(local)
        DefaultParamsReader.getAndSetParams(model, metadata)
        local.set_params(**model._booster_kwargs())
        return model


# ---------------------------------------------------------------------------------- the families


class SparkAdaBoostClassificationModel(_SparkBoostModel):
    """A fitted :class:`SparkAdaBoostClassifier`."""

    _local_cls = AdaBoostClassifier


class SparkAdaBoostClassifier(_SparkBoostEstimator):
    """Discrete AdaBoost (:class:`boostlab.AdaBoostClassifier`) as a Spark ML estimator."""

    _local_cls = AdaBoostClassifier
    _model_cls = SparkAdaBoostClassificationModel


class SparkRealAdaBoostClassificationModel(_SparkBoostModel):
    """A fitted :class:`SparkRealAdaBoostClassifier`."""

    _local_cls = RealAdaBoostClassifier


class SparkRealAdaBoostClassifier(_SparkBoostEstimator):
    """Real AdaBoost (:class:`boostlab.RealAdaBoostClassifier`) as a Spark ML estimator."""

    _local_cls = RealAdaBoostClassifier
    _model_cls = SparkRealAdaBoostClassificationModel


class SparkTAdaBoostClassificationModel(_SparkBoostModel):
    """A fitted :class:`SparkTAdaBoostClassifier`."""

    _local_cls = TAdaBoostClassifier


class SparkTAdaBoostClassifier(_SparkBoostEstimator):
    """t-AdaBoost (:class:`boostlab.TAdaBoostClassifier`) as a Spark ML estimator (a numeric
    ``t`` or ``t_schedule``; ``t="auto"`` is the local estimator's)."""

    _local_cls = TAdaBoostClassifier
    _model_cls = SparkTAdaBoostClassificationModel


class SparkSecBoostClassificationModel(_SparkBoostModel):
    """A fitted :class:`SparkSecBoostClassifier`."""

    _local_cls = SecBoostClassifier


class SparkSecBoostClassifier(_SparkBoostEstimator):
    """SecBoost (:class:`boostlab.SecBoostClassifier`) as a Spark ML estimator, with its named
    losses (``loss="logistic"``, ...; a Python callable is the local estimator's)."""

    _local_cls = SecBoostClassifier
    _model_cls = SparkSecBoostClassificationModel


class SparkAdaBoostMHClassificationModel(_SparkBoostModel):
    """A fitted :class:`SparkAdaBoostMHClassifier`."""

    _local_cls = AdaBoostMHClassifier


class SparkAdaBoostMHClassifier(_SparkBoostEstimator):
    """AdaBoost.MH (:class:`boostlab.AdaBoostMHClassifier`) as a Spark ML estimator: multi-class
    (a numeric label) or multi-label (an array or vector label of 0/1 values)."""

    _local_cls = AdaBoostMHClassifier
    _model_cls = SparkAdaBoostMHClassificationModel


class SparkAdaBoostMOClassificationModel(_SparkBoostModel):
    """A fitted :class:`SparkAdaBoostMOClassifier`."""

    _local_cls = AdaBoostMOClassifier


class SparkAdaBoostMOClassifier(_SparkBoostEstimator):
    """AdaBoost.MO (:class:`boostlab.AdaBoostMOClassifier`) as a Spark ML estimator (multi-class)."""

    _local_cls = AdaBoostMOClassifier
    _model_cls = SparkAdaBoostMOClassificationModel


class SparkAdaBoostMRClassificationModel(_SparkBoostModel):
    """A fitted :class:`SparkAdaBoostMRClassifier`."""

    _local_cls = AdaBoostMRClassifier


class SparkAdaBoostMRClassifier(_SparkBoostEstimator):
    """AdaBoost.MR (:class:`boostlab.AdaBoostMRClassifier`) as a Spark ML estimator: multi-class
    or multi-label (an array or vector label of 0/1 values)."""

    _local_cls = AdaBoostMRClassifier
    _model_cls = SparkAdaBoostMRClassificationModel
