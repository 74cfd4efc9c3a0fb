"""Feature importances, TreeSHAP contributions and plots of every estimator."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import boostlab

from helpers import mixed_frame

FEATURES = ["a", "b", "c"]


ESTIMATORS = [
    ("adaboost", lambda: boostlab.AdaBoostClassifier(n_estimators=10, max_leaves=4), "label"),
    ("real", lambda: boostlab.RealAdaBoostClassifier(n_estimators=10, max_leaves=4), "label"),
    ("t", lambda: boostlab.TAdaBoostClassifier(n_estimators=10, t=0.6, max_leaves=4), "label"),
    ("secboost", lambda: boostlab.SecBoostClassifier(n_estimators=8, max_leaves=4, h0=0.2), "label"),
    ("mh", lambda: boostlab.AdaBoostMHClassifier(n_estimators=10, max_leaves=4), "label3"),
    ("mo", lambda: boostlab.AdaBoostMOClassifier(n_estimators=10, max_leaves=4), "label3"),
    ("mr", lambda: boostlab.AdaBoostMRClassifier(n_estimators=10, max_leaves=4), "label3"),
]


@pytest.fixture(scope="module")
def frame():
    return mixed_frame(240)


@pytest.fixture(scope="module", params=ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def fitted(request, frame):
    _, make, target = request.param
    est = make().fit(frame[FEATURES], frame[target])
    return est, frame[FEATURES], frame[target]


def _recount(est):
    """Split counts and gains per feature recounted from the model file's trees."""
    m = json.loads(est.model_.to_json())
    d = len(m["schema"]["names"])
    split, gain = np.zeros(d), np.zeros(d)
    for tree in m["trees"]:
        for i, node in enumerate(tree["nodes"]):
            if node["type"] == "split":
                split[node["feature"]] += 1
                gain[node["feature"]] += tree["gains"][i]
    return split / split.sum(), gain / gain.sum()


def test_feature_importances_match_a_recount(fitted):
    est, X, _ = fitted
    split, gain = _recount(est)
    assert est.feature_importances_.shape == (est.n_features_in_,)
    np.testing.assert_allclose(est.feature_importances_, gain, rtol=0, atol=1e-12)
    np.testing.assert_allclose(est.feature_importance("split"), split, rtol=0, atol=1e-12)
    assert abs(est.feature_importances_.sum() - 1) < 1e-12
    with pytest.raises(ValueError, match="importance_type"):
        est.feature_importance("cover")


def test_contributions_sum_to_the_raw_score(fitted):
    est, X, _ = fitted
    phi = est.predict_contrib(X)
    raw = est._raw_scores(X)
    k = raw.shape[1]
    if k == 1:
        assert phi.shape == (len(X), len(FEATURES) + 1)
        np.testing.assert_allclose(phi.sum(axis=1), est.decision_function(X), rtol=0, atol=1e-9)
    else:
        assert phi.shape == (len(X), len(FEATURES) + 1, k)
        np.testing.assert_allclose(phi.sum(axis=1), raw, rtol=0, atol=1e-9)
        if not isinstance(est, boostlab.AdaBoostMOClassifier):
            np.testing.assert_allclose(phi.sum(axis=1), est.decision_function(X), rtol=0, atol=1e-9)
    # The bias is the same for every row; rows with a missing value in `b` get contributions too.
    assert np.all(phi[:, -1] == phi[0, -1])
    assert np.isnan(X["b"]).any()


def test_secboost_bias_holds_the_base_score(frame):
    est = boostlab.SecBoostClassifier(n_estimators=1, max_leaves=2, h0=0.2).fit(frame[FEATURES], frame["label"])
    phi = est.predict_contrib(frame[FEATURES])
    m = json.loads(est.model_.to_json())
    tree, alpha = m["trees"][0], m["alphas"][0]
    covers = tree["covers"]
    leaves = [(i, n["leaf"]) for i, n in enumerate(tree["nodes"]) if n["type"] == "leaf"]
    expected = sum(covers[i] / covers[0] * tree["leaf_values"][leaf] for i, leaf in leaves)
    assert abs(phi[0, -1] - (0.2 + alpha * expected)) < 1e-12


