"""
t-AdaBoost: the temperature t
=============================

t-AdaBoost keeps its weights on a tempered exponential measure: t = 1 is AdaBoost, and t < 1
bounds how much weight any one example can take. Here the same 8-leaf trees are boosted at
several temperatures on data with 10 % of the training labels flipped, and the test error of the
linear and of the clipped model is drawn against t.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from boostlab import TAdaBoostClassifier

X, y = make_classification(n_samples=3_000, n_features=20, n_informative=6, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
rng = np.random.default_rng(0)
flip = rng.random(len(y_train)) < 0.1
y_noisy = np.where(flip, 1 - y_train, y_train)

temperatures = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0]
linear, clipped = [], []
for t in temperatures:
    params = dict(t=t, n_estimators=50, max_leaves=8)
    linear.append(1 - TAdaBoostClassifier(**params).fit(X_train, y_noisy).score(X_test, y_test))
    clipped.append(1 - TAdaBoostClassifier(clipped=True, **params).fit(X_train, y_noisy).score(X_test, y_test))
    print(f"t = {t:.1f}: test error {linear[-1]:.3f} (clipped {clipped[-1]:.3f})")

fig, ax = plt.subplots()
ax.plot(temperatures, linear, "o-", label="linear model")
ax.plot(temperatures, clipped, "s--", label="clipped model")
ax.set_xlabel("t")
ax.set_ylabel("test error")
ax.legend()
plt.show()

# %%
# ``t="auto"`` chooses t by cross-validation on the training rows, and keeps the grid's inner
# errors in ``t_selection_``.
auto = TAdaBoostClassifier(t="auto", n_estimators=50, max_leaves=8).fit(X_train, y_noisy)
print(auto.t_selection_)
