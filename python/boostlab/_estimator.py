"""The scikit-learn side shared by every boostlab estimator: the class mapping, `fit`, prediction,
staged prediction, diagnostics, explanations and tags. The parameters, the plots and the model files
are in `_parameters`, `_plotting` and `_io`."""

from __future__ import annotations

import json
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from . import _boostlab
from ._data import core_feature_names, prepare_X
from ._io import _ModelFileMixin
from ._parameters import _callbacks, _choice, _float, _int, _ParamsMixin, _seed
from ._plotting import _PlottingMixin


def _history_table(records):
    """Per-round diagnostics as a pandas DataFrame, or a dict of lists without pandas."""
    keys = ["round"]
    for r in records:
        for k in r:
            if k not in keys and k != "stop_reason":
                keys.append(k)
    table = {k: [r.get(k, np.nan) for r in records] for k in keys}
    table["stop_reason"] = [r.get("stop_reason") for r in records]
    try:
        import pandas as pd
    except ImportError:
        return table
    return pd.DataFrame(table)


def _encode_labels(y):
    """The sorted classes of the 1-d `y` and each row's class index (int64): what
    ``np.unique(y, return_inverse=True)`` returns, without its argsort of every row for numeric
    labels (tens of ms of a 1M-row fit): the classes by counting (integers of a small
    range) or ``np.unique(y)``, then the index by one comparison (two classes) or a binary search
    among the classes."""
    if y.dtype.kind not in "biuf":
        classes, y_idx = np.unique(y, return_inverse=True)
        return classes, y_idx.reshape(-1).astype(np.int64)
    classes = None
    if (y.dtype.kind in "bi" or (y.dtype.kind == "u" and y.dtype.itemsize < 8)) and y.size:
        lo, hi = y.min(), y.max()
        if int(hi) - int(lo) < 1 << 16:
            # Small integer range: the classes from counts (no sort of the rows).
            counts = np.bincount(np.subtract(y, lo, dtype=np.int64), minlength=1)
            classes = (np.flatnonzero(counts) + int(lo)).astype(y.dtype)
    if classes is None:
        classes = np.unique(y)
    if classes.size <= 2:
        return classes, (y == classes[-1]).astype(np.int64) if classes.size == 2 else np.zeros(y.shape[0], np.int64)
    return classes, np.searchsorted(classes, y).astype(np.int64, copy=False)


def _is_2d_multi(y) -> bool:
    shape = getattr(y, "shape", None)
    if shape is None:
        shape = np.asarray(y).shape
    return len(shape) == 2 and shape[1] > 1


