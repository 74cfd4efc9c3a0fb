"""The estimators: one per booster family, with scikit-learn's parameter names where they exist.

Common parameters (every estimator):

- ``n_estimators``: boosting rounds (trees); ≥ 1.
- ``max_leaves``: leaves per tree; ≥ 2.
- ``learning_rate``: shrinkage ν; each round adds ν·α·h (α scaled before the weight update);
  (0, 1].
- The defaults of these three: the multi-class estimators boost 100 stumps (2 leaves) at
  ν = 1. The binary estimators default to None: the booster's own defaults, chosen so that their
  calibrated probabilities are close to LightGBM's (docs/explanation/probabilities.md) —
  AdaBoost 300 rounds of 8 leaves at ν = 0.5, Real AdaBoost and SecBoost 100 rounds of 32 leaves
  at ν = 0.1, t-AdaBoost 100 rounds of 64 leaves at ν = 0.5 — or the preset's.
- ``preset`` (binary estimators): a named set of defaults, under every parameter given:
  ``"paper"`` is the papers' setting, 100 stumps at ν = 1 (t-AdaBoost also takes ``"authors"``,
  as ``authors_mode=True``). By default None.
- ``max_nodes``: nodes per tree (internal + leaves), overriding ``max_leaves`` with
  ⌊(K+1)/2⌋ leaves. By default None; ≥ 3.
- ``max_depth``: maximum depth. By default None (unlimited); ≥ 1.
- ``criterion``: split criterion, ``"empirical"``, ``"gini"``, ``"entropy"``, ``"matusita"`` or
  ``"tempered:t=T"``. By default None: the booster's own choice.
- ``max_bins``: value bins per feature. By default 255; 2..65535.
- ``callbacks``: a list of callables, each called after every boosting round with that round's
  record (a dict: ``round``, the round's diagnostics, ``stop_reason`` when boosting stops). A
  callback that raises stops ``fit`` with its exception (the estimator is left unfitted), e.g. to
  stop early or to report progress. By default None (no callbacks).
- ``random_state``: seed of the random choices (candidate subsampling, random tie-breaking,
  random codes, SecBoost's degenerate offsets). By default None, which is the seed 0: boostlab is
  deterministic unless a seed is given; an int ≥ 0 or a ``numpy.random.RandomState``.
- ``n_iter_no_change``: early stopping: stop once the validation metric has not improved for this
  many rounds and keep the best iteration (``best_iteration_``). The validation data are
  ``eval_set`` given to ``fit``, else a stratified ``validation_fraction`` of the training data
  split off with ``random_state``. By default None (no early stopping); ≥ 1.
- ``validation_fraction``: the share of the training data held out for early stopping when
  ``n_iter_no_change`` is set and ``fit`` has no ``eval_set``. By default 0.1; (0, 1).
- ``eval_metric``: the validation metric, ``"error"``, ``"hamming"``, ``"one-error"`` or
  ``"loss"`` (SecBoost). By default None: the task's (SecBoost's loss, the error for binary
  boosters, the one-error for multi-class and the Hamming loss for multi-label data).
- ``warm_start``: refitting a fitted estimator with a larger ``n_estimators`` adds the missing
  rounds to the current model (on the same data; bit-identical to a fit in one go); a smaller one
  is an error. By default False.
- ``n_jobs``: threads of ``fit`` and prediction; None or −1 = all cores, −2 = all but one, ...
  Results are bit-identical whatever the value. By default None.
- ``split_ties``: how ties between equally good splits (gains within 1e−12 of the node weight)
  are broken: ``"lowest"`` (the lowest feature index) or ``"random"`` (a uniform draw from
  ``random_state``). By default None: ``"lowest"``, or the preset's choice.
- ``min_leaf_weight``: the minimum total weight (the sum of the boosting weights the tree
  learner sees) in each child of a split; a split leaving less in a child is not made. By default
  None, which is 0 (a child only needs positive weight); a finite number ≥ 0.
- ``grow_order``: which leaf best-first growth splits next (every tree estimator): ``"weight"``
  (the heaviest), ``"count"`` (the most examples) or ``"gain"`` (the largest gain). By default
  None: ``"weight"``, or the preset's choice.
- ``pure_leaves``: whether a split may leave a child holding weight of one class only (every tree
  estimator): ``"allow"``, ``"forbid"`` or ``"auto"`` (``"forbid"`` for t-AdaBoost, the evidence
  is in docs/reproduction.md; ``"allow"`` for every other booster). By default None: ``"auto"``,
  or the preset's choice.
- ``max_split_candidates``: evaluate a seeded random subset (from ``random_state``) of this many
  (feature, threshold) candidates per node (every tree estimator); ``"all"`` for every candidate.
  By default None: all, or the preset's choice; an int ≥ 1.
- ``monotone_constraints`` (binary estimators and AdaBoost.MH): the score never decreases (1) or
  never increases (−1) when a feature grows: a list of −1/0/1, one per feature, or a dict
  feature name → direction; numeric features only (docs/how-to/constraints.md). By default None.
- ``interaction_constraints`` (binary estimators and AdaBoost.MH): a list of feature groups (names
  or indices); every root-to-leaf path of every tree splits only on features of one group, and a
  feature in no group only alone (XGBoost's rule). By default None.
- ``calibration`` (binary estimators): how ``predict_proba`` maps a score f to a probability:
  ``"sigmoid"`` is σ(a·f) with the scale a fitted on cross-fitted scores of the training rows
  (``calibration_folds`` extra fits on (k−1)/k of the rows); None is the papers' σ(2f). Labels,
  ``decision_function`` and the trees do not depend on it (docs/explanation/probabilities.md).
  By default ``"sigmoid"``; ``"sigmoid"``, ``"none"`` or None.
- ``calibration_folds`` (binary estimators): the folds of that cross-fitting. By default 3; ≥ 2.
"""

