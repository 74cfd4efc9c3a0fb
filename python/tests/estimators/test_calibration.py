"""Calibrated probabilities: `calibration="sigmoid"` (the default) against the papers' σ(2f)."""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.datasets import make_classification
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split

import boostlab

from helpers import core_model, model_dict

BINARY = [
    boostlab.AdaBoostClassifier,
    boostlab.RealAdaBoostClassifier,
    boostlab.TAdaBoostClassifier,
    boostlab.SecBoostClassifier,
]


def noisy(n=3000, seed=0):
    """A problem with 20 % flipped labels: deep trees overfit it, so σ(2f) is overconfident."""
    X, y = make_classification(n_samples=n, n_features=10, n_informative=5, flip_y=0.2, random_state=seed)
    return train_test_split(X, y, test_size=0.3, random_state=seed)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@pytest.mark.parametrize("cls", BINARY, ids=lambda c: c.__name__)
def test_the_default_is_calibrated_and_only_the_probabilities_change(cls):
    Xtr, Xte, ytr, _ = noisy(800)
    cal = cls(n_estimators=30, max_leaves=8).fit(Xtr, ytr)
    plain = cls(n_estimators=30, max_leaves=8, calibration=None).fit(Xtr, ytr)
    a = cal.probability_scale_
    assert plain.probability_scale_ == 2.0 and a != 2.0 and 0.0 < a < 50.0
    # The trees, scores and labels are those of the uncalibrated fit.
    f = cal.decision_function(Xte)
    np.testing.assert_array_equal(f, plain.decision_function(Xte))
    np.testing.assert_array_equal(cal.predict(Xte), plain.predict(Xte))
    np.testing.assert_allclose(cal.predict_proba(Xte)[:, 1], sigmoid(a * f), rtol=0, atol=1e-15)
    np.testing.assert_allclose(plain.predict_proba(Xte)[:, 1], sigmoid(2.0 * f), rtol=0, atol=1e-15)
    # predict is the arg-max of predict_proba.
    np.testing.assert_array_equal(cal.classes_[np.argmax(cal.predict_proba(Xte), axis=1)], cal.predict(Xte))
    assert core_model(cal)["params"]["calibration"] == {"method": "sigmoid", "folds": 3}
    assert core_model(plain)["params"]["calibration"]["method"] == "none"


def test_calibration_cuts_the_held_out_log_loss_of_an_overfit_model():
    Xtr, Xte, ytr, yte = noisy()
    kw = dict(n_estimators=200, max_leaves=8, learning_rate=1.0)
    cal = boostlab.RealAdaBoostClassifier(**kw).fit(Xtr, ytr)
    plain = boostlab.RealAdaBoostClassifier(**kw, calibration=None).fit(Xtr, ytr)
    before = log_loss(yte, np.clip(plain.predict_proba(Xte), 1e-15, 1 - 1e-15))
    after = log_loss(yte, cal.predict_proba(Xte))
    # σ(2f) of 200 deep Real AdaBoost rounds is saturated; the calibrated scale is not.
    assert np.mean(np.abs(plain.predict_proba(Xte)[:, 1] - 0.5) > 0.5 - 1e-3) > 0.5
    assert cal.probability_scale_ < 0.5
    assert after < 0.6 < 2 * 0.6 < before, (before, after)


def test_more_folds_and_another_seed_move_the_scale_a_little():
    Xtr, _, ytr, _ = noisy(1500)
    kw = dict(n_estimators=40, max_leaves=8)
    a3 = boostlab.RealAdaBoostClassifier(**kw).fit(Xtr, ytr).probability_scale_
    a5 = boostlab.RealAdaBoostClassifier(calibration_folds=5, **kw).fit(Xtr, ytr).probability_scale_
    a3b = boostlab.RealAdaBoostClassifier(random_state=1, **kw).fit(Xtr, ytr).probability_scale_
    assert a3 != a5 and a3 != a3b
    assert abs(a5 - a3) < 0.25 * a3 and abs(a3b - a3) < 0.25 * a3


def test_invalid_calibration_parameters_are_refused_by_name():
    X, y = make_classification(n_samples=60, random_state=0)
    with pytest.raises(ValueError, match="invalid parameter `calibration`: expected one of"):
        boostlab.RealAdaBoostClassifier(calibration="isotonic").fit(X, y)
    with pytest.raises(ValueError, match="invalid parameter `calibration_folds`: expected an integer ≥ 2"):
        boostlab.RealAdaBoostClassifier(calibration_folds=1).fit(X, y)


