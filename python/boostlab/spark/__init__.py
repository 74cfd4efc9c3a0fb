"""Distributed training on Apache Spark: ``pip install pyspark`` (3.5 or later).

Spark ML estimators and models, one pair per booster family — :class:`SparkAdaBoostClassifier`,
:class:`SparkRealAdaBoostClassifier`, :class:`SparkTAdaBoostClassifier`,
:class:`SparkSecBoostClassifier`, :class:`SparkAdaBoostMHClassifier`,
:class:`SparkAdaBoostMOClassifier` and :class:`SparkAdaBoostMRClassifier`, each fitting a
``...ClassificationModel`` — with Spark's conventions:

- ``featuresCol``: a vector (``pyspark.ml.linalg``) or array-of-numbers column. By default
  ``"features"``. Or ``featuresCols``: a list of columns, numeric or boolean (NaN and nulls are
  missing values) or string (categorical, nulls missing). By default [] (use ``featuresCol``).
- ``labelCol``: numeric class labels (two for the binary boosters); for AdaBoost.MH and MR also
  an array or vector of 0/1 values (multi-label). By default ``"label"``.
- ``weightCol``: non-negative sample weights. By default unset (every row weighs 1).
- ``validationIndicatorCol``: a boolean column, true on the validation rows: they are held out
  of training and each round's metric is computed on them; with ``n_iter_no_change`` they drive
  early stopping (the local estimator's ``eval_set``). By default unset.
- ``numWorkers``: the ranks of the fit (tasks of one barrier stage). By default None: the
  SparkContext's ``defaultParallelism``.
- ``timeout``: seconds any exchange between ranks may take. By default 120; > 0.
- ``rawPredictionCol``, ``probabilityCol``, ``predictionCol``: the columns ``transform`` adds.
- the booster's own parameters under their boostlab names (``n_estimators``, ``max_leaves``,
  ``learning_rate``, ``alpha``, ``t``, ``loss``, ...), documented from the parameter registry;
  not ``callbacks``, ``warm_start`` nor ``validation_fraction`` (local only).

``fit`` runs one aggregation job (classes, categorical levels, the weights' range and the
vectors' size, checked before any training task starts), then one barrier stage
(``DataFrame.mapInArrow(..., barrier=True)``, Arrow batches): one task per rank, each on one
partition. The ranks find each other with ``BarrierTaskContext.allGather`` and reduce over TCP in
rank order (the collective of :mod:`boostlab.dask`), bin their rows with the distributed binning
and train the core's SPMD fit: the model is the local estimator's on the same rows in partition
order, bit for bit. A failed or killed task fails the fit with :class:`SparkFitError` naming the
rank. The design and the costs are in docs/explanation/distributed.md.

Models predict with Arrow-backed pandas UDFs, save and load with Spark's ML persistence
(``model.write().save(path)``, ``...ClassificationModel.load(path)``; the model is stored as the
boostlab model file's JSON), convert to and from the local estimator (``to_local()``,
``from_local(estimator)``) and work inside ``Pipeline``, ``CrossValidator`` and
``TrainValidationSplit``.
"""

from __future__ import annotations

try:
    import pyspark  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("boostlab.spark needs pyspark, an optional dependency: pip install pyspark") from e

from ._estimators import (
    SparkAdaBoostClassificationModel,
    SparkAdaBoostClassifier,
    SparkAdaBoostMHClassificationModel,
    SparkAdaBoostMHClassifier,
    SparkAdaBoostMOClassificationModel,
    SparkAdaBoostMOClassifier,
    SparkAdaBoostMRClassificationModel,
    SparkAdaBoostMRClassifier,
    SparkRealAdaBoostClassificationModel,
    SparkRealAdaBoostClassifier,
    SparkSecBoostClassificationModel,
    SparkSecBoostClassifier,
    SparkTAdaBoostClassificationModel,
    SparkTAdaBoostClassifier,
)
from ._training import SparkFitError

__all__ = [
    "SparkAdaBoostClassificationModel",
    "SparkAdaBoostClassifier",
    "SparkAdaBoostMHClassificationModel",
    "SparkAdaBoostMHClassifier",
    "SparkAdaBoostMOClassificationModel",
    "SparkAdaBoostMOClassifier",
    "SparkAdaBoostMRClassificationModel",
    "SparkAdaBoostMRClassifier",
    "SparkFitError",
    "SparkRealAdaBoostClassificationModel",
    "SparkRealAdaBoostClassifier",
    "SparkSecBoostClassificationModel",
    "SparkSecBoostClassifier",
    "SparkTAdaBoostClassificationModel",
    "SparkTAdaBoostClassifier",
]