from __future__ import annotations

import json

import numpy as np

from ._estimator import BoostClassifier
from ._io import register
from ._parameters import _choice, _float, _int, _seed, _user_value


def _common_doc(cls):
    cls.__doc__ = (cls.__doc__ or "") + (__doc__.split("Common parameters (every estimator):")[1])
    return cls


def _preset(preset, authors_mode=None):
    """The core's `preset` of the `preset` keyword; `authors_mode` is t-AdaBoost's (None for the
    other boosters), where `authors_mode=True` is `preset="authors"`."""
    preset = _choice("preset", preset, (None, "paper") if authors_mode is None else (None, "paper", "authors"))
    if authors_mode:
        if preset == "paper":
            raise ValueError(
                "invalid parameter `preset`: expected None or \"authors\" with authors_mode=True, got 'paper'"
            )
        return "authors"
    return preset


# AdaBoost's α rules (`alpha`); None is the algorithm's own.
_ALPHA_RULES = (None, "discrete", "one", "linear-bound", "line-search", "abstain", "abstain-conservative")


class _Binary(BoostClassifier):
    _binary_only = True
    _multilabel = False

    @classmethod
    def _kwargs_from_core(cls, p):
        kw = super()._kwargs_from_core(p)
        # None where the model took the booster's default (or the preset's): a reloaded
        # estimator refits alike, and its parameters are those of the estimator that trained it.
        kw["n_estimators"] = _user_value(p, "n_estimators")
        kw["max_leaves"] = _user_value(p, "tree.max_leaves")
        kw["learning_rate"] = _user_value(p, "learning_rate", 1.0)
        # `authors` comes back as t-AdaBoost's `authors_mode`.
        kw["preset"] = "paper" if p.get("preset") == "paper" else None
        return kw


@register("adaboost")
@_common_doc
class AdaBoostClassifier(_Binary):
    """Discrete AdaBoost (Freund & Schapire) on histogram trees with sign leaves.

    Binary classification only.

    alpha: how α is chosen each round: ``"discrete"`` (½ ln((1 − ε)/ε)), ``"linear-bound"``,
    ``"line-search"`` (the exact minimiser of Z), ``"one"``, ``"abstain"`` or
    ``"abstain-conservative"``. By default None: ``"discrete"``.
    """

    def __init__(
        self,
        n_estimators=None,
        *,
        max_leaves=None,
        max_nodes=None,
        max_depth=None,
        min_leaf_weight=None,
        criterion=None,
        max_bins=255,
        random_state=None,
        calibration="sigmoid",
        calibration_folds=3,
        preset=None,
        callbacks=None,
        learning_rate=None,
        n_iter_no_change=None,
        validation_fraction=0.1,
        eval_metric=None,
        warm_start=False,
        n_jobs=None,
        split_ties=None,
        grow_order=None,
        pure_leaves=None,
        max_split_candidates=None,
        monotone_constraints=None,
        interaction_constraints=None,
        alpha=None,
    ):
        self.n_estimators = n_estimators
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.min_leaf_weight = min_leaf_weight
        self.criterion = criterion
        self.max_bins = max_bins
        self.random_state = random_state
        self.callbacks = callbacks
        self.calibration = calibration
        self.calibration_folds = calibration_folds
        self.preset = preset
        self.learning_rate = learning_rate
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.eval_metric = eval_metric
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.split_ties = split_ties
        self.grow_order = grow_order
        self.pure_leaves = pure_leaves
        self.max_split_candidates = max_split_candidates
        self.monotone_constraints = monotone_constraints
        self.interaction_constraints = interaction_constraints
        self.alpha = alpha

    def _core_params(self, multilabel):
        return {
            "algorithm": "adaboost",
            "preset": _preset(self.preset),
            "adaboost": {"alpha": _choice("alpha", self.alpha, _ALPHA_RULES)},
        }

    @classmethod
    def _kwargs_from_core(cls, p):
        kw = super()._kwargs_from_core(p)
        kw["alpha"] = _user_value(p, "adaboost.alpha")
        return kw


