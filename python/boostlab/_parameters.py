"""The estimators' parameters: checks of single values (each error names the parameter, what it
expects and what it got) and the mapping between an estimator's parameters and the core's."""

from __future__ import annotations

import inspect
import math
import numbers
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from . import _boostlab

# The core's integers are 64-bit: larger values cannot be converted.
_INT_MAX = 2**63 - 1


def _shown(value) -> str:
    """`repr(value)`, shortened to 60 characters with an ellipsis (a 10 MB string is not echoed)."""
    r = repr(value)
    return r if len(r) <= 60 else f"{r[:60]}… ({len(r)} characters)"


def _int(name: str, value, *, minimum: int = 0, optional: bool = False):
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"invalid parameter `{name}`: expected an integer, got {_shown(value)}")
    if int(value) < minimum:
        raise ValueError(f"invalid parameter `{name}`: expected an integer ≥ {minimum}, got {value}")
    if int(value) > _INT_MAX:
        raise ValueError(
            f"invalid parameter `{name}`: expected an integer ≤ 2**63 - 1, got {_shown(value)}"
        )
    return int(value)


def _float(name: str, value, *, optional: bool = False):
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"invalid parameter `{name}`: expected a number, got {_shown(value)}")
    try:
        v = float(value)
    except (OverflowError, ValueError):
        v = float("nan")
    if not np.isfinite(v):
        raise ValueError(f"invalid parameter `{name}`: expected a finite number, got {_shown(value)}")
    return v


def _callbacks(value):
    """`None` or a list (tuple) of callables, called after each round with the round's record."""
    if value is None:
        return None
    if callable(value):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(callable(f) for f in value):
        raise ValueError(
            f"invalid parameter `callbacks`: expected None or a list of callables, got {_shown(value)}"
        )
    return list(value)


def _choice(name: str, value, options):
    if value not in options:
        raise ValueError(
            f"invalid parameter `{name}`: expected one of {list(options)}, got {_shown(value)}"
        )
    return value


def _criterion(value):
    """`None`, `empirical`, `gini`, `entropy`, `matusita` or `tempered:t=T` (the CLI's syntax)."""
    if value is None:
        return None
    if isinstance(value, str):
        if value in ("empirical", "gini", "entropy", "matusita"):
            return {"name": value}
        if value.startswith("tempered:t="):
            try:
                t = float(value[len("tempered:t=") :])
            except ValueError:
                pass
            else:
                if not math.isfinite(t):
                    # Refused here, with the library's message: JSON cannot carry it there.
                    shown = "NaN" if math.isnan(t) else ("inf" if t > 0 else "-inf")
                    raise ValueError(
                        "invalid parameter `criterion.t`: expected a finite temperature t ≤ 2, "
                        f"got {shown}"
                    )
                return {"name": "tempered", "t": t}
    raise ValueError(
        "invalid parameter `criterion`: expected None, 'empirical', 'gini', 'entropy', "
        f"'matusita' or 'tempered:t=T', got {_shown(value)}"
    )


def _criterion_str(c):
    if c is None:
        return None
    if c.get("name") == "tempered":
        return f"tempered:t={c['t']!r}"
    return c["name"]


class _Null:
    """An explicit JSON null that survives `_given` (e.g. ``max_split_candidates="all"``)."""


EXPLICIT_NULL = _Null()


def _given(params):
    """The parameters the user gave: `None` values dropped (they take the preset's value or the
    core's default), `EXPLICIT_NULL` turned into `None`."""
    out = {}
    for k, v in params.items():
        if isinstance(v, dict):
            v = _given(v)
            if v:
                out[k] = v
        elif v is EXPLICIT_NULL:
            out[k] = None
        elif v is not None:
            out[k] = v
    return out


def _user_value(p, path, fallback=None):
    """A parameter of a model's core parameters `p` as a reloaded estimator's argument: the value
    the user gave, or None when it came from the default or the preset (so that the estimator
    refits alike and `get_params` round-trips). Models without sources give the value itself."""
    sub, _, field = path.rpartition(".")
    sources = p.get("_sources")
    if sources and path in sources:
        e = sources[path]
        return e["value"] if e["source"] == "user" else None
    return (p.get(sub, {}) if sub else p).get(field, fallback)


def _split_candidates(value):
    """`max_split_candidates`: None (the preset's value or the core's default, every candidate),
    ``"all"`` (every candidate, over a preset's cap: an explicit null) or an integer ≥ 1."""
    if isinstance(value, str) and value == "all":
        return EXPLICIT_NULL
    return _int("max_split_candidates", value, minimum=1, optional=True)


def _split_candidates_from_core(p):
    """`max_split_candidates` of a model's core parameters as the estimator's argument: the user's
    cap, ``"all"`` when the user gave every candidate (a null of the user's), else None."""
    value = _user_value(p, "tree.max_split_candidates")
    if value is None and p.get("_sources", {}).get("tree.max_split_candidates", {}).get("source") == "user":
        return "all"
    return value


def _monotone(value):
    """``monotone_constraints`` as the core reads it: a list of directions or a dict name → direction
    (the core checks the values, the length and the names)."""
    if value is None:
        return None
    try:
        if isinstance(value, dict):
            return {str(k): float(v) for k, v in value.items()}
        return [float(v) for v in np.asarray(value, dtype=object).ravel()]
    except (TypeError, ValueError):
        raise ValueError(
            "invalid parameter `monotone_constraints`: expected a list of -1, 0, 1 (one per feature) or a "
            f"dict feature name -> direction, got {_shown(value)}"
        ) from None


