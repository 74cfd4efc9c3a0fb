"""learning_rate: it scales every vote (the first exactly), and bad values are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

import boostlab

from helpers import ESTIMATOR_CASES, ESTIMATOR_IDS, small_estimator, task_data


@pytest.mark.parametrize("cls,kind,kw", ESTIMATOR_CASES, ids=ESTIMATOR_IDS)
def test_learning_rate_scales_the_first_vote(cls, kind, kw):
    X, y = task_data(kind)
    full = small_estimator(cls, 3, learning_rate=1.0, **kw).fit(X, y)
    shrunk = small_estimator(cls, 3, learning_rate=0.25, **kw).fit(X, y)
    a, b = full.estimator_weights_, shrunk.estimator_weights_
    assert b[0] == pytest.approx(0.25 * a[0], rel=1e-12)
    assert not np.array_equal(a[1:], b[1:])
    assert json.loads(shrunk.model_.params_json)["learning_rate"] == 0.25


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, float("nan"), "fast"])
def test_bad_learning_rate_is_refused(bad):
    X, y = task_data("binary")
    with pytest.raises(ValueError, match="learning_rate"):
        boostlab.AdaBoostClassifier(learning_rate=bad).fit(X, y)