@register("real-adaboost")
@_common_doc
class RealAdaBoostClassifier(_Binary):
    """Real (confidence-rated) AdaBoost (Schapire & Singer): leaves ``½ ln((W+ + ε)/(W− + ε))``.

    Binary classification only.

    smoothing: the ε of the leaf values (weights summing to 1). By default None, which is
    ``1/(2m)``, m = the sum of the sample weights (the number
    of samples without them); ≥ 0.
    alpha: how α is chosen each round, as for ``AdaBoostClassifier``. By default None: ``"one"``
    (the leaf values already minimise Z).
    """

    def __init__(
        self,
        n_estimators=None,
        *,
        max_leaves=None,
        max_nodes=None,
        max_depth=None,
        min_leaf_weight=None,
        criterion=None,
        max_bins=255,
        random_state=None,
        split_ties=None,
        grow_order=None,
        pure_leaves=None,
        max_split_candidates=None,
        monotone_constraints=None,
        interaction_constraints=None,
        smoothing=None,
        calibration="sigmoid",
        calibration_folds=3,
        preset=None,
        callbacks=None,
        learning_rate=None,
        n_iter_no_change=None,
        validation_fraction=0.1,
        eval_metric=None,
        warm_start=False,
        n_jobs=None,
        alpha=None,
    ):
        self.n_estimators = n_estimators
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.min_leaf_weight = min_leaf_weight
        self.criterion = criterion
        self.max_bins = max_bins
        self.random_state = random_state
        self.callbacks = callbacks
        self.calibration = calibration
        self.calibration_folds = calibration_folds
        self.preset = preset
        self.learning_rate = learning_rate
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.eval_metric = eval_metric
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.split_ties = split_ties
        self.grow_order = grow_order
        self.pure_leaves = pure_leaves
        self.max_split_candidates = max_split_candidates
        self.monotone_constraints = monotone_constraints
        self.interaction_constraints = interaction_constraints
        self.smoothing = smoothing
        self.alpha = alpha

    def _core_params(self, multilabel):
        return {
            "algorithm": "real-adaboost",
            "preset": _preset(self.preset),
            "adaboost": {
                "smoothing": _float("smoothing", self.smoothing, optional=True),
                "alpha": _choice("alpha", self.alpha, _ALPHA_RULES),
            },
        }

    @classmethod
    def _kwargs_from_core(cls, p):
        kw = super()._kwargs_from_core(p)
        kw["smoothing"] = p.get("adaboost", {}).get("smoothing")
        kw["alpha"] = _user_value(p, "adaboost.alpha")
        return kw


def _t_schedule(v):
    """`t_schedule` as the library's string form `linear:T0:T1[:N]`; the library checks
    the values."""
    if isinstance(v, str):
        return v
    if isinstance(v, (tuple, list)) and len(v) in (2, 3):
        t0, t1 = _float("t_schedule", v[0]), _float("t_schedule", v[1])
        if len(v) == 3:
            return f"linear:{t0!r}:{t1!r}:{_int('t_schedule', v[2], minimum=1)}"
        return f"linear:{t0!r}:{t1!r}"
    raise ValueError(f"invalid parameter `t_schedule`: expected \"linear:T0:T1[:N]\" or (T0, T1[, N]), got {v!r}")


