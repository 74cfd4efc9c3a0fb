"""n_jobs: any number of threads gives bit-identical models and predictions; bad values are refused."""

from __future__ import annotations

import numpy as np
import pytest

import boostlab

from helpers import ESTIMATOR_CASES, ESTIMATOR_IDS, small_estimator, task_data


@pytest.mark.parametrize("cls,kind,kw", ESTIMATOR_CASES, ids=ESTIMATOR_IDS)
def test_n_jobs_gives_bit_identical_models_and_predictions(cls, kind, kw):
    X, y = task_data(kind, n=600)
    X_val, y_val = task_data(kind, n=200, seed=8)
    out = []
    for n_jobs in (1, 2, 3, -1, None):
        est = small_estimator(cls, 12, learning_rate=0.7, n_jobs=n_jobs, n_iter_no_change=50, **kw)
        est.fit(X, y, eval_set=[(X_val, y_val)])
        staged = np.stack(list(est.staged_decision_function(X_val)))
        out.append((est.model_.to_json(), est.decision_function(X_val), staged))
    for m, d, s in out[1:]:
        assert m == out[0][0]
        np.testing.assert_array_equal(d, out[0][1])
        np.testing.assert_array_equal(s, out[0][2])


def test_bad_n_jobs_is_refused():
    X, y = task_data("binary")
    for bad in (0, 1.5, "all"):
        with pytest.raises(ValueError, match="n_jobs"):
            boostlab.AdaBoostClassifier(n_jobs=bad).fit(X, y)
