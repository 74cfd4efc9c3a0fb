"""Plots of a fitted estimator (matplotlib, an optional dependency): the learning curve, the feature
importances, the cumulative margin distributions and the reliability diagram."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted


class _PlottingMixin:
    """The plotting methods of the estimators."""

    def plot_learning_curve(self, ax=None):
        """The training curve (and the validation curve, when the history has one) per round,
        as a matplotlib figure (needs matplotlib: ``pip install boostlab[plot]``)."""
        check_is_fitted(self)
        fig, ax = _axes(ax)
        records = self.model_.history()
        rounds = [r["round"] for r in records]
        train = _training_curve(records)
        if train is not None:
            ax.plot(rounds, train[1], label=f"train ({train[0]})")
        valid = _validation_curve(records)
        if valid is not None:
            ax.plot(rounds, valid[1], "--", label=valid[0])
        ax.set_xlabel("round")
        ax.set_ylabel("error")
        ax.set_title("learning curve")
        ax.legend()
        return fig

    def plot_importance(self, importance_type="gain", max_features=20, ax=None):
        """Horizontal bars of the `max_features` largest importances (see
        `feature_importance`), as a matplotlib figure."""
        v = self.feature_importance(importance_type)
        names = list(self.model_.feature_names)
        order = sorted(range(len(v)), key=lambda j: (-v[j], j))[:max_features]
        fig, ax = _axes(ax)
        ax.barh([names[j] for j in reversed(order)], [v[j] for j in reversed(order)])
        ax.set_xlabel(f"importance ({importance_type})")
        ax.set_title("feature importance")
        return fig

    def plot_margins(self, X, y, rounds=None, ax=None):
        """Cumulative distributions of the normalised margins (see `margins`) after each round
        of `rounds`, as a matplotlib figure: one step curve per round, the fraction of margins
        ≤ θ against θ ∈ [−1, 1]."""
        margins, rounds = self.margins(X, y, rounds)
        fig, ax = _axes(ax)
        for r, m in zip(rounds, margins):
            ax.step(np.r_[-1.0, m, 1.0], np.r_[0.0, np.arange(1, m.size + 1) / max(m.size, 1), 1.0],
                    where="post", label=f"round {r}")
        ax.set_xlim(-1, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("margin y·f(x)/N")
        ax.set_ylabel("fraction of margins ≤ θ")
        ax.set_title("cumulative margin distribution")
        ax.legend(loc="upper left")
        return fig

    def plot_reliability(self, X, y, n_bins=10, ax=None):
        """Reliability diagram of a binary estimator on data it did not train on, as a matplotlib
        figure: per equal-width bin of the predicted probability of ``classes_[1]``, the share of
        rows of that class against the bin's mean probability, for ``predict_proba`` and (when the
        estimator is calibrated) for the papers' uncalibrated link σ(2f); the legend gives each
        curve's log loss and Brier score (docs/explanation/probabilities.md). The points, the log
        loss and the Brier score are scikit-learn's (``calibration_curve(..., strategy="uniform")``,
        ``log_loss``, ``brier_score_loss``)."""
        from sklearn.calibration import calibration_curve
        from sklearn.metrics import brier_score_loss, log_loss

        check_is_fitted(self)
        if len(self.classes_) != 2 or self.model_.task != "binary":
            raise ValueError("plot_reliability needs a binary classifier")
        positive = (np.asarray(y) == self.classes_[1]).astype(np.int64)
        curves = [("predict_proba", self.predict_proba(X)[:, 1])]
        if self.model_.probability_scale != 2.0:
            f = self.decision_function(X)
            curves.append(("σ(2f), uncalibrated", 1.0 / (1.0 + np.exp(-2.0 * f))))
        fig, ax = _axes(ax)
        ax.plot([0, 1], [0, 1], ":", color="grey", label="perfectly calibrated")
        for name, p in curves:
            share, mean_p = calibration_curve(positive, p, n_bins=n_bins, strategy="uniform")
            loss = log_loss(positive, p, labels=[0, 1])
            brier = brier_score_loss(positive, p, pos_label=1)
            ax.plot(mean_p, share, "o-", label=f"{name}: log loss {loss:.4f}, Brier {brier:.4f}")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(f"mean predicted P({self.classes_[1]!r})")
        ax.set_ylabel(f"share of {self.classes_[1]!r}")
        ax.set_title("reliability diagram")
        ax.legend(loc="upper left")
        return fig


def _axes(ax):
    """A new figure and axes (or `ax`'s), or a clear ImportError without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            "plotting needs matplotlib, an optional dependency: pip install 'boostlab[plot]' "
            "(or pip install matplotlib)"
        ) from e
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=(7, 4.5))
    return fig, fig.add_subplot()


def _training_curve(records):
    """(name, values) of the history's training curve: the first of `train_error`,
    `one_error`, `hamming_loss`, `ranking_loss` it has."""
    for key in ("train_error", "one_error", "hamming_loss", "ranking_loss"):
        if any(key in r for r in records):
            return key, [r.get(key, np.nan) for r in records]
    return None


def _validation_curve(records):
    """(name, values) of the history's validation curve, if the records have one: the first
    diagnostic whose name starts with `valid`. The one place that knows the record's key."""
    for r in records:
        for key in r:
            if key.startswith("valid"):
                return key, [q.get(key, np.nan) for q in records]
    return None
