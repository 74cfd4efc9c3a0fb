"""
A first classifier
==================

Discrete AdaBoost on decision stumps, on scikit-learn's breast-cancer data: fit, score, and the
training and test error after every round.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from boostlab import AdaBoostClassifier

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)

clf = AdaBoostClassifier(n_estimators=200).fit(X_train, y_train)
print(f"test accuracy {clf.score(X_test, y_test):.3f}")

# %%
# ``history_`` holds every round's diagnostics; ``staged_predict`` gives the predictions of the
# first 1, 2, ... trees.
train_error = np.asarray(clf.history_["train_error"])
test_error = [np.mean(p != y_test) for p in clf.staged_predict(X_test)]

fig, ax = plt.subplots()
rounds = np.arange(1, len(test_error) + 1)
ax.plot(rounds, train_error[: len(rounds)], label="training error")
ax.plot(rounds, test_error, label="test error")
ax.set_xlabel("round")
ax.set_ylabel("error")
ax.legend()
plt.show()
