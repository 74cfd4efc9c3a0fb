"""The Python estimators against the core's parameter registry (`boostlab::params::registry`):
every parameter with a Python keyword is a constructor argument of the estimators of the
algorithms it applies to, every constructor argument is a registry parameter (or one of the
estimators' own fit and prediction controls), and the keywords Python gained reach the model as
the CLI's flags do."""

from __future__ import annotations

import inspect
import math
import subprocess

import numpy as np
import pytest

import boostlab
from boostlab import _boostlab
from boostlab._io import _REGISTRY

from helpers import core_model, mixed_frame, model_dict

# Constructor arguments that steer fitting or prediction rather than the trained model's
# parameters (the algorithm's own choice, `variant`, picks the registry's `algorithm`).
NOT_PARAMETERS = {
    "callbacks",
    "n_jobs",
    "warm_start",
    "validation_fraction",
    "variant",
    "loss_convex",
    "loss_beta",
}

REGISTRY = _boostlab.parameter_registry()


def _init_args(cls) -> set[str]:
    return {p for p in inspect.signature(cls.__init__).parameters if p != "self"}


def test_registry_lists_every_parameter_once():
    names = [p["name"] for p in REGISTRY]
    assert len(names) == len(set(names))
    kws = [p["python_kw"] for p in REGISTRY if p["python_kw"]]
    assert len(kws) == len(set(kws))
    for p in REGISTRY:
        assert set(p["python_algorithms"]) <= set(p["algorithms"]), p["name"]
        assert p["topic"] in {"data", "tree", "booster", "validation", "output"}, p["name"]


def test_every_python_keyword_is_a_constructor_argument():
    for p in REGISTRY:
        if p["python_kw"] is None:
            continue
        for algo in p["python_algorithms"]:
            cls = _REGISTRY.get(algo)
            if cls is None:
                continue  # no estimator for this algorithm (abstaining-adaboost)
            assert p["python_kw"] in _init_args(cls), f"{cls.__name__} lacks `{p['python_kw']}` ({p['name']})"


def test_every_constructor_argument_is_a_registry_parameter():
    for algo, cls in _REGISTRY.items():
        known = {p["python_kw"] for p in REGISTRY if p["python_kw"] and algo in p["python_algorithms"]}
        for arg in _init_args(cls):
            if arg in NOT_PARAMETERS:
                continue
            # An estimator serves several algorithms (MH: discrete and real): any of them will do.
            algos = [a for a, c in _REGISTRY.items() if c is cls]
            owners = {p["python_kw"] for p in REGISTRY if p["python_kw"] and set(algos) & set(p["python_algorithms"])}
            assert arg in known | owners, f"{cls.__name__}({arg}=...) is not in the parameter registry"


def test_learning_rate_range_is_the_registry_s():
    (lr,) = [p for p in REGISTRY if p["name"] == "learning_rate"]
    assert lr["range"] == "(0, 1]"
    for bad in (0.0, 1.5, -1):
        with pytest.raises(ValueError, match=r"invalid parameter `learning_rate`: expected a number in \(0, 1\]"):
            boostlab.AdaBoostClassifier(learning_rate=bad).fit([[0.0], [1.0]], [0, 1])


def _outside(kind: str, interval) -> list:
    """Values just outside a registry interval, of the parameter's kind."""
    lo, lo_open, hi, hi_open = interval
    step = 1 if kind == "integer" else 0.5
    values = []
    if math.isfinite(lo):
        values.append(lo if lo_open else lo - step)
    if math.isfinite(hi):
        values.append(hi if hi_open else hi + step)
    if kind == "integer":
        values = [int(v) for v in values if v >= 0 or lo <= 0]
    return values


# Extra constructor arguments a parameter needs to be read at all.
NEEDS = {"t_folds": {"t": "auto"}, "t_grid": {"t": "auto"}}


def _range_cases():
    for p in REGISTRY:
        if p["python_kw"] is None or p["interval"] is None or p["kind"] not in ("integer", "number"):
            continue
        for algo in p["python_algorithms"]:
            cls = _REGISTRY.get(algo)
            if cls is not None:
                for v in _outside(p["kind"], p["interval"]):
                    yield pytest.param(cls, p, v, id=f"{cls.__name__}-{p['python_kw']}={v}")
                break


@pytest.mark.parametrize("cls,p,value", list(_range_cases()))
def test_estimators_refuse_values_outside_the_registry_range(cls, p, value):
    """The Python estimators validate every numeric keyword against the registry's range: a value
    just outside it is refused, naming the parameter."""
    kw = {p["python_kw"]: value, **NEEDS.get(p["name"], {})}
    X, y = _toy(cls)
    with pytest.raises(ValueError, match=rf"`({p['python_kw']}|{p['name']})"):
        cls(**kw).fit(X, y)


