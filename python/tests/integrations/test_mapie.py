"""MAPIE's conformal classifiers over boostlab estimators trained on a pandas frame with a
categorical column. MAPIE checks a prefitted estimator by predicting one row of zeros (a numeric
array), which a model with categorical features reads as the level "0" of each (an unseen level,
so a missing value)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import boostlab

from helpers import mixed_frame, optional_module

mapie_classification = optional_module("mapie.classification")

FEATURES = ["a", "b", "c"]


def _frame(categorical: bool):
    f = mixed_frame(n=600, seed=3)
    if categorical:
        f["c"] = f["c"].astype("category")
    return f.iloc[:300], f.iloc[300:450], f.iloc[450:]


def _coverage(sets, y, classes):
    idx = np.searchsorted(classes, np.asarray(y))
    return float(np.mean(sets[np.arange(len(idx)), idx, 0]))


@pytest.mark.parametrize("categorical", [True, False], ids=["category-dtype", "string-column"])
@pytest.mark.parametrize("prefit", [False, True], ids=["fit-by-mapie", "prefit"])
def test_split_conformal_classifier_on_a_frame_with_a_categorical_column(categorical, prefit):
    train, calib, test = _frame(categorical)
    est = boostlab.AdaBoostMHClassifier(n_estimators=20, max_leaves=3)
    if prefit:
        est.fit(train[FEATURES], train["label3"])
    mapie = mapie_classification.SplitConformalClassifier(
        estimator=est, confidence_level=0.9, prefit=prefit, conformity_score="lac"
    )
    if not prefit:
        mapie.fit(train[FEATURES], train["label3"])
    # MAPIE's probe of the fitted estimator: one numeric row of zeros.
    with pytest.warns(UserWarning, match="valid feature names"):
        mapie.conformalize(calib[FEATURES], calib["label3"])
    pred, sets = mapie.predict_set(test[FEATURES])
    reference = clone(est).fit(train[FEATURES], train["label3"])
    # The point predictions are the boostlab model's.
    np.testing.assert_array_equal(pred, reference.predict(test[FEATURES]))
    assert sets.shape == (len(test), 3, 1)
    # Each set holds the predicted label at this confidence, and the sets cover about 90%.
    classes = reference.classes_
    assert sets[np.arange(len(test)), np.searchsorted(classes, pred), 0].all()
    assert _coverage(sets, test["label3"], classes) >= 0.8


def test_cross_conformal_classifier_on_a_frame_with_a_categorical_column():
    train, calib, test = _frame(True)
    both = pd.concat([train, calib])
    mapie = mapie_classification.CrossConformalClassifier(
        estimator=boostlab.AdaBoostMOClassifier(n_estimators=15), confidence_level=[0.8, 0.95], cv=3
    )
    mapie.fit_conformalize(both[FEATURES], both["label3"])
    pred, sets = mapie.predict_set(test[FEATURES])
    assert sets.shape == (len(test), 3, 2)
    # A higher confidence gives sets that contain the lower confidence's.
    assert np.all(sets[:, :, 0] <= sets[:, :, 1])
    classes = np.unique(both["label3"])
    assert _coverage(sets[:, :, 1:], test["label3"], classes) >= 0.85
    assert set(np.unique(pred)) <= set(classes)