@register("t-adaboost")
@_common_doc
class TAdaBoostClassifier(_Binary):
    """t-AdaBoost (Nock, Amid & Warmuth 2023): AdaBoost with tempered exponential measures.

    Binary classification only.

    t: the temperature. By default 0.8; [0, 2) (``[0, 1]`` carries the convergence guarantees,
    ``t = 1`` is AdaBoost); or ``"auto"``: chosen from ``t_grid`` by ``t_folds``-fold inner
    stratified cross-validation on the training data, then refit on all of it (the choice and the
    inner errors are in ``t_selection_``).
    t_grid: the candidate temperatures of ``t="auto"``. By default None:
    ``[0, 0.2, 0.4, 0.6, 0.8, 0.9, 1]``.
    t_folds: the inner folds of ``t="auto"``. By default None: 3.
    t_schedule: a schedule of t over the rounds, ``"linear:T0:T1"`` (from ``T0`` at the
    first round to ``T1`` at the last), ``"linear:T0:T1:N"`` (``T1`` from round ``N`` on), or the
    tuple ``(T0, T1)`` / ``(T0, T1, N)``; replaces ``t``. The weights are carried across a change
    of t with their co-density fixed; the clipped model uses ``T1``; each round's t is in
    ``history_``. By default None (``t`` in every round).
    clipped: predict with the clipped model (scores clipped to ``[−1/(1−t), 1/(1−t)]`` after every
    tree; only for ``t < 1``). By default False.
    leaf_values: the tempered leaf link, ``"optimal"`` or ``"canonical"`` (the authors' code). By
    default None: ``"optimal"``, or the preset's choice.
    learner_weights: the weights handed to the tree learner, ``"normalized"`` (``q/Σq``) or
    ``"co-density"`` (``q^(2−t)``, on the probability simplex). By default None: ``"normalized"``.
    authors_mode: the ``authors`` preset: defaults that reproduce the authors' code (canonical
    leaves, leaves grown by count, pure leaves forbidden, at most 2000 split candidates, random
    ties, and the papers' 100 stumps at ``learning_rate=1``), so it changes the defaults of
    ``leaf_values``, ``grow_order``, ``pure_leaves``, ``max_split_candidates``, ``split_ties``,
    ``n_estimators``, ``max_leaves`` and ``learning_rate``. Every parameter given explicitly
    wins over the preset. By default False.
    overflow: for ``t > 1``, what happens when a tempered weight overflows: ``"fallback"`` (the
    authors' rule: the overflowed examples share the weight) or ``"error"`` (the fit fails). By
    default None: ``"fallback"``.

    The default split criterion is the tempered Bayes risk at ``t``.
    """

    def __init__(
        self,
        n_estimators=None,
        *,
        t=0.8,
        clipped=False,
        max_leaves=None,
        max_nodes=None,
        max_depth=None,
        min_leaf_weight=None,
        criterion=None,
        max_bins=255,
        random_state=None,
        split_ties=None,
        leaf_values=None,
        authors_mode=False,
        calibration="sigmoid",
        calibration_folds=3,
        preset=None,
        callbacks=None,
        learning_rate=None,
        n_iter_no_change=None,
        validation_fraction=0.1,
        eval_metric=None,
        warm_start=False,
        n_jobs=None,
        grow_order=None,
        pure_leaves=None,
        max_split_candidates=None,
        monotone_constraints=None,
        interaction_constraints=None,
        t_grid=None,
        t_folds=None,
        t_schedule=None,
        learner_weights=None,
        overflow=None,
    ):
        self.n_estimators = n_estimators
        self.t = t
        self.t_grid = t_grid
        self.t_folds = t_folds
        self.t_schedule = t_schedule
        self.clipped = clipped
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.min_leaf_weight = min_leaf_weight
        self.criterion = criterion
        self.max_bins = max_bins
        self.random_state = random_state
        self.callbacks = callbacks
        self.calibration = calibration
        self.calibration_folds = calibration_folds
        self.preset = preset
        self.learning_rate = learning_rate
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.eval_metric = eval_metric
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.split_ties = split_ties
        self.leaf_values = leaf_values
        self.authors_mode = authors_mode
        self.grow_order = grow_order
        self.pure_leaves = pure_leaves
        self.max_split_candidates = max_split_candidates
        self.monotone_constraints = monotone_constraints
        self.interaction_constraints = interaction_constraints
        self.learner_weights = learner_weights
        self.overflow = overflow

    def _core_params(self, multilabel):
        return {
            "algorithm": "t-adaboost",
            "preset": _preset(self.preset, authors_mode=bool(self.authors_mode)),
            "t_adaboost": {
                **self._t_params(),
                "leaf_values": _choice("leaf_values", self.leaf_values, (None, "optimal", "canonical")),
                "learner_weights": _choice(
                    "learner_weights", self.learner_weights, (None, "normalized", "co-density")
                ),
                "overflow": _choice("overflow", self.overflow, (None, "fallback", "error")),
            },
        }

    def _t_params(self):
        """`t` as a number, or `t = "auto"` as the library's `auto_t`."""
        auto = isinstance(self.t, str) and self.t == "auto"
        if self.t_schedule is not None:
            if auto:
                raise ValueError("invalid parameter `t_schedule`: not with t=\"auto\"")
            return {"t": _float("t", self.t), "t_schedule": _t_schedule(self.t_schedule)}
        if not auto:
            if self.t_grid is not None or self.t_folds is not None:
                raise ValueError("invalid parameter `t_grid`/`t_folds`: they go with t=\"auto\"")
            return {"t": _float("t", self.t)}
        # The library's defaults, spelled out (an empty table would read as "not given").
        a = {"grid": [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0], "folds": 3}
        if self.t_grid is not None:
            try:
                grid = [float(v) for v in self.t_grid]
            except (TypeError, ValueError):
                raise ValueError(
                    f"invalid parameter `t_grid`: expected a list of numbers, got {self.t_grid!r}"
                ) from None
            a["grid"] = [_float("t_grid", v) for v in grid]
        if self.t_folds is not None:
            a["folds"] = _int("t_folds", self.t_folds, minimum=2)
        return {"auto_t": a}

    @property
    def _clipped(self):
        return bool(self.clipped)

    @classmethod
    def _kwargs_from_core(cls, p):
        kw = super()._kwargs_from_core(p)
        ta = p.get("t_adaboost", {})
        t = p.get("tree", {})
        kw.update(
            t=ta.get("t", 0.8),
            leaf_values=_user_value(p, "t_adaboost.leaf_values"),
            learner_weights=_user_value(p, "t_adaboost.learner_weights"),
            overflow=_user_value(p, "t_adaboost.overflow"),
        )
        if ta.get("t_schedule") is not None:
            kw.update(t_schedule=ta["t_schedule"])
        if ta.get("auto_t") is not None:
            # t = "auto": the reloaded estimator chooses again when refit.
            kw.update(t="auto", t_grid=ta["auto_t"].get("grid"), t_folds=ta["auto_t"].get("folds"))
        # The preset, and what the user gave over it: a reloaded estimator refits alike.
        kw["authors_mode"] = p.get("preset") == "authors" or ta.get("authors_mode", False)
        if not p.get("_sources") and t.get("max_split_candidates") is None and kw["authors_mode"]:
            # A model without sources: a null cap under the authors preset (2000) was the user's.
            kw["max_split_candidates"] = "all"
        return kw

    def _set_model(self, model):
        super()._set_model(model)
        # The clipping level δ = 1/(1 − t) of the clipped model (None when t ≥ 1).
        self.clip_ = model.clip
        # t = "auto": {"grid", "scores", "t", "folds", "fold_seed"}, else None.
        sel = model.t_selection_json
        self.t_selection_ = None if sel is None else json.loads(sel)