def _toy(cls):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int) if cls._binary_only else np.arange(60) % 3
    return X, y


# ------------------------------------------------------------------------------------------------
# The keywords Python gained: each reaches the model, the same model as the CLI's flag.

FEATURES = ["a", "b", "c"]

GAINED = [
    (
        "min_leaf_weight",
        lambda: boostlab.AdaBoostClassifier(n_estimators=8, max_leaves=6, min_leaf_weight=0.2),
        ["--algo", "adaboost", "--max-leaves", "6", "--min-leaf-weight", "0.2", "--rounds", "8"],
        ("tree", "min_leaf_weight", 0.2),
    ),
    (
        "alpha",
        lambda: boostlab.AdaBoostClassifier(n_estimators=8, max_leaves=4, alpha="line-search"),
        ["--algo", "adaboost", "--max-leaves", "4", "--alpha", "line-search", "--rounds", "8"],
        ("adaboost", "alpha", "line-search"),
    ),
    (
        "alpha-real",
        lambda: boostlab.RealAdaBoostClassifier(n_estimators=8, max_leaves=4, alpha="linear-bound"),
        ["--algo", "real-adaboost", "--max-leaves", "4", "--alpha", "linear-bound", "--rounds", "8"],
        ("adaboost", "alpha", "linear-bound"),
    ),
    (
        "learner_weights",
        lambda: boostlab.TAdaBoostClassifier(n_estimators=8, t=0.6, max_leaves=4, learner_weights="co-density"),
        ["--algo", "t-adaboost", "--t", "0.6", "--max-leaves", "4", "--learner-weights", "co-density", "--rounds", "8"],
        ("t_adaboost", "learner_weights", "co-density"),
    ),
    (
        "grow_order",
        lambda: boostlab.AdaBoostClassifier(n_estimators=8, max_leaves=6, grow_order="gain"),
        ["--algo", "adaboost", "--max-leaves", "6", "--grow-order", "gain", "--rounds", "8"],
        ("tree", "grow_order", "gain"),
    ),
    (
        "grow_order-secboost",
        lambda: boostlab.SecBoostClassifier(n_estimators=6, max_leaves=5, grow_order="count"),
        ["--algo", "secboost", "--max-leaves", "5", "--grow-order", "count", "--rounds", "6"],
        ("tree", "grow_order", "count"),
    ),
    (
        "pure_leaves",
        lambda: boostlab.RealAdaBoostClassifier(n_estimators=8, max_leaves=6, pure_leaves="forbid"),
        ["--algo", "real-adaboost", "--max-leaves", "6", "--pure-leaves", "forbid", "--rounds", "8"],
        ("tree", "pure_leaves", "forbid"),
    ),
    (
        "pure_leaves-mr",
        lambda: boostlab.AdaBoostMRClassifier(n_estimators=6, max_leaves=6, pure_leaves="forbid"),
        ["--algo", "adaboost-m2", "--max-leaves", "6", "--pure-leaves", "forbid", "--rounds", "6"],
        ("tree", "pure_leaves", "forbid"),
    ),
    (
        "max_split_candidates",
        lambda: boostlab.AdaBoostMHClassifier(n_estimators=8, max_leaves=4, max_split_candidates=5),
        ["--algo", "real-adaboost-mh", "--max-leaves", "4", "--max-split-candidates", "5", "--rounds", "8"],
        ("tree", "max_split_candidates", 5),
    ),
    (
        "max_split_candidates-mo",
        lambda: boostlab.AdaBoostMOClassifier(n_estimators=6, max_leaves=4, max_split_candidates=3),
        ["--algo", "real-adaboost-mo", "--max-leaves", "4", "--max-split-candidates", "3", "--rounds", "6"],
        ("tree", "max_split_candidates", 3),
    ),
    (
        "monotone_constraints",
        lambda: boostlab.RealAdaBoostClassifier(n_estimators=8, max_leaves=6, monotone_constraints={"b": -1}),
        ["--algo", "real-adaboost", "--max-leaves", "6", "--monotone", "b:-1", "--rounds", "8"],
        ("tree", "monotone_constraints", {"b": -1.0}),
    ),
    (
        "interaction_constraints",
        lambda: boostlab.RealAdaBoostClassifier(
            n_estimators=8, max_leaves=6, interaction_constraints=[["a", "b"], ["c"]]
        ),
        ["--algo", "real-adaboost", "--max-leaves", "6", "--interaction", "a,b;c", "--rounds", "8"],
        ("tree", "interaction_constraints", [["a", "b"], ["c"]]),
    ),
    (
        "overflow",
        lambda: boostlab.TAdaBoostClassifier(n_estimators=8, t=1.5, max_leaves=4, overflow="error"),
        ["--algo", "t-adaboost", "--t", "1.5", "--max-leaves", "4", "--overflow", "error", "--rounds", "8"],
        ("t_adaboost", "overflow", "error"),
    ),
]