class BoostClassifier(_ParamsMixin, _PlottingMixin, _ModelFileMixin, ClassifierMixin, BaseEstimator):
    """Base class of the boostlab estimators (not to be used directly).

    Subclasses give `_core_params()` (their part of the core's parameters as a dict) and the class
    attributes `_binary_only` and `_multilabel`. The parameter handling, the plots and the model
    files come from the mixins of `_parameters`, `_plotting` and `_io`.
    """

    _binary_only = True
    _multilabel = False

    # ------------------------------------------------------------------ tags

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # NaN is a missing value, routed by every split (the core's missing bin).
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        # pandas / polars categorical and string columns are categorical features.
        tags.input_tags.categorical = True
        # Discrete, Real, t-AdaBoost and SecBoost are binary boosters: with this tag scikit-learn's
        # checks skip the multi-class ones and instead check that fit raises "Only binary
        # classification is supported".
        tags.classifier_tags.multi_class = not self._binary_only
        tags.classifier_tags.multi_label = self._multilabel
        return tags

    # ------------------------------------------------------------------ fit

    def _prepare_y(self, y, n_rows, sample_weight):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        if self._multilabel and (sp.issparse(y) or _is_2d_multi(y)):
            y = check_array(y, accept_sparse=True, ensure_2d=True, dtype=None, input_name="y")
            if sp.issparse(y):
                y = y.toarray()
            if type_of_target(y) != "multilabel-indicator":
                raise ValueError(
                    "a 2-d y must be a multi-label indicator matrix of 0/1 values, got "
                    f"a target of type {type_of_target(y)}"
                )
            check_consistent_length(y, np.empty(n_rows))
            k = y.shape[1]
            y_core = np.ascontiguousarray(y != 0, dtype=np.uint8)
            return "multilabel", y_core, [str(j) for j in range(k)], np.arange(k), y.dtype
        y = check_array(y, ensure_2d=False, dtype=None, input_name="y", estimator=self)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        check_consistent_length(y, np.empty(n_rows))
        classes, y_idx = _encode_labels(y)
        if self._binary_only and classes.size > 2:
            raise ValueError(
                "Only binary classification is supported. The type of the target is "
                f"{type_of_target(y)}. {type(self).__name__} is a binary booster; for "
                f"{classes.size} classes use AdaBoostMHClassifier, AdaBoostMOClassifier or "
                "AdaBoostMRClassifier."
            )
        if sample_weight is not None:
            present = np.unique(y_idx[sample_weight > 0])
            if present.size < 2:
                raise ValueError(
                    f"sample_weight is positive on one class only ({classes[present]!r}): "
                    "training needs two classes"
                )
        names = [str(c) for c in classes]
        if len(set(names)) != len(names):
            raise ValueError(f"class labels {classes!r} are not distinct as strings")
        return "classes", y_idx, names, classes, None

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Trains the ensemble.

        X: array-like, sparse matrix, pandas or polars DataFrame, or any Arrow table (an object
        with ``__arrow_c_stream__`` or ``__arrow_c_array__``: pyarrow, duckdb results) of shape
        (n_samples, n_features). NaN and nulls are missing values; categorical, string and Arrow
        dictionary columns are categorical features.
        y: class labels of shape (n_samples,); for AdaBoostMHClassifier and AdaBoostMRClassifier
        also a 0/1 indicator matrix of shape (n_samples, n_labels) (multi-label).
        sample_weight: array of shape (n_samples,), non-negative, not all zero. By default 1.
        eval_set: a list of one pair ``(X_val, y_val)`` of validation data: each round's metric
        (``eval_metric``) goes into ``history_["valid_metric"]``, and with ``n_iter_no_change``
        early stopping uses it. By default None (with ``n_iter_no_change``, a stratified
        ``validation_fraction`` of the training data is held out instead).

        With ``warm_start=True`` and a fitted model, the missing rounds up to ``n_estimators`` are
        added to it (the data must be the training data).

        Returns self. Training releases the GIL.
        """
        n_iter_no_change = _int("n_iter_no_change", getattr(self, "n_iter_no_change", None), minimum=1, optional=True)
        init = self._warm_start_model()
        if eval_set is None and n_iter_no_change is not None:
            X, y, sample_weight, eval_set = self._split_validation(X, y, sample_weight)
        n_rows, columns = prepare_X(self, X, reset=init is None)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, np.empty((n_rows, 0)), dtype=np.float64, ensure_non_negative=True
            )
            sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        kind, y_core, names, classes, y_dtype = self._prepare_y(y, n_rows, sample_weight)
        valid = self._valid(eval_set, kind, names, classes)
        params = self._params(kind == "multilabel")
        if valid is not None and self._clipped:
            # t-AdaBoost predicting with its clipped model is scored as clipped.
            params["eval_clipped"] = True
        callbacks = _callbacks(getattr(self, "callbacks", None))
        try:
            model = _boostlab.fit(
                core_feature_names(self, self.n_features_in_),
                columns,
                kind,
                y_core,
                names,
                json.dumps(params, allow_nan=False),
                sample_weight,
                self._custom_loss(),
                callbacks,
                valid,
                init,
                self._n_jobs(),
            )
        except BaseException:
            # Interrupted (Ctrl-C), stopped by a callback or failed: no model from an earlier fit
            # stays behind as if it were this one's.
            self._reset_fitted()
            raise
        self.classes_ = classes
        if y_dtype is not None:
            self._y_dtype = y_dtype
        self._set_model(model)
        reason = model.calibration_not_fitted
        if reason is not None:
            warnings.warn(
                f"predict_proba is not calibrated ({reason}); it uses the papers' link σ(2f)",
                UserWarning,
                stacklevel=2,
            )
        return self

    def _warm_start_model(self):
        """The fitted model to continue (`warm_start=True` and fitted), or None."""
        if not (getattr(self, "warm_start", False) and hasattr(self, "model_")):
            return None
        # None (the booster's default) is checked by the core against the model.
        n_est = _int("n_estimators", self.n_estimators, optional=True)
        if n_est is not None and n_est < self.model_.n_trees:
            raise ValueError(
                f"n_estimators={n_est} must be larger or equal to the fitted model's "
                f"{self.model_.n_trees} trees when warm_start==True"
            )
        return self.model_

    def _split_validation(self, X, y, sample_weight):
        """Holds out `validation_fraction` of the rows (stratified by class for 1-d labels, seeded
        by `random_state`) for early stopping: returns the training part and the `eval_set`."""
        from sklearn.model_selection import train_test_split

        frac = _float("validation_fraction", getattr(self, "validation_fraction", 0.1))
        if not 0.0 < frac < 1.0:
            raise ValueError(f"invalid parameter `validation_fraction`: expected a number in (0, 1), got {frac!r}")
        stratify = None if (sp.issparse(y) or _is_2d_multi(y)) else np.asarray(y)
        parts = [X, y] + ([sample_weight] if sample_weight is not None else [])
        split = train_test_split(*parts, test_size=frac, stratify=stratify, random_state=_seed(self.random_state))
        X_tr, X_va, y_tr, y_va = split[:4]
        w_tr = split[4] if sample_weight is not None else None
        return X_tr, y_tr, w_tr, [(X_va, y_va)]

    def _valid(self, eval_set, kind, names, classes):
        """The core's validation tuple `(columns, kind, y, names)` of `eval_set`, or None."""
        if eval_set is None:
            return None
        if not isinstance(eval_set, (list, tuple)) or len(eval_set) != 1 or len(eval_set[0]) != 2:
            raise ValueError("eval_set: expected a list of one (X_val, y_val) pair")
        X_val, y_val = eval_set[0]
        n_val, v_columns = prepare_X(self, X_val, reset=False)
        if kind == "multilabel":
            y_val = check_array(y_val, accept_sparse=True, ensure_2d=True, dtype=None, input_name="y_val")
            if sp.issparse(y_val):
                y_val = y_val.toarray()
            if y_val.shape != (n_val, len(names)):
                raise ValueError(f"eval_set: y_val of shape {y_val.shape}, expected ({n_val}, {len(names)})")
            return v_columns, "multilabel", np.ascontiguousarray(y_val != 0, dtype=np.uint8), names
        y_val = column_or_1d(check_array(y_val, ensure_2d=False, dtype=None, input_name="y_val"))
        check_consistent_length(y_val, np.empty(n_val))
        v_classes, v_idx = np.unique(y_val, return_inverse=True)
        unknown = [c for c in v_classes if c not in set(classes.tolist())]
        if unknown:
            raise ValueError(f"eval_set: y_val has labels not seen in training: {unknown[:10]!r}")
        return v_columns, "classes", v_idx.reshape(-1).astype(np.int64), [str(c) for c in v_classes]

    # ------------------------------------------------------------------ persistence

    def __getstate__(self):
        """The estimator's state in plain values, for pickle, `copy.deepcopy` and skops: the
        fitted model as its JSON text (the model file's content) instead of the extension's
        object, `_y_dtype` as its string form, and no cached `history_` (rebuilt on access).
        skops rebuilds an object from its state without calling a constructor, which the
        extension's model object does not allow: with plain values, trusting the estimator's class
        is enough to load it."""
        state = dict(super().__getstate__())
        state.pop("_history", None)
        model = state.pop("model_", None)
        if model is not None:
            state["_model_json"] = model.to_json()
        if "_y_dtype" in state:
            state["_y_dtype"] = np.dtype(state["_y_dtype"]).str
        return state

    def __setstate__(self, state):
        state = dict(state)
        text = state.pop("_model_json", None)
        if "_y_dtype" in state:
            state["_y_dtype"] = np.dtype(state["_y_dtype"])
        super().__setstate__(state)
        if text is not None:
            self._set_model(_boostlab.Model.from_json(text))

    def _reset_fitted(self):
        for a in ("model_", "estimator_weights_", "_history", "classes_", "best_iteration_", "probability_scale_"):
            self.__dict__.pop(a, None)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "model_")

    def _set_model(self, model):
        self.model_ = model
        self.estimator_weights_ = model.alphas
        # `history_` is built from the model on first access (a property): a DataFrame of every
        # round is a fixed cost of each fit that most fits never read.
        self.__dict__.pop("_history", None)
        # Early stopping's best iteration (0-based; the model keeps best_iteration_ + 1
        # trees), None without early stopping.
        self.best_iteration_ = model.best_iteration
        # The a of a binary model's P(classes_[1] | x) = σ(a·f): calibrated, or 2 (the papers'
        # link; every multi-class model).
        self.probability_scale_ = model.probability_scale

    @property
    def history_(self):
        """Per-round diagnostics of the fit (a pandas DataFrame, or a dict of lists without
        pandas): one row per round with ``round``, the booster's quantities and ``stop_reason``."""
        check_is_fitted(self)
        h = self.__dict__.get("_history")
        if h is None:
            h = self.__dict__["_history"] = _history_table(self.model_.history())
        return h

    # ------------------------------------------------------------------ prediction

    @property
    def _clipped(self) -> bool:
        return False

    def _columns(self, X):
        check_is_fitted(self)
        kinds = self.model_.feature_kinds
        _, columns = prepare_X(self, X, reset=False, kinds=kinds)
        return self.model_.feature_names, columns

    def _raw_scores(self, X):
        names, columns = self._columns(X)
        return self.model_.decision_function(names, columns, self._clipped, self._n_jobs())

    def _class_scores(self, S):
        return self.model_.class_scores(S)

    def _decision(self, S):
        m = self.model_
        if m.task == "binary":
            return S[:, 0].copy()
        C = self._class_scores(S)
        if m.task == "multiclass" and C.shape[1] == 2:
            # scikit-learn's binary convention: one score, > 0 for classes_[1].
            return C[:, 1] - C[:, 0]
        return C

    def _proba(self, S):
        return self.model_.predict_proba(S)

    def _predict(self, S):
        m = self.model_
        if m.task == "multilabel":
            # {f > θ} with AdaBoost.MR's learned threshold (θ = 0 without one).
            theta = m.label_threshold
            return (S > (0.0 if theta is None else theta)).astype(self._y_dtype)
        return self.classes_[m.predict_index(S)]

    def decision_function(self, X):
        """Scores: shape (n_samples,) for two classes (> 0 means `classes_[1]`), otherwise
        (n_samples, n_classes) (per label for multi-label targets)."""
        return self._decision(self._raw_scores(X))

    def predict(self, X):
        """Predicted class labels (a 0/1 indicator matrix for multi-label targets)."""
        return self._predict(self._raw_scores(X))

    def predict_proba(self, X):
        """Probability estimates (n_samples, n_classes): binary `P(+1|x) = σ(a·f)` with the
        calibrated scale a (``calibration="sigmoid"``, the default) or a = 2 (``calibration=None``);
        multi-class `σ(2 f_k)` normalised over the classes; multi-label `σ(2 f_l)` per label
        (docs/explanation/probabilities.md)."""
        return self._proba(self._raw_scores(X))

    def _staged(self, X):
        names, columns = self._columns(X)
        yield from self.model_.staged_decision_function(names, columns, self._clipped, self._n_jobs())

    def staged_decision_function(self, X):
        """`decision_function` after each boosting round (a generator)."""
        for S in self._staged(X):
            yield self._decision(S)

    def staged_predict(self, X):
        """`predict` after each boosting round (a generator)."""
        for S in self._staged(X):
            yield self._predict(S)

    def staged_predict_proba(self, X):
        """`predict_proba` after each boosting round (a generator)."""
        for S in self._staged(X):
            yield self._proba(S)

    # ------------------------------------------------------------------ explanations

    @property
    def feature_importances_(self):
        """Gain importances (n_features_in_,): each feature's total criterion decrease over the
        splits on it, normalised to sum 1 (all 0 for a model written before gains were
        recorded). One per input column, as `n_features_in_` (a categorical column is one
        feature). `feature_importance("split")` counts splits instead."""
        check_is_fitted(self)
        return self.model_.feature_importance("gain")

    def feature_importance(self, importance_type="gain"):
        """Feature importances, ``"gain"`` (the default, = `feature_importances_`) or
        ``"split"`` (split counts), normalised to sum 1."""
        check_is_fitted(self)
        return self.model_.feature_importance(_choice("importance_type", importance_type, ("gain", "split")))

    def predict_contrib(self, X):
        """Exact TreeSHAP contributions of the linear model: shape (n_samples, n_features + 1)
        for one output (binary models), (n_samples, n_features + 1, n_outputs) otherwise; the
        last column is the bias (the model's expected score). Each row sums to the raw score:
        `decision_function` for binary and AdaBoost.MH / MR models, the code columns' scores
        (which `decision_function` decodes) for AdaBoost.MO. The clipped t-AdaBoost model
        (``clipped=True``) is not additive and is refused."""
        names, columns = self._columns(X)
        phi = self.model_.contributions(names, columns, self._clipped)
        return phi[:, :, 0] if phi.shape[2] == 1 else phi

    def margins(self, X, y, rounds=None):
        """Sorted normalised margins ``y·f(x)/N`` after each round of `rounds` (1-based; by
        default a quarter, half and all of the trees): a list of 1-d arrays, one value per
        (sample, output). N is the largest score the first rounds can reach, so margins lie in
        [−1, 1]; y is ±1 per output (the class, one-vs-rest per label, or the class's codeword
        for AdaBoost.MO). Linear model."""
        check_is_fitted(self)
        rounds = _margin_rounds(rounds, self.model_.n_trees)
        names, columns = self._columns(X)
        kind, y_core, class_names = self._target_for(y)
        return self.model_.margins(names, columns, kind, y_core, class_names, rounds), rounds

    def _target_for(self, y):
        """The core's target for labelled data in this estimator's classes."""
        if self.model_.task == "multilabel":
            y = np.ascontiguousarray(np.asarray(y) != 0, dtype=np.uint8)
            return "multilabel", y, list(self.model_.classes)
        y = column_or_1d(np.asarray(y))
        idx = np.searchsorted(self.classes_, y)
        idx = np.clip(idx, 0, len(self.classes_) - 1)
        if not np.all(self.classes_[idx] == y):
            raise ValueError("y has labels that are not among the estimator's classes_")
        return "classes", idx.astype(np.int64), list(self.model_.classes)

    def to_onnx(self):
        """The linear model as an ``onnx.ModelProto`` (needs the onnx package:
        ``pip install boostlab[onnx]``): an ``ai.onnx.ml`` TreeEnsembleRegressor graph with input
        ``input`` (float32, n_samples × n_features_in_, NaN = missing; a categorical feature's
        column holds its category code, see `onnx_input`) and outputs ``label`` (class indices
        into ``classes_``; a 0/1 matrix for multi-label models), ``probabilities`` (as
        `predict_proba`) and ``scores`` (the raw scores). Splits give the same branch as boostlab
        on the float32 values; categorical splits test the code through a lookup table. The
        metadata (``metadata_props``) holds ``boostlab.feature_names``, ``boostlab.classes`` and
        ``boostlab.categorical_levels`` (JSON). Refused with the reason: AdaBoost.MO's output
        codes and the clipped t-AdaBoost model."""
        check_is_fitted(self)
        try:
            import onnx
        except ImportError as e:
            raise ImportError(
                "to_onnx needs the onnx package, an optional dependency: pip install 'boostlab[onnx]'"
            ) from e
        return onnx.load_from_string(self.model_.to_onnx(self._clipped))

    def to_shap(self):
        """The linear model as the dict that ``shap.TreeExplainer`` accepts for a custom tree
        ensemble: ``shap.TreeExplainer(clf.to_shap()).shap_values(X)`` equals `predict_contrib`
        without its bias column, and the explainer's ``expected_value`` is the bias. α_t is folded
        into each tree's values, a missing value (NaN) takes boostlab's branch, the training covers
        weigh the branches and ``base_offset`` is the model's constant; the output is the raw score.
        Multi-output models give one ensemble with one value per output (shap values of shape
        (n_samples, n_features, n_outputs); AdaBoost.MO: its code columns). ``X`` is passed to shap
        as a float64 array of the `n_features_in_` columns. Refused with the reason: categorical
        splits and the clipped t-AdaBoost model."""
        check_is_fitted(self)
        from ._export import to_shap

        return to_shap(self.model_, clipped=self._clipped)

    def to_treelite(self):
        """The linear model as a ``treelite.Model`` (needs the treelite package), built with
        Treelite's model builder: float64 thresholds and leaves, α_t folded into the leaves,
        ``x <= threshold`` splits with boostlab's branch for a missing value (NaN), categorical
        splits as category lists (the input holds each level's code in the model's level order,
        NaN for a missing or unseen level). ``treelite.gtil.predict(m, X, pred_margin=True)`` gives
        the raw scores, shape (n_samples, 1, n_classes) (multi-label: (n_samples, n_labels, 1)).
        Refused with the reason: AdaBoost.MO's output codes and the clipped t-AdaBoost model."""
        check_is_fitted(self)
        from ._export import to_treelite

        return to_treelite(self.model_, clipped=self._clipped)

    def onnx_input(self, X):
        """`X` as the input of the `to_onnx` graph: a float32 array (n_samples × n_features_in_)
        with NaN for missing values, and for a categorical feature the index of the value's text
        in the model's levels (``boostlab.categorical_levels`` in the graph's metadata); a value
        the model never saw is missing, as in `predict`."""
        check_is_fitted(self)
        kinds = self.model_.feature_kinds
        n, columns = prepare_X(self, X, reset=False, kinds=kinds, arrow=False)
        if not isinstance(columns, list):
            X = X.toarray() if sp.issparse(X) else X
            return np.array(X, dtype=np.float32)
        levels = json.loads(self.model_.to_json())["schema"]["levels"]
        out = np.empty((n, len(columns)), dtype=np.float32)
        for j, col in enumerate(columns):
            if kinds[j] == "categorical":
                codes, names = col
                where = {name: i for i, name in enumerate(levels[j])}
                remap = np.array([where.get(name, np.nan) for name in names] + [np.nan])
                codes = np.asarray(codes, dtype=np.int64)
                out[:, j] = remap[np.where(codes >= 0, codes, len(names))]
            elif hasattr(X, "iloc"):
                out[:, j] = X.iloc[:, j].to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                out[:, j] = X.get_column(X.columns[j]).cast(float).to_numpy()
        return out


def _margin_rounds(rounds, n_trees):
    if rounds is None:
        out = []
        for r in ((n_trees + 3) // 4, (n_trees + 1) // 2, n_trees):
            if r >= 1 and r not in out:
                out.append(r)
        return out
    if isinstance(rounds, numbers.Integral):
        rounds = [rounds]
    return [_int("rounds", r, minimum=1) for r in rounds]
