"""SecBoost with a user-defined loss written in Python."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

import boostlab

from helpers import core_model


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    return X[:300], y[:300]


def test_user_logistic_gives_the_builtin_logistic_model(data):
    calls = []

    def logistic(z):
        calls.append((type(z), z.dtype, z.ndim, z.size))
        return np.logaddexp(0.0, -z)

    builtin = boostlab.SecBoostClassifier(n_estimators=15, max_leaves=4).fit(*data)
    user = boostlab.SecBoostClassifier(
        n_estimators=15, max_leaves=4, loss=logistic, loss_convex=True, loss_beta=0.25
    ).fit(*data)
    a, b = core_model(builtin), core_model(user)
    # The built-in logistic loss is computed without libm (within a few ulps of NumPy's) and its
    # weights by their closed form, a user's loss's weights as secants of its values over small
    # offsets: the models agree to 1e−9 of the values, with the same splits.
    assert len(a["trees"]) == len(b["trees"])
    for ta, tb in zip(a["trees"], b["trees"]):
        assert ta["nodes"] == tb["nodes"]
        assert ta["leaf_values"] == pytest.approx(tb["leaf_values"], rel=1e-9)
    assert a["alphas"] == pytest.approx(b["alphas"], rel=1e-9)
    # The built-in logistic loss computes the OBI in closed form, a user's loss by the
    # unimodal search: the records of the OBI (q̄, its maximum, the certified decrease) agree to
    # the search's precision, every other record to 1e−9.
    obi_keys = {"qbar", "max_obi", "certified_decrease"}
    assert len(a["history"]) == len(b["history"])
    for ra, rb in zip(a["history"], b["history"]):
        assert set(ra) == set(rb)
        for key in ra:
            if key in obi_keys:
                assert ra[key] == pytest.approx(rb[key], rel=1e-5, abs=1e-12), key
            else:
                assert ra[key] == pytest.approx(rb[key], rel=1e-9, abs=1e-15), key
    # The model file says which loss trained it.
    assert "custom_loss" not in a and b["custom_loss"]
    np.testing.assert_allclose(user.decision_function(data[0]), builtin.decision_function(data[0]), rtol=1e-9)
    # Vectorised: always a 1-d float64 numpy array; the per-round weights are one batch of all the
    # examples (the offset oracle's batches hold several points per example).
    assert {c[:3] for c in calls} == {(np.ndarray, np.dtype(np.float64), 1)}
    assert len(data[1]) in {c[3] for c in calls}


def test_a_non_convex_user_loss_trains(data):
    def clipped_logistic(z):
        return np.minimum(np.logaddexp(0.0, -z), np.log1p(np.exp(2.0)))

    est = boostlab.SecBoostClassifier(n_estimators=10, loss=clipped_logistic).fit(*data)
    builtin = boostlab.SecBoostClassifier(n_estimators=10, loss="clipped-logistic:q=-2").fit(*data)
    np.testing.assert_allclose(est.decision_function(data[0]), builtin.decision_function(data[0]), atol=1e-9)
    assert est.score(*data) > 0.85


def test_exceptions_from_the_loss_propagate(data):
    def broken(z):
        raise ZeroDivisionError("no loss today")

    with pytest.raises(ZeroDivisionError, match="no loss today"):
        boostlab.SecBoostClassifier(n_estimators=3, loss=broken).fit(*data)

    def scalar(z):
        return 1.0

    with pytest.raises(TypeError, match="same shape"):
        boostlab.SecBoostClassifier(n_estimators=3, loss=scalar).fit(*data)

    with pytest.raises(ValueError, match="beta"):
        boostlab.SecBoostClassifier(loss=np.exp, loss_beta=-1.0).fit(*data)


def test_user_loss_is_called_per_oracle_step_not_per_example(data):
    calls = []

    def logistic(z):
        calls.append(z.size)
        return np.logaddexp(0.0, -z)

    rounds = 10
    # The boosting rounds' calls alone (calibration's fold fits would add theirs).
    boostlab.SecBoostClassifier(
        n_estimators=rounds, max_leaves=4, loss=logistic, loss_convex=True, calibration=None
    ).fit(*data)
    # Bounded by the oracle's steps, not by the 300 examples.
    assert len(calls) / rounds < 60, len(calls)
