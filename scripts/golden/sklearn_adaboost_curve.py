"""Regenerates crates/boostlab/tests/golden/sklearn_adaboost_breast_cancer.json.

scikit-learn's AdaBoostClassifier (SAMME) with depth-1 Gini trees on the breast-cancer data
(the ten "mean" features, to keep the fixture small). Binary SAMME's alpha is twice discrete
AdaBoost's, so the staged predictions — hence the staged training-error curve — are the same;
boostlab reproduces it with `--criterion gini` (scikit-learn's trees split on Gini impurity).

Usage: python scripts/golden/sklearn_adaboost_curve.py   (needs scikit-learn)
"""

import json
import pathlib

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

ROUNDS = 60
X, y = load_breast_cancer(return_X_y=True)
X = X[:, :10]
clf = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=ROUNDS, random_state=0)
clf.fit(X, y)
curve = [float(np.mean(p != y)) for p in clf.staged_predict(X)]
out = {
    "source": "sklearn.datasets.load_breast_cancer, first 10 features; AdaBoostClassifier(DecisionTreeClassifier(max_depth=1))",
    "sklearn_alphas_over_two": [float(a) / 2 for a in clf.estimator_weights_[: len(curve)]],
    "train_error": curve,
    "y": [int(v) for v in y],
    "X": [[float(v) for v in row] for row in X],
}
path = pathlib.Path(__file__).resolve().parents[2] / "crates/boostlab/tests/golden/sklearn_adaboost_breast_cancer.json"
path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
print(f"wrote {path} ({len(curve)} rounds, final training error {curve[-1]:.4f})")