def _wrap_loss(fn):
    """The callable as the extension calls it: a 1-d float64 array of edges in, the same shape of
    float64 loss values out."""

    def loss(z):
        v = np.asarray(fn(z), dtype=np.float64)
        if v.shape != z.shape:
            raise TypeError(
                f"the SecBoost loss was called with a 1-d array of {z.size} edges and returned "
                f"shape {v.shape}: write it with numpy operations (e.g. np.logaddexp(0, -z)) so "
                "that it maps an array to an array of the same shape"
            )
        return v

    return loss


@register("secboost")
@_common_doc
class SecBoostClassifier(_Binary):
    """SecBoost (Nock & Mansour 2024): boosting any loss from loss values only.

    Binary classification only.

    loss: the loss on the edge ``z = y H(x)``: a name (``"logistic"``, ``"exponential"``,
    ``"square"``, ``"hinge"``, ``"zero-one"``, ``"clipped-logistic[:q=Q]"``, ``"spring[:Q=Q]"``
    (the paper's appendix form), ``"spring-main"`` (its main-text form), ``"tempered:t=T"``) or a
    Python callable. A callable is called with a 1-d float64 numpy array of
    edges and returns their losses as an array of the same shape (it is only ever called with
    arrays: all the examples at once for the weights, each example's candidate offsets at once in the
    offset oracle). By default ``"logistic"``.
    loss_convex: declares a callable loss convex (SecBoost then uses the convex offset oracle).
    Ignored for named losses. By default False.
    loss_beta: declares a callable loss β-smooth (enables the closed-form leveraging coefficient),
    e.g. 0.25 for the logistic loss. Ignored for named losses. By default None; > 0.
    delta_init: first trial |α| of the line search. By default 1.0; > 0.
    h0: initial constant score. By default 0.0.
    alpha_rule: ``"solve"`` (always the line search Solve_α) or ``"auto"`` (the closed form when
    the loss has a β). By default ``"solve"``: it beat the closed form on 7 of the 10 reproduction
    domains (docs/reproduction.md).
    oracle: offset oracle, ``"auto"`` (dichotomic for convex losses) or ``"grid"``. By default
    ``"auto"``.
    solve_alpha: ``"certified"`` (every round's risk decrease is certified: α is accepted only when
    the OBI term q̄ is at most κ·B) or ``"paper"`` (the paper's Algorithm 3, uncertified; only to
    reproduce its runs). By default ``"certified"``.
    kappa: κ of the certified rule. By default 0.5; in (0, 1).
    """

    def __init__(
        self,
        n_estimators=None,
        *,
        loss="logistic",
        loss_convex=False,
        loss_beta=None,
        max_leaves=None,
        max_nodes=None,
        max_depth=None,
        min_leaf_weight=None,
        criterion=None,
        max_bins=255,
        random_state=None,
        split_ties=None,
        grow_order=None,
        pure_leaves=None,
        max_split_candidates=None,
        monotone_constraints=None,
        interaction_constraints=None,
        delta_init=1.0,
        h0=0.0,
        alpha_rule="solve",
        oracle="auto",
        solve_alpha="certified",
        kappa=0.5,
        calibration="sigmoid",
        calibration_folds=3,
        preset=None,
        callbacks=None,
        learning_rate=None,
        n_iter_no_change=None,
        validation_fraction=0.1,
        eval_metric=None,
        warm_start=False,
        n_jobs=None,
    ):
        self.n_estimators = n_estimators
        self.loss = loss
        self.loss_convex = loss_convex
        self.loss_beta = loss_beta
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.min_leaf_weight = min_leaf_weight
        self.criterion = criterion
        self.max_bins = max_bins
        self.random_state = random_state
        self.callbacks = callbacks
        self.calibration = calibration
        self.calibration_folds = calibration_folds
        self.preset = preset
        self.learning_rate = learning_rate
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.eval_metric = eval_metric
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.split_ties = split_ties
        self.grow_order = grow_order
        self.pure_leaves = pure_leaves
        self.max_split_candidates = max_split_candidates
        self.monotone_constraints = monotone_constraints
        self.interaction_constraints = interaction_constraints
        self.delta_init = delta_init
        self.h0 = h0
        self.alpha_rule = alpha_rule
        self.oracle = oracle
        self.solve_alpha = solve_alpha
        self.kappa = kappa

    def _core_params(self, multilabel):
        if not (isinstance(self.loss, str) or callable(self.loss)):
            raise ValueError(f"invalid parameter `loss`: expected a name or a callable, got {self.loss!r}")
        return {
            "algorithm": "secboost",
            "preset": _preset(self.preset),
            "secboost": {
                # A callable loss is passed to the core separately; this name is then unused.
                "loss": self.loss if isinstance(self.loss, str) else "logistic",
                "delta_init": _float("delta_init", self.delta_init),
                "h0": _float("h0", self.h0),
                "alpha_rule": _choice("alpha_rule", self.alpha_rule, ("auto", "solve")),
                "oracle": _choice("oracle", self.oracle, ("auto", "grid")),
                "solve_alpha": _choice("solve_alpha", self.solve_alpha, ("certified", "paper")),
                "kappa": _float("kappa", self.kappa),
                "seed": _seed(self.random_state),
            },
        }

    def _custom_loss(self):
        if isinstance(self.loss, str):
            return None
        name = getattr(self.loss, "__name__", "custom")
        beta = _float("loss_beta", self.loss_beta, optional=True)
        return (_wrap_loss(self.loss), f"python:{name}", bool(self.loss_convex), beta)

    @classmethod
    def _kwargs_from_core(cls, p):
        kw = super()._kwargs_from_core(p)
        sb = p.get("secboost", {})
        kw.update(
            loss=sb.get("loss", "logistic"),
            delta_init=sb.get("delta_init", 1.0),
            h0=sb.get("h0", 0.0),
            alpha_rule=sb.get("alpha_rule", "solve"),
            oracle=sb.get("oracle", "auto"),
            solve_alpha=sb.get("solve_alpha", "certified"),
            kappa=sb.get("kappa", 0.5),
        )
        return kw


