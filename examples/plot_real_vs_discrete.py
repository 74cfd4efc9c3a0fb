"""
Real AdaBoost against discrete AdaBoost
=======================================

On the classic problem of Hastie et al. (ten Gaussian features, the label given by a sphere),
confidence-rated leaves (Real AdaBoost) learn faster than sign leaves (discrete AdaBoost) on the
same stumps. ``staged_predict`` gives the test error after every round.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_hastie_10_2

from boostlab import AdaBoostClassifier, RealAdaBoostClassifier

X, y = make_hastie_10_2(n_samples=6_000, random_state=1)
X_train, y_train, X_test, y_test = X[:2_000], y[:2_000], X[2_000:], y[2_000:]

n_estimators = 300
models = {
    "discrete AdaBoost": AdaBoostClassifier(n_estimators=n_estimators),
    "Real AdaBoost": RealAdaBoostClassifier(n_estimators=n_estimators),
}

fig, ax = plt.subplots()
for name, clf in models.items():
    clf.fit(X_train, y_train)
    test_error = [np.mean(p != y_test) for p in clf.staged_predict(X_test)]
    ax.plot(np.arange(1, len(test_error) + 1), test_error, label=name)
    print(f"{name}: test error {test_error[-1]:.3f} after {len(test_error)} rounds")
ax.set_xlabel("round")
ax.set_ylabel("test error")
ax.legend()
plt.show()