# The cases trained on the three-class target (the others on the binary one).
MULTICLASS = {"max_split_candidates", "max_split_candidates-mo", "pure_leaves-mr"}


def _csv(multiclass: bool = False) -> str:
    """The features and the target, named `label`: binary, or three classes."""
    frame = mixed_frame()
    target = "label3" if multiclass else "label"
    return frame[FEATURES].assign(label=frame[target]).to_csv(index=False)


def _fit(make, multiclass: bool = False):
    """Fitted on the CSV the CLI reads, read back with exact float parsing."""
    import io

    import pandas as pd

    kw = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    df = pd.read_csv(io.StringIO(_csv(multiclass)), **kw)
    return make().fit(df[FEATURES], df["label"]), df


@pytest.mark.parametrize("case", GAINED, ids=[c[0] for c in GAINED])
def test_gained_keyword_reaches_the_model(case):
    name, make, _, (table, field, value) = case
    est, df = _fit(make, name in MULTICLASS)
    assert core_model(est)["params"][table][field] == value
    # The keyword changes the model (the default's differs), and survives a save and reload.
    default = make().set_params(**{field: None})
    default.fit(df[FEATURES], df["label"])
    assert core_model(default) != core_model(est)
    assert est.get_params()[field] == value


@pytest.mark.parametrize("case", GAINED, ids=[c[0] for c in GAINED])
def test_gained_keyword_round_trips_through_a_model_file(case, tmp_path):
    name, make, _, (_, field, value) = case
    est, _ = _fit(make, name in MULTICLASS)
    est.save_model(tmp_path / "m.json")
    loaded = type(est).load_model(tmp_path / "m.json")
    assert loaded.get_params()[field] == value


@pytest.mark.parametrize("case", GAINED, ids=[c[0] for c in GAINED])
def test_gained_keyword_gives_the_cli_s_model(case, cli, tmp_path):
    name, make, flags, _ = case
    est, _ = _fit(make, name in MULTICLASS)
    data = tmp_path / "train.csv"
    data.write_text(_csv(name in MULTICLASS))
    res = subprocess.run(
        [str(cli), "train", "--data", str(data), "--label", "label", *flags, "--model", str(tmp_path / "m.json"), "-q"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert model_dict((tmp_path / "m.json").read_text()) == core_model(est)


# ------------------------------------------------------------------------------------------------
# The tree keywords every tree estimator takes.

TREE_KEYWORDS = ("grow_order", "pure_leaves", "max_split_candidates")


@pytest.mark.parametrize("cls", sorted(set(_REGISTRY.values()), key=lambda c: c.__name__))
def test_tree_keywords_are_checked_by_every_estimator(cls):
    X, y = _toy(cls)
    for kw, bad in (("grow_order", "depth"), ("pure_leaves", "sometimes"), ("max_split_candidates", "some")):
        with pytest.raises(ValueError, match=rf"invalid parameter `{kw}`"):
            cls(n_estimators=2, **{kw: bad}).fit(X, y)


@pytest.mark.parametrize("cls", sorted(set(_REGISTRY.values()), key=lambda c: c.__name__))
def test_tree_keywords_round_trip_through_a_model_file(cls, tmp_path):
    """The tree keywords survive a save and reload, and the reloaded estimator refits alike (each
    value other than the estimator's default, which a model file records as the default's)."""
    X, y = _toy(cls)
    pure = "allow" if cls is boostlab.TAdaBoostClassifier else "forbid"
    kw = {"grow_order": "count", "pure_leaves": pure, "max_split_candidates": 4}
    est = cls(n_estimators=3, max_leaves=3, **kw).fit(X, y)
    assert {k: core_model(est)["params"]["tree"][k] for k in kw} == kw
    est.save_model(tmp_path / "m.json")
    loaded = type(est).load_model(tmp_path / "m.json")
    assert {k: loaded.get_params()[k] for k in kw} == kw
    assert core_model(cls(**loaded.get_params()).fit(X, y)) == core_model(est)


def test_dask_estimators_take_the_local_keywords():
    """Each Dask estimator takes its local estimator's keywords (the registry's), plus its own."""
    dask_estimators = pytest.importorskip("boostlab.dask")
    for cls in set(_REGISTRY.values()):
        twin = getattr(dask_estimators, f"Dask{cls.__name__}")
        assert _init_args(twin) == _init_args(cls) | {"client", "timeout", "transport"}, twin.__name__
        assert set(TREE_KEYWORDS) <= _init_args(twin), twin.__name__
    assert "overflow" in _init_args(dask_estimators.DaskTAdaBoostClassifier)