def _feature_key(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise ValueError(
        "invalid parameter `interaction_constraints`: expected groups of feature names or indices, got "
        f"{_shown(value)}"
    )


def _interactions(value):
    """``interaction_constraints`` as the core reads it: a list of groups of names or indices."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not all(not isinstance(g, (str, bytes)) for g in value):
        raise ValueError(
            "invalid parameter `interaction_constraints`: expected a list of feature groups (lists of names or "
            f"indices), got {_shown(value)}"
        )
    return [[_feature_key(f) for f in g] for g in value]


def _calibration_from_core(method):
    """The estimator's `calibration` of a model's method: None for the papers' link."""
    return None if method == "none" else method


def _seed(random_state) -> int:
    """The core's seed: `None` is 0 (boostlab is deterministic by default), an integer ≥ 0 is
    itself, a `RandomState` draws one."""
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_)):
        return _int("random_state", random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class _ParamsMixin:
    """The core's parameters of an estimator (checked at `fit`, before any work) and, back, the
    estimator's arguments of a model's core parameters (`load_model`)."""

    # Every estimator's parameters (set by its constructor) that the shared methods read.
    n_estimators: Any
    max_bins: Any
    random_state: Any

    def _tree_params(self):
        return {
            "max_leaves": _int("max_leaves", self.max_leaves, optional=True),
            "max_nodes": _int("max_nodes", self.max_nodes, optional=True),
            "max_depth": _int("max_depth", self.max_depth, optional=True),
            "min_leaf_weight": _float("min_leaf_weight", getattr(self, "min_leaf_weight", None), optional=True),
            "criterion": _criterion(self.criterion),
            "split_ties": _choice("split_ties", getattr(self, "split_ties", None), (None, "lowest", "random")),
            "grow_order": _choice("grow_order", getattr(self, "grow_order", None), (None, "weight", "count", "gain")),
            "pure_leaves": _choice(
                "pure_leaves", getattr(self, "pure_leaves", None), (None, "auto", "allow", "forbid")
            ),
            "max_split_candidates": _split_candidates(getattr(self, "max_split_candidates", None)),
            "monotone_constraints": _monotone(getattr(self, "monotone_constraints", None)),
            "interaction_constraints": _interactions(getattr(self, "interaction_constraints", None)),
        }

    def _params(self, multilabel: bool) -> dict:
        p = {
            "n_estimators": _int("n_estimators", self.n_estimators, optional=True),
            "max_bins": _int("max_bins", self.max_bins),
            "seed": _seed(self.random_state),
            "tree": self._tree_params(),
            **self._practice_params(),
        }
        for k, v in self._core_params(multilabel).items():
            if isinstance(v, dict) and isinstance(p.get(k), dict):
                p[k].update(v)
            else:
                p[k] = v
        # Only what the user gave: the core lays it over the preset and the defaults.
        return _given(p)

    def _practice_params(self) -> dict:
        """Shrinkage and the validation settings (checked here, before any work)."""
        lr = _float("learning_rate", getattr(self, "learning_rate", None), optional=True)
        if lr is not None:
            _boostlab.check_parameter("learning_rate", lr)  # the registry's range
        metric = _choice(
            "eval_metric", getattr(self, "eval_metric", None), (None, "error", "hamming", "one-error", "loss")
        )
        out = {}
        if hasattr(self, "calibration"):
            # The binary boosters: None is the papers' link σ(2f), as "none".
            method = _choice("calibration", self.calibration, (None, "none", "sigmoid"))
            out["calibration"] = {
                "method": "none" if method is None else method,
                "folds": _int("calibration_folds", getattr(self, "calibration_folds", 3), minimum=2),
            }
        return {
            **out,
            "learning_rate": lr,
            "early_stopping_rounds": _int(
                "n_iter_no_change", getattr(self, "n_iter_no_change", None), minimum=1, optional=True
            ),
            "eval_metric": metric,
        }

    def _n_jobs(self):
        n = getattr(self, "n_jobs", None)
        if n is None:
            return None
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n == 0:
            raise ValueError(f"invalid parameter `n_jobs`: expected None or a non-zero integer, got {_shown(n)}")
        return int(n)

    def _core_params(self, multilabel: bool) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _custom_loss(self):
        return None

    @classmethod
    def _kwargs_from_core(cls, p: dict) -> dict:
        """Constructor arguments from a model's core parameters (for `load_model`)."""
        t = p.get("tree", {})
        return {
            "n_estimators": p["n_estimators"],
            "max_leaves": t.get("max_leaves", 2),
            "max_nodes": t.get("max_nodes"),
            "max_depth": t.get("max_depth"),
            "min_leaf_weight": _user_value(p, "tree.min_leaf_weight"),
            "criterion": _criterion_str(t.get("criterion")),
            "split_ties": _user_value(p, "tree.split_ties"),
            "grow_order": _user_value(p, "tree.grow_order"),
            "pure_leaves": _user_value(p, "tree.pure_leaves"),
            "max_split_candidates": _split_candidates_from_core(p),
            **(
                {
                    "monotone_constraints": t.get("monotone_constraints"),
                    "interaction_constraints": t.get("interaction_constraints"),
                }
                if "monotone_constraints" in inspect.signature(cls.__init__).parameters
                else {}
            ),
            **(
                {
                    "calibration": _calibration_from_core(p.get("calibration", {}).get("method", "sigmoid")),
                    "calibration_folds": p.get("calibration", {}).get("folds", 3),
                }
                if "calibration" in inspect.signature(cls.__init__).parameters
                else {}
            ),
            "max_bins": p.get("max_bins", 255),
            "random_state": p.get("seed", 0),
            "learning_rate": p.get("learning_rate", 1.0),
            "n_iter_no_change": p.get("early_stopping_rounds"),
            "eval_metric": p.get("eval_metric"),
        }
