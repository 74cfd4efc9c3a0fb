"""
SecBoost with a loss of your own
================================

SecBoost boosts any loss of the edge z = y·H(x) from its values alone — no derivative. Here a
non-convex loss, the square loss capped at 4 (flat beyond z = −1, so badly misclassified examples
stop pulling), written as a numpy function, against the built-in logistic loss, with 20 % of the
training labels flipped.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from boostlab import SecBoostClassifier


def capped_square(z):
    return np.minimum((1.0 - z) ** 2, 4.0)


X, y = make_classification(n_samples=2_000, n_features=10, n_informative=5, random_state=3)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=3)
rng = np.random.default_rng(3)
y_noisy = np.where(rng.random(len(y_train)) < 0.2, 1 - y_train, y_train)

fig, ax = plt.subplots()
for name, loss in [("logistic", "logistic"), ("capped square", capped_square)]:
    clf = SecBoostClassifier(loss=loss, n_estimators=40, max_leaves=4).fit(X_train, y_noisy)
    test_error = [np.mean(p != y_test) for p in clf.staged_predict(X_test)]
    ax.plot(np.arange(1, len(test_error) + 1), test_error, label=name)
    print(f"{name}: test error {test_error[-1]:.3f} after {len(test_error)} rounds")
ax.set_xlabel("round")
ax.set_ylabel("test error")
ax.legend()
plt.show()
