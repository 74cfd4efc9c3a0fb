"""Data and comparisons shared by the tests."""

from __future__ import annotations

import json

import numpy as np


def mixed_frame(n: int = 160, seed: int = 7):
    """A pandas DataFrame with numeric features (some missing), a categorical string feature (some
    missing) and two targets: `label` (binary) and `label3` (three classes)."""
    import pandas as pd

    rng = np.random.RandomState(seed)
    a = rng.normal(size=n).round(3)
    b = rng.uniform(-2, 2, size=n)
    b[rng.rand(n) < 0.1] = np.nan
    c = rng.choice(["red", "green", "blue"], size=n).astype(object)
    c[rng.rand(n) < 0.1] = None
    bonus = np.where(c == "red", 1.0, 0.0)
    score = a + np.nan_to_num(b) * 0.7 + bonus + rng.normal(scale=0.5, size=n)
    label = np.where(score > 0.3, "pos", "neg")
    label3 = np.where(score > 1.0, "c", np.where(score > -0.3, "b", "a"))
    return pd.DataFrame({"a": a, "b": b, "c": c, "label": label, "label3": label3})


def core_model(est, *, names: bool = True) -> dict:
    """The fitted estimator's model as a dict, without what depends on the entry point (the label
    column spec the CLI records, and the parameters' sources: which values the user typed);
    optionally without the feature names."""
    m = json.loads(est.model_.to_json() if hasattr(est, "model_") else est)
    m.pop("target_columns", None)
    m.pop("param_sources", None)
    if not names:
        m["schema"].pop("names")
    return m


def model_dict(text: str) -> dict:
    m = json.loads(text)
    m.pop("target_columns", None)
    m.pop("param_sources", None)
    return m