class _Multi(BoostClassifier):
    _binary_only = False


@register("adaboost-mh", "real-adaboost-mh")
@_common_doc
class AdaBoostMHClassifier(_Multi):
    """AdaBoost.MH (Schapire & Singer): multi-class and multi-label boosting by the Hamming loss.

    ``y`` is 1-d class labels (multi-class) or a 2-d 0/1 indicator matrix (multi-label: ``predict``
    returns an indicator matrix, ``classes_`` is ``arange(n_labels)``).

    variant: ``"real"`` (smoothed half-log-ratio leaves, α = 1) or ``"discrete"`` (sign leaves).
    By default ``"real"``.
    smoothing: ε of the real leaves. By default None, which is ``1/(2m)``, m = the sum of the
    sample weights (the number of samples without them); ≥ 0.
    single_label_start: for single-label data, start from ``D(i, y_i) = 1/(2m)`` instead of the
    uniform weights. By default False.
    """

    _multilabel = True

    def __init__(
        self,
        n_estimators=100,
        *,
        variant="real",
        max_leaves=2,
        max_nodes=None,
        max_depth=None,
        min_leaf_weight=None,
        criterion=None,
        max_bins=255,
        random_state=None,
        split_ties=None,
        grow_order=None,
        pure_leaves=None,
        max_split_candidates=None,
        monotone_constraints=None,
        interaction_constraints=None,
        smoothing=None,
        single_label_start=False,
        callbacks=None,
        learning_rate=1.0,
        n_iter_no_change=None,
        validation_fraction=0.1,
        eval_metric=None,
        warm_start=False,
        n_jobs=None,
    ):
        self.n_estimators = n_estimators
        self.variant = variant
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.min_leaf_weight = min_leaf_weight
        self.criterion = criterion
        self.max_bins = max_bins
        self.random_state = random_state
        self.callbacks = callbacks
        self.learning_rate = learning_rate
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.eval_metric = eval_metric
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.split_ties = split_ties
        self.grow_order = grow_order
        self.pure_leaves = pure_leaves
        self.max_split_candidates = max_split_candidates
        self.monotone_constraints = monotone_constraints
        self.interaction_constraints = interaction_constraints
        self.smoothing = smoothing
        self.single_label_start = single_label_start

    def _core_params(self, multilabel):
        v = _choice("variant", self.variant, ("real", "discrete"))
        return {
            "algorithm": "real-adaboost-mh" if v == "real" else "adaboost-mh",
            "multiclass": {
                "variant": f"mh-{v}",
                "eps": _float("smoothing", self.smoothing, optional=True),
                "single_label_start": bool(self.single_label_start),
            },
        }

    @classmethod
    def _kwargs_from_core(cls, p):
        kw = super()._kwargs_from_core(p)
        mc = p.get("multiclass", {})
        kw["variant"] = "real" if p["algorithm"] == "real-adaboost-mh" else "discrete"
        kw["smoothing"] = mc.get("eps")
        kw["single_label_start"] = mc.get("single_label_start", False)
        return kw


