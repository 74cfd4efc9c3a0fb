"""How good are the probabilities? Out-of-fold log loss, Brier score and error of boostlab's binary
boosters against LightGBM's defaults, on the binary datasets of ../shared/datasets.

    python bench/probabilities.py [--datasets winered,qsar,...] [--folds 5] [--out FILE.json]
                                 [--plot qsar:docs/figures/reliability-qsar.svg]

Each dataset is split into stratified folds (seed 0); every model is fitted on the other folds and
predicts the held-out one, so each row's probability comes from a model that never saw it. The
variants are boostlab's binary estimators at their defaults (calibrated), at the papers' setting
(`preset="paper"`: 100 stumps at learning rate 1) calibrated and with the papers' link σ(2f)
(`calibration=None`), and Real AdaBoost with 8 leaves × 200 rounds, against
`lightgbm.LGBMClassifier()` at its defaults (one thread: only quality is measured). The last table
gives each variant's log loss as a ratio to LightGBM's, with the errors.
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
    """boostlab's binary estimators at their defaults, at the papers' setting (calibrated and with
    the papers' link, `calibration=None`), and Real AdaBoost with 8 leaves; `--calibration sigmoid` adds the same
    shapes wrapped in scikit-learn's cross-fitted `CalibratedClassifierCV` over the papers' link,
    the reference a built-in calibration is measured against."""
    from sklearn.calibration import CalibratedClassifierCV

    R, A, T, S = (
        boostlab.RealAdaBoostClassifier,
        boostlab.AdaBoostClassifier,
        boostlab.TAdaBoostClassifier,
        boostlab.SecBoostClassifier,
    )
    shapes = {}
    for label, cls in [("AdaBoost", A), ("Real AdaBoost", R), ("t-AdaBoost", T), ("SecBoost", S)]:
        shapes[f"{label} default"] = (cls, {})
        # The papers' setting: 100 stumps at learning rate 1, calibrated and with σ(2f).
        shapes[f"{label} paper"] = (cls, {"preset": "paper"})
        shapes[f"{label} paper σ(2f)"] = (cls, {"preset": "paper", "calibration": None})
    # The setting where users met saturated probabilities.
    shapes["Real AdaBoost 8x200"] = (R, {"max_leaves": 8, "n_estimators": 200, "learning_rate": 1.0})
    shapes["Real AdaBoost 8x200 σ(2f)"] = (
        R,
        {"max_leaves": 8, "n_estimators": 200, "learning_rate": 1.0, "calibration": None},
    )
    out = {}
    for name, (cls, kw) in shapes.items():
        for cal in calibration:
            if cal == "none":
                out[name] = lambda cls=cls, kw=kw: cls(**kw)
            elif kw.get("calibration", "sigmoid") is None:
                folds = StratifiedKFold(3, shuffle=True, random_state=0)
                out[f"{name} +sklearn {cal}"] = lambda cls=cls, kw=kw, m=cal, f=folds: CalibratedClassifierCV(
                    cls(**kw), method=m, cv=f, ensemble=False
                )
    return out


def plot(results_p: dict, y, name: str, path: str) -> None:
    """Reliability diagram of two variants' out-of-fold probabilities on one dataset (SVG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.calibration import calibration_curve

    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot([0, 1], [0, 1], ":", color="grey", label="perfectly calibrated")
    for label, p in results_p.items():
        share, mean_p = calibration_curve(y, p, n_bins=10, strategy="uniform")
        ll = log_loss(y, np.clip(p, 1e-15, 1 - 1e-15))
        ax.plot(mean_p, share, "o-", label=f"{label}: log loss {ll:.3f}")
    ax.set_xlabel("mean predicted probability (out of fold)")
    ax.set_ylabel("share of the positive class")
    ax.set_title(f"{name}: reliability diagram")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=",".join(DEFAULT_SETS))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--calibration", default="none", help="comma-separated: none (the estimator alone), sigmoid, isotonic"
    )
    ap.add_argument("--out")
    ap.add_argument(
        "--plot",
        help="DATASET:FILE.svg: the reliability diagram of Real AdaBoost 8x200, calibrated and σ(2f), on DATASET",
    )
    a = ap.parse_args()
    import lightgbm

    # One thread: only the quality is measured here, and a loaded host makes LightGBM's threads spin.
    models = {"LightGBM default": lambda: lightgbm.LGBMClassifier(verbose=-1, n_jobs=1)}
    models.update(variants(a.calibration.split(",")))
    results = {}
    plot_set, plot_file = a.plot.split(":", 1) if a.plot else (None, None)
    for name in a.datasets.split(","):
        X, y = load(name)
        oof = {}
        folds = StratifiedKFold(a.folds, shuffle=True, random_state=0)
        for label, make in models.items():
            p = np.zeros(len(y))
            start = time.perf_counter()
            for tr, te in folds.split(X, y):
                est = make().fit(X.iloc[tr], y[tr])
                p[te] = est.predict_proba(X.iloc[te])[:, 1]
            secs = time.perf_counter() - start
            oof[label] = p
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
        if name == plot_set:
            pick = {"calibrated (default)": oof["Real AdaBoost 8x200"], "σ(2f)": oof["Real AdaBoost 8x200 σ(2f)"]}
            plot(pick, y, name, plot_file)
    print("\nlog loss ÷ LightGBM's; error (boostlab error / LightGBM error)")
    labels = [k for k in models if k != "LightGBM default"]
    print("| dataset | LightGBM log loss | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 2) + "|")
    for name, r in results.items():
        base = r["LightGBM default"]
        cells = [f"{r[k]['log_loss'] / base['log_loss']:.2f}× ({r[k]['error']:.3f})" for k in labels]
        print(f"| {name} | {base['log_loss']:.3f} ({base['error']:.3f}) | " + " | ".join(cells) + " |")
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
