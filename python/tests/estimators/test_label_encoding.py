"""The fast label encoding of `fit` gives exactly `np.unique(y, return_inverse=True)`'s classes and
indices, and the models it trains are those of the labels' codes."""

from __future__ import annotations

import numpy as np
import pytest

import boostlab
from boostlab._estimator import _encode_labels


def _reference(y):
    classes, idx = np.unique(y, return_inverse=True)
    return classes, idx.reshape(-1).astype(np.int64)


@pytest.mark.parametrize(
    "y",
    [
        np.array([3, 1, 3, 3, 1], dtype=np.int64),
        np.array([0, 0, 0], dtype=np.uint8),
        np.array([True, False, True]),
        np.array([-0.0, 0.0, 2.5, -0.0, 2.5]),
        np.array([7, -2, 5, 7, 5, -2, 11], dtype=np.int32),
        np.array([2.0, 1.0, 3.0, 1.0], dtype=np.float32),
        np.array(["b", "a", "b"]),
        np.array([], dtype=np.int64),
        np.array([2**63 + 5, 2**63 + 7, 2**63 + 5], dtype=np.uint64),
        np.array([0, 2**64 - 1, 0], dtype=np.uint64),
        np.array([-(2**63), -(2**63) + 3, 2**63 - 1], dtype=np.int64),
        np.array([-128, 127, -128], dtype=np.int8),
    ],
)
def test_label_encoding_equals_np_unique(y):
    classes, idx = _encode_labels(y)
    want_classes, want_idx = _reference(y)
    assert classes.dtype == want_classes.dtype
    np.testing.assert_array_equal(classes, want_classes)
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, want_idx)


def test_label_encoding_random_labels():
    rng = np.random.default_rng(18)
    for k in (1, 2, 3, 9):
        for dtype in (np.int64, np.int16, np.uint32, np.float64):
            y = (rng.integers(0, k, size=5000) * 3 + 1).astype(dtype)
            classes, idx = _encode_labels(y)
            want_classes, want_idx = _reference(y)
            np.testing.assert_array_equal(classes, want_classes)
            np.testing.assert_array_equal(idx, want_idx)


def test_labels_give_the_same_model_as_their_codes():
    # Labels {-1, 5} and their codes {0, 1}: the same trees and α (the encoding is the only
    # difference between the two fits).
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4)).astype(np.float32)
    y01 = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(np.int64)
    a = boostlab.RealAdaBoostClassifier(n_estimators=5, max_leaves=4).fit(X, y01)
    b = boostlab.RealAdaBoostClassifier(n_estimators=5, max_leaves=4).fit(X, np.where(y01 == 1, 5, -1))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(b.classes_, [-1, 5])
    np.testing.assert_array_equal(b.predict(X), np.where(a.predict(X) == 1, 5, -1))