@register("adaboost-mo", "real-adaboost-mo")
@_common_doc
class AdaBoostMOClassifier(_Multi):
    """AdaBoost.MO (Schapire & Singer): multi-class boosting through output codes.

    variant: MH on the code columns, ``"real"`` or ``"discrete"``. By default ``"real"``.
    code: ``"one-vs-all"``, ``"random:K"``, ``"random:K:SEED"`` or ``"exhaustive"`` (≤ 12
    classes). By default ``"one-vs-all"``.
    decode: ``"loss"`` (smallest exponential loss) or ``"hamming"``. By default ``"loss"``.
    smoothing: ε of the real leaves. By default None, which is ``1/(2m)``, m = the sum of the
    sample weights (the number of samples without them); ≥ 0.

    ``decision_function`` gives, per class, minus the logarithm of its decoding loss (minus the
    Hamming distance with ``decode="hamming"``); ``predict_proba`` is their softmax, so that with
    loss decoding each class's probability is proportional to the inverse of its decoding loss.
    """

    _multilabel = False

    def __init__(
        self,
        n_estimators=100,
        *,
        variant="real",
        code="one-vs-all",
        decode="loss",
        max_leaves=2,
        max_nodes=None,
        max_depth=None,
        min_leaf_weight=None,
        criterion=None,
        max_bins=255,
        random_state=None,
        split_ties=None,
        grow_order=None,
        pure_leaves=None,
        max_split_candidates=None,
        smoothing=None,
        callbacks=None,
        learning_rate=1.0,
        n_iter_no_change=None,
        validation_fraction=0.1,
        eval_metric=None,
        warm_start=False,
        n_jobs=None,
    ):
        self.n_estimators = n_estimators
        self.variant = variant
        self.code = code
        self.decode = decode
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.min_leaf_weight = min_leaf_weight
        self.criterion = criterion
        self.max_bins = max_bins
        self.random_state = random_state
        self.callbacks = callbacks
        self.learning_rate = learning_rate
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.eval_metric = eval_metric
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.split_ties = split_ties
        self.grow_order = grow_order
        self.pure_leaves = pure_leaves
        self.max_split_candidates = max_split_candidates
        self.smoothing = smoothing

    def _core_params(self, multilabel):
        v = _choice("variant", self.variant, ("real", "discrete"))
        if not isinstance(self.code, str):
            raise ValueError(f"invalid parameter `code`: expected a string, got {self.code!r}")
        return {
            "algorithm": "real-adaboost-mo" if v == "real" else "adaboost-mo",
            "multiclass": {
                "variant": f"mo-{v}",
                "eps": _float("smoothing", self.smoothing, optional=True),
                "code": self.code,
                "decode": _choice("decode", self.decode, ("loss", "hamming")),
            },
        }

    def _class_scores(self, S):
        # The core's class scores: −log(decoding loss) for loss decoding (the exponential losses
        # themselves overflow any probability map), minus the Hamming distance for Hamming
        # decoding. `predict` is their argmax in both cases.
        return self.model_.class_scores(S)

    def _proba(self, S):
        # softmax of the decision values: for loss decoding, each class's probability is
        # proportional to the inverse of its decoding loss.
        Z = self._class_scores(S)
        Z = np.exp(Z - Z.max(axis=1, keepdims=True))
        return Z / Z.sum(axis=1, keepdims=True)

    @classmethod
    def _kwargs_from_core(cls, p):
        kw = super()._kwargs_from_core(p)
        mc = p.get("multiclass", {})
        kw.update(
            variant="real" if p["algorithm"] == "real-adaboost-mo" else "discrete",
            code=mc.get("code", "one-vs-all"),
            decode=mc.get("decode", "loss"),
            smoothing=mc.get("eps"),
        )
        return kw


