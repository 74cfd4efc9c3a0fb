"""The same models and predictions through every entry point (STYLE 9; LightGBM's
test_consistency.py): the Python package, the `boostlab` command-line tool and the Rust API.

- Python and the CLI train the same model (JSON-identical: trees, α, diagnostics) on the same CSV;
- the CLI predicts with a model saved from Python exactly (bit for bit) what Python predicts;
- the Rust API: `golden/consistency.json` holds models and scores produced here; the Rust test
  `crates/boostlab/tests/python_consistency.rs` trains and predicts with the Rust API on the same
  CSV and must reproduce them bit for bit, and `test_golden_file_is_current` checks that Python
  still produces exactly that file (set BOOSTLAB_UPDATE_GOLDEN=1 to rewrite it).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import boostlab

from helpers import core_model, mixed_frame, model_dict, shared_dataset

# Beside the tests: crates/boostlab/tests/python_consistency.rs includes it.
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "consistency.json"
FEATURES = ["a", "b", "c"]

# (name, estimator, the same parameters as CLI flags, target column, clipped predictions too)
CASES = [
    (
        "t-adaboost",
        lambda: boostlab.TAdaBoostClassifier(n_estimators=25, t=0.6, max_leaves=6, learning_rate=1.0),
        ["--algo", "t-adaboost", "--t", "0.6", "--max-leaves", "6", "--rounds", "25", "--learning-rate", "1"],
        "label",
        True,
    ),
    (
        "secboost-spring",
        lambda: boostlab.SecBoostClassifier(n_estimators=12, loss="spring:Q=500", max_leaves=4, learning_rate=1.0),
        ["--algo", "secboost", "--loss", "spring:Q=500", "--max-leaves", "4", "--rounds", "12", "--learning-rate", "1"],
        "label",
        False,
    ),
    (
        "real-adaboost-mh",
        lambda: boostlab.AdaBoostMHClassifier(n_estimators=20, max_leaves=4),
        ["--algo", "real-adaboost-mh", "--max-leaves", "4", "--rounds", "20"],
        "label3",
        False,
    ),
    (
        "adaboost-mo",
        lambda: boostlab.AdaBoostMOClassifier(n_estimators=15, variant="discrete", code="exhaustive"),
        ["--algo", "adaboost-mo", "--code", "exhaustive", "--rounds", "15"],
        "label3",
        False,
    ),
]
IDS = [c[0] for c in CASES]


def _csv(target: str) -> str:
    """The CSV text of one case (features and its target), and the frame Python trains on is read
    back from it, so that both sides see the same numbers."""
    return mixed_frame()[FEATURES + [target]].to_csv(index=False)


def read_csv(path_or_buffer) -> pd.DataFrame:
    """pandas' CSV reader with exact (round-trip) float parsing, as the Rust reader's."""
    if int(pd.__version__.split(".")[0]) >= 3:
        return pd.read_csv(path_or_buffer)  # round-trip precision is the default from pandas 3
    return pd.read_csv(path_or_buffer, float_precision="round_trip")


def _read(text: str) -> pd.DataFrame:
    return read_csv(io.StringIO(text))


def _fit(case):
    _, make, _, target, _ = case
    df = _read(_csv(target))
    return make().fit(df[FEATURES], df[target]), df


def _run(cli, *args) -> str:
    res = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_python_and_cli_train_the_same_model(case, cli, tmp_path):
    _, _, flags, target, _ = case
    est, _ = _fit(case)
    data = tmp_path / "train.csv"
    data.write_text(_csv(target))
    _run(cli, "train", "--data", data, "--label", target, *flags, "--model", tmp_path / "m.json", "-q")
    assert model_dict((tmp_path / "m.json").read_text()) == core_model(est)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cli_predicts_what_python_predicts(case, cli, tmp_path):
    name, _, _, _, clipped_too = case
    est, df = _fit(case)
    est.save_model(tmp_path / "py.json")
    feats = tmp_path / "x.csv"
    df[FEATURES].to_csv(feats, index=False)
    for clipped in [False, True] if clipped_too else [False]:
        est.set_params(**({"clipped": clipped} if clipped_too else {}))
        flag = ["--clipped"] if clipped else []
        out = _read(_run(cli, "predict", "--model", tmp_path / "py.json", "--data", feats, "--proba", *flag))
        assert list(out["prediction"].astype(str)) == [str(v) for v in est.predict(df[FEATURES])]
        scores = out[[c for c in out.columns if c.startswith("score")]].to_numpy()
        np.testing.assert_array_equal(scores, est._raw_scores(df[FEATURES]))
        if name != "adaboost-mo":
            # (AdaBoost.MO's probabilities are the Python package's own: see AdaBoostMOClassifier.)
            proba = out[[c for c in out.columns if c.startswith("proba_")]].to_numpy()
            np.testing.assert_array_equal(proba, est.predict_proba(df[FEATURES]))


def _golden() -> dict:
    cases = []
    for case in CASES[:3]:
        name, _, _, target, clipped_too = case
        est, df = _fit(case)
        entry = {
            "name": name,
            "label": target,
            "csv": _csv(target),
            "model": est.model_.to_json(),
            "scores": est._raw_scores(df[FEATURES]).ravel().tolist(),
        }
        if clipped_too:
            est.set_params(clipped=True)
            entry["clipped_scores"] = est._raw_scores(df[FEATURES]).ravel().tolist()
        cases.append(entry)
    about = "written by python/tests/model_files/test_consistency.py; read by python_consistency.rs"
    return {"about": about, "cases": cases}


def test_golden_file_is_current():
    fresh = _golden()
    if os.environ.get("BOOSTLAB_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(fresh, indent=1) + "\n")
    stored = json.loads(GOLDEN.read_text())
    for a, b in zip(fresh["cases"], stored["cases"], strict=True):
        assert a["csv"] == b["csv"]
        assert model_dict(a["model"]) == model_dict(b["model"]), a["name"]
        assert a["scores"] == b["scores"], a["name"]
        assert a.get("clipped_scores") == b.get("clipped_scores"), a["name"]


def test_abalone_from_the_shared_datasets(cli, tmp_path):
    """A real file with a categorical column: the CLI and Python (through pandas) train the same
    t-AdaBoost model and predict the same scores."""
    path = shared_dataset("abalone.csv")
    df = read_csv(path)
    X, y = df.drop(columns="label"), df["label"]
    est = boostlab.TAdaBoostClassifier(n_estimators=30, t=0.8, max_leaves=8).fit(X, y)
    flags = ["--algo", "t-adaboost", "--t", "0.8", "--max-leaves", "8", "--rounds", "30"]
    _run(cli, "train", "--data", path, "--label", "label", *flags, "--model", tmp_path / "m.json", "-q")
    assert model_dict((tmp_path / "m.json").read_text()) == core_model(est)
    out = _read(_run(cli, "predict", "--model", tmp_path / "m.json", "--data", path))
    loaded = boostlab.load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(out["score"].to_numpy(), loaded.decision_function(X))
    np.testing.assert_array_equal(out["prediction"].to_numpy(), loaded.predict(X))
    assert est.score(X, y) > 0.75
