"""Callbacks: each round's record, and a callback that raises stops the fit with its exception."""

from __future__ import annotations

import numpy as np
import pytest

from boostlab import AdaBoostClassifier, RealAdaBoostClassifier


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] - X[:, 1] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return X, y


def test_callbacks_get_each_round_record():
    X, y = _data()
    seen = []
    clf = RealAdaBoostClassifier(n_estimators=7, max_leaves=4, callbacks=[seen.append]).fit(X, y)
    assert [r["round"] for r in seen] == list(range(1, 8))
    hist = clf.model_.history()
    assert seen == hist
    assert all(np.isfinite(r["alpha"]) for r in seen)
    # The same model as without callbacks.
    plain = RealAdaBoostClassifier(n_estimators=7, max_leaves=4).fit(X, y)
    assert clf.model_.to_json() == plain.model_.to_json()


def test_a_callback_that_raises_stops_the_fit_with_its_exception():
    X, y = _data()

    class Enough(Exception):
        pass

    calls = []

    def stop_at_3(r):
        calls.append(r["round"])
        if r["round"] == 3:
            raise Enough(f"stop at {r['round']}")

    clf = AdaBoostClassifier(n_estimators=5).fit(X, y)  # fitted before
    clf.set_params(n_estimators=50, callbacks=[stop_at_3])
    with pytest.raises(Enough, match="stop at 3"):
        clf.fit(X, y)
    assert calls == [1, 2, 3]
    assert not hasattr(clf, "model_")  # unfitted, not the earlier model