@register("adaboost-mr", "adaboost-m2")
@_common_doc
class AdaBoostMRClassifier(_Multi):
    """AdaBoost.MR (Schapire & Singer): boosting the ranking loss; AdaBoost.M2 on single-label data.

    ``y`` is 1-d class labels (trained as AdaBoost.M2) or a 2-d 0/1 indicator matrix (multi-label,
    AdaBoost.MR).

    label_threshold: predicted label sets ``{ℓ : f(x, ℓ) > θ}``: ``"auto"`` or
    ``"learned"`` — θ with the lowest Hamming loss on the training data (MR learns a ranking, not
    a threshold), in ``label_threshold_`` — or ``"zero"`` (θ = 0). By default ``"auto"`` (learned).
    """

    _multilabel = True

    def __init__(
        self,
        n_estimators=100,
        *,
        max_leaves=2,
        max_nodes=None,
        max_depth=None,
        min_leaf_weight=None,
        criterion=None,
        max_bins=255,
        random_state=None,
        callbacks=None,
        learning_rate=1.0,
        n_iter_no_change=None,
        validation_fraction=0.1,
        eval_metric=None,
        warm_start=False,
        n_jobs=None,
        split_ties=None,
        grow_order=None,
        pure_leaves=None,
        max_split_candidates=None,
        label_threshold="auto",
    ):
        self.n_estimators = n_estimators
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.min_leaf_weight = min_leaf_weight
        self.criterion = criterion
        self.max_bins = max_bins
        self.random_state = random_state
        self.callbacks = callbacks
        self.learning_rate = learning_rate
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.eval_metric = eval_metric
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.split_ties = split_ties
        self.grow_order = grow_order
        self.pure_leaves = pure_leaves
        self.max_split_candidates = max_split_candidates
        self.label_threshold = label_threshold

    def _core_params(self, multilabel):
        lt = _choice("label_threshold", self.label_threshold, ("auto", "zero", "learned"))
        if multilabel:
            return {"algorithm": "adaboost-mr", "multiclass": {"variant": "mr", "label_threshold": lt}}
        return {"algorithm": "adaboost-m2", "multiclass": {"variant": "m2", "label_threshold": lt}}

    @property
    def label_threshold_(self):
        """The learned label-set threshold θ, or None (θ = 0)."""
        return self.model_.label_threshold
