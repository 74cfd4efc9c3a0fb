"""Distributed training on Dask: ``pip install 'boostlab[dask]'``.

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
:mod:`boostlab.dask._collective`), and every
worker ends with the same model. t-AdaBoost's ``t="auto"`` chooses t as the local estimator does
(the same inner folds over all the rows, every inner fit distributed).
``predict``, ``predict_proba`` and ``decision_function`` return dask collections computed where
the data live; ``to_local()`` returns the fitted local estimator; models save and load as the
local ones (``save_model``, ``load_model``). The design, the costs and what to do after a
failure are in docs/distributed.md.

The package, by concern: ``_estimators`` (the estimator classes: ``fit``, predictions, model files),
``_placement`` (the kinds of dask inputs and the worker each partition trains on), ``_partitions``
(the workers' side: each partition's facts and a rank's shard of bins), ``_training`` (the rounds of
a fit, the ranks' tasks and their supervision) and ``_collective`` (the reductions between ranks).
"""

from __future__ import annotations

try:
    import dask  # noqa: F401
    import distributed  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "boostlab.dask needs dask.distributed, an optional dependency: pip install 'boostlab[dask]'"
    ) from e

from ._collective import DaskFitError
from ._estimators import (
    DaskAdaBoostClassifier,
    DaskAdaBoostMHClassifier,
    DaskAdaBoostMOClassifier,
    DaskAdaBoostMRClassifier,
    DaskRealAdaBoostClassifier,
    DaskSecBoostClassifier,
    DaskTAdaBoostClassifier,
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
