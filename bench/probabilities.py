"""How good are the probabilities? Out-of-fold log loss, Brier score and error of boostlab's binary
boosters against LightGBM's defaults, on the binary datasets of ../shared/datasets.

    python bench/probabilities.py [--datasets winered,qsar,...] [--folds 5] [--out FILE.json]

Each dataset is split into stratified folds (seed 0); every model is fitted on the other folds and
predicts the held-out one, so each row's probability comes from a model that never saw it. The
variants are boostlab's estimators at their defaults, with 8 leaves × 200 rounds, and with 8 or 16
leaves × 200 rounds or 32 × 100 at learning rate 0.1, alone or wrapped in scikit-learn's
cross-fitted calibration (`--calibration sigmoid`), against `lightgbm.LGBMClassifier()` at its defaults (one thread: only quality is measured).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import StratifiedKFold

import boostlab

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
DEFAULT_SETS = ["winered", "winewhite", "abalone", "qsar", "eeg", "creditcard", "adult"]


def load(name: str):
    df = pd.read_csv(DATA / f"{name}.csv")
    y = df.iloc[:, -1].to_numpy()
    X = df.iloc[:, :-1]
    X.columns = [f"f{j}" for j in range(X.shape[1])]  # LightGBM refuses JSON characters in names
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]):
            X[c] = X[c].astype("category")
    classes = np.unique(y)
    return X, (y == classes[-1]).astype(np.int64)


def variants(calibration: list[str]):
    from sklearn.calibration import CalibratedClassifierCV

    shapes = {
        "AdaBoost default": (boostlab.AdaBoostClassifier, {}),
        "Real AdaBoost default": (boostlab.RealAdaBoostClassifier, {}),
        "AdaBoost 8x200": (boostlab.AdaBoostClassifier, {"max_leaves": 8, "n_estimators": 200}),
        "Real AdaBoost 8x200": (boostlab.RealAdaBoostClassifier, {"max_leaves": 8, "n_estimators": 200}),
        "Real AdaBoost 8x200 lr0.1": (
            boostlab.RealAdaBoostClassifier,
            {"max_leaves": 8, "n_estimators": 200, "learning_rate": 0.1},
        ),
        "Real AdaBoost 16x200 lr0.1": (
            boostlab.RealAdaBoostClassifier,
            {"max_leaves": 16, "n_estimators": 200, "learning_rate": 0.1},
        ),
        "Real AdaBoost 32x100 lr0.1": (
            boostlab.RealAdaBoostClassifier,
            {"max_leaves": 32, "n_estimators": 100, "learning_rate": 0.1},
        ),
    }
    out = {}
    for name, (cls, kw) in shapes.items():
        for cal in calibration:
            if cal == "none":
                out[name] = lambda cls=cls, kw=kw: cls(**kw)
            else:
                # scikit-learn's cross-fitted calibration (3 shuffled stratified folds, one final
                # model): what a built-in calibration would be measured against.
                folds = StratifiedKFold(3, shuffle=True, random_state=0)
                out[f"{name} +{cal}"] = lambda cls=cls, kw=kw, m=cal, f=folds: CalibratedClassifierCV(
                    cls(**kw), method=m, cv=f, ensemble=False
                )
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=",".join(DEFAULT_SETS))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--calibration", default="none", help="comma-separated: none (the estimator alone), sigmoid, isotonic"
    )
    ap.add_argument("--out")
    a = ap.parse_args()
    import lightgbm

    # One thread: only the quality is measured here, and a loaded host makes LightGBM's threads spin.
    models = {"LightGBM default": lambda: lightgbm.LGBMClassifier(verbose=-1, n_jobs=1)}
    models.update(variants(a.calibration.split(",")))
    results = {}
    for name in a.datasets.split(","):
        X, y = load(name)
        folds = StratifiedKFold(a.folds, shuffle=True, random_state=0)
        for label, make in models.items():
            p = np.zeros(len(y))
            start = time.perf_counter()
            for tr, te in folds.split(X, y):
                est = make().fit(X.iloc[tr], y[tr])
                p[te] = est.predict_proba(X.iloc[te])[:, 1]
            secs = time.perf_counter() - start
            pc = np.clip(p, 1e-15, 1 - 1e-15)
            r = {
                "log_loss": log_loss(y, pc),
                "brier": brier_score_loss(y, p),
                "error": float(np.mean((p > 0.5) != y)),
                "saturated": float(np.mean((p < 1e-6) | (p > 1 - 1e-6))),
                "seconds": secs,
            }
            results.setdefault(name, {})[label] = r
            print(
                f"{name:11s} {label:32s} log loss {r['log_loss']:.4f}  brier {r['brier']:.4f}  "
                f"error {r['error']:.4f}  saturated {r['saturated']:.3f}  {secs:.1f} s",
                flush=True,
            )
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
