"""Model files: saving an estimator's model, and reading a model file (from `save_model` or the
`boostlab` command-line tool) into a fitted estimator of the class that trained it."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _boostlab
from ._data import is_default_names


class _ModelFileMixin:
    """`save_model` and `load_model` of the estimators."""

    def save_model(self, path):
        """Writes the model file (the JSON format of the `boostlab` command-line tool)."""
        check_is_fitted(self)
        self.model_.save(os.fspath(path))

    @classmethod
    def load_model(cls, path):
        """Reads a model file written by `save_model` or `boostlab train` and returns a fitted
        estimator of the model's class (`cls` must match it, unless called on the base)."""
        return _from_model(_boostlab.Model.load(os.fspath(path)), cls)


def _labels_from_names(names):
    """Class labels of a model read from a file: integers, floats or booleans when every name is
    one, strings otherwise."""
    try:
        ints = [int(n) for n in names]
        if [str(i) for i in ints] == list(names):
            return np.array(ints)
    except ValueError:
        pass
    try:
        floats = [float(n) for n in names]
        if [str(f) for f in floats] == list(names):
            return np.array(floats)
    except ValueError:
        pass
    if set(names) <= {"True", "False"}:
        return np.array([n == "True" for n in names])
    return np.array(names, dtype=object)


_REGISTRY: dict[str, type] = {}


def register(*algorithms):
    def deco(cls):
        for a in algorithms:
            _REGISTRY[a] = cls
        return cls

    return deco


def _from_model(model, cls=None):
    est_cls = _REGISTRY.get(model.algorithm)
    if est_cls is None:
        raise ValueError(f"no Python estimator for the algorithm '{model.algorithm}'")
    # (Every registered class is a BoostClassifier: loading through the base accepts any.)
    if cls is not None and not issubclass(est_cls, cls):
        raise ValueError(
            f"the model was trained with '{model.algorithm}': load it with "
            f"{est_cls.__name__}.load_model or boostlab.load_model"
        )
    params = json.loads(model.params_json)
    params["_sources"] = json.loads(model.param_sources_json)
    est = est_cls(**est_cls._kwargs_from_core(params))
    if model.task == "multilabel":
        est.classes_ = np.arange(len(model.classes))
        est._y_dtype = np.dtype(np.int64)
    else:
        est.classes_ = _labels_from_names(model.classes)
    names = model.feature_names
    est.n_features_in_ = len(names)
    if not is_default_names(names):
        est.feature_names_in_ = np.asarray(names, dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est._set_model(model)
    return est


def load_model(path):
    """Reads a model file (from `save_model` or the `boostlab` command-line tool) and returns a
    fitted estimator of the matching class."""
    return _from_model(_boostlab.Model.load(os.fspath(path)))