def test_a_class_too_small_to_cross_fit_warns_and_keeps_the_papers_link():
    X = np.arange(40, dtype=float).reshape(-1, 1)
    y = np.zeros(40, dtype=int)
    y[3] = 1
    with pytest.warns(UserWarning, match="predict_proba is not calibrated"):
        est = boostlab.RealAdaBoostClassifier(n_estimators=5, random_state=2).fit(X, y)
    assert est.probability_scale_ == 2.0
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], sigmoid(2 * est.decision_function(X)), atol=1e-15)


def test_the_cli_trains_the_same_calibrated_model_and_predicts_its_probabilities(cli, tmp_path):
    Xtr, Xte, ytr, _ = noisy(600)
    cols = [f"x{j}" for j in range(Xtr.shape[1])]
    train = pd.DataFrame(Xtr, columns=cols).assign(label=ytr)
    test = pd.DataFrame(Xte, columns=cols)
    train.to_csv(tmp_path / "train.csv", index=False, float_format="%.17g")
    test.to_csv(tmp_path / "test.csv", index=False, float_format="%.17g")
    back = pd.read_csv(tmp_path / "train.csv", float_precision="round_trip")
    for flags, kw in (([], {}), (["--calibration", "none"], {"calibration": None})):
        model = tmp_path / "m.json"
        run = [str(cli), "train", "--data", str(tmp_path / "train.csv"), "--label", "label", "--algo",
               "real-adaboost", "--max-leaves", "6", "--rounds", "20", *flags, "--model", str(model), "-q"]
        subprocess.run(run, check=True, capture_output=True)
        est = boostlab.RealAdaBoostClassifier(n_estimators=20, max_leaves=6, **kw).fit(back[cols], back["label"])
        assert model_dict(model.read_text()) == core_model(est)
        out = tmp_path / "p.csv"
        subprocess.run([str(cli), "predict", "--model", str(model), "--data", str(tmp_path / "test.csv"),
                        "--proba", "--output", str(out)], check=True, capture_output=True)
        p = pd.read_csv(out)["proba_1"].to_numpy()
        Xt = pd.read_csv(tmp_path / "test.csv", float_precision="round_trip")
        np.testing.assert_allclose(p, est.predict_proba(Xt)[:, 1], rtol=1e-12, atol=1e-15)
    info = subprocess.run([str(cli), "inspect", "--model", str(tmp_path / "m.json")], capture_output=True, text=True)
    assert "σ(2f) (calibration none)" in info.stdout


def test_a_model_file_keeps_the_scale_and_the_estimator_s_arguments(tmp_path):
    Xtr, Xte, ytr, _ = noisy(600)
    est = boostlab.TAdaBoostClassifier(n_estimators=10, max_leaves=4, calibration_folds=4).fit(Xtr, ytr)
    est.save_model(tmp_path / "m.json")
    back = boostlab.TAdaBoostClassifier.load_model(tmp_path / "m.json")
    assert back.probability_scale_ == est.probability_scale_
    np.testing.assert_array_equal(back.predict_proba(Xte), est.predict_proba(Xte))
    assert back.get_params()["calibration"] == "sigmoid" and back.get_params()["calibration_folds"] == 4
    plain = boostlab.TAdaBoostClassifier(n_estimators=10, calibration=None).fit(Xtr, ytr)
    plain.save_model(tmp_path / "p.json")
    assert boostlab.TAdaBoostClassifier.load_model(tmp_path / "p.json").get_params()["calibration"] is None


def test_reliability_diagram_plots_scikit_learn_s_calibration_curve():
    pytest.importorskip("matplotlib")
    Xtr, Xte, ytr, yte = noisy(1500)
    est = boostlab.RealAdaBoostClassifier(n_estimators=60, max_leaves=8).fit(Xtr, ytr)
    fig = est.plot_reliability(Xte, yte, n_bins=8)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3  # the diagonal, predict_proba, σ(2f)
    for line, p in ((lines[1], est.predict_proba(Xte)[:, 1]),
                    (lines[2], sigmoid(2 * est.decision_function(Xte)))):
        share, mean_p = calibration_curve(yte, p, n_bins=8, strategy="uniform")
        np.testing.assert_allclose(line.get_xdata(), mean_p, rtol=1e-12)
        np.testing.assert_allclose(line.get_ydata(), share, rtol=1e-12)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[1].startswith("predict_proba: log loss") and labels[2].startswith("σ(2f), uncalibrated")
    plain = boostlab.RealAdaBoostClassifier(n_estimators=60, max_leaves=8, calibration=None).fit(Xtr, ytr)
    assert len(plain.plot_reliability(Xte, yte).axes[0].get_lines()) == 2
    multi = boostlab.AdaBoostMHClassifier(n_estimators=3).fit(Xtr, np.arange(len(ytr)) % 3)
    with pytest.raises(ValueError, match="binary classifier"):
        multi.plot_reliability(Xte, yte)