def test_clipped_model_is_refused(frame):
    est = boostlab.TAdaBoostClassifier(n_estimators=5, t=0.5, clipped=True).fit(frame[FEATURES], frame["label"])
    with pytest.raises(ValueError, match="not additive"):
        est.predict_contrib(frame[FEATURES])


def test_cli_contributions_equal_python(tmp_path, frame, cli):
    est = boostlab.RealAdaBoostClassifier(n_estimators=10, max_leaves=4).fit(frame[FEATURES], frame["label"])
    model, data = tmp_path / "m.json", tmp_path / "d.csv"
    est.save_model(model)
    frame[FEATURES].to_csv(data, index=False)
    out = subprocess.run(
        [str(cli), "predict", "--model", str(model), "--data", str(data), "--contrib"],
        check=True, capture_output=True, text=True,
    ).stdout
    rows = np.array([[float(x) for x in line.split(",")] for line in out.splitlines()[1:]])
    assert out.splitlines()[0] == "a,b,c,bias"
    np.testing.assert_allclose(rows, est.predict_contrib(frame[FEATURES]), rtol=0, atol=1e-12)


def test_plots_return_figures_with_the_expected_series(fitted):
    import matplotlib  # noqa: F401  (installed by scripts/test.sh: the plots must be tested)

    est, X, y = fitted
    fig = est.plot_learning_curve()
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert labels and labels[0].startswith("train (")
    assert not any(label.startswith("valid") for label in labels)  # no validation curve recorded
    fig = est.plot_importance()
    bars = fig.axes[0].patches
    assert len(bars) == est.n_features_in_
    assert sorted(round(b.get_width(), 12) for b in bars) == sorted(np.round(est.feature_importances_, 12))


def test_margin_cdfs_equal_a_naive_computation(fitted):
    est, X, y = fitted
    T = est.model_.n_trees
    rounds = sorted({1, (T + 1) // 2, T})
    fig = est.plot_margins(X, y, rounds=rounds)
    lines = fig.axes[0].lines
    assert [line.get_label() for line in lines] == [f"round {r}" for r in rounds]
    staged = list(est.model_.staged_decision_function(list(est.model_.feature_names), est._columns(X)[1], False))
    norms = est.model_.margin_norms()
    yv = np.asarray(y)
    if isinstance(est, boostlab.AdaBoostMOClassifier):
        # Codewords: the sign of each code column's score on a pure example of the class is not
        # exposed; compare with the core's margins instead of recomputing the code.
        margins, _ = est.margins(X, y, rounds)
        for line, m in zip(lines, margins):
            np.testing.assert_array_equal(line.get_xdata()[1:-1], m)
        return
    for r, line in zip(rounds, lines):
        S = staged[r - 1]
        if S.shape[1] == 1:
            Y = np.where(yv == est.classes_[1], 1.0, -1.0)[:, None]
        else:
            Y = np.where(yv[:, None] == est.classes_[None, :], 1.0, -1.0)
        naive = np.sort((Y * S / norms[r - 1]).ravel())
        np.testing.assert_allclose(line.get_xdata()[1:-1], naive, rtol=0, atol=1e-12)
        n = naive.size
        # The CDF at each margin: the fraction of margins ≤ it (the step's upper value).
        np.testing.assert_allclose(line.get_ydata()[1:-1], np.arange(1, n + 1) / n)
        assert np.all(np.abs(naive) <= 1 + 1e-12)


def test_plots_without_matplotlib_raise_a_clear_import_error(fitted, monkeypatch):
    est, X, y = fitted
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"boostlab\[plot\]"):
        est.plot_importance()
