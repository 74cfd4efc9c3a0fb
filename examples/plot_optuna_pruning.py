"""
Tuning with Optuna, pruning unpromising trials
==============================================

A small Optuna study of Real AdaBoost's tree size and learning rate on the breast-cancer data.
:class:`boostlab.callbacks.OptunaPruningCallback` reports the validation error of every boosting
round to the trial, and Optuna's median pruner stops a trial whose error is worse than the
median of the earlier trials at the same round: ``fit`` then stops with ``optuna.TrialPruned``.
"""

import matplotlib.pyplot as plt
import optuna
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from boostlab import RealAdaBoostClassifier
from boostlab.callbacks import OptunaPruningCallback

optuna.logging.set_verbosity(optuna.logging.WARNING)

X, y = load_breast_cancer(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)


def objective(trial):
    clf = RealAdaBoostClassifier(
        n_estimators=150,
        max_leaves=trial.suggest_int("max_leaves", 2, 16),
        learning_rate=trial.suggest_float("learning_rate", 0.02, 1.0, log=True),
        callbacks=[OptunaPruningCallback(trial, metric="valid_metric")],
    )
    # The validation error of each round is `valid_metric` in the round's record.
    clf.fit(X_train, y_train, eval_set=[(X_valid, y_valid)])
    return float(clf.history_["valid_metric"].iloc[-1])


study = optuna.create_study(
    direction="minimize",
    sampler=optuna.samplers.TPESampler(seed=0),
    pruner=optuna.pruners.MedianPruner(n_startup_trials=4, n_warmup_steps=10),
)
study.optimize(objective, n_trials=24)

pruned = [t for t in study.trials if t.state == optuna.trial.TrialState.PRUNED]
complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
print(f"{len(complete)} trials complete, {len(pruned)} pruned")
print(f"best validation error {study.best_value:.4f} with {study.best_params}")

# %%
# Each trial's validation error, round by round: pruned trials stop early.
fig, ax = plt.subplots()
for t in study.trials:
    steps = sorted(t.intermediate_values)
    values = [t.intermediate_values[s] for s in steps]
    is_pruned = t.state == optuna.trial.TrialState.PRUNED
    ax.plot(steps, values, color="tab:red" if is_pruned else "tab:blue", alpha=0.5 if is_pruned else 0.8, lw=1)
ax.plot([], [], color="tab:blue", label="complete")
ax.plot([], [], color="tab:red", label="pruned")
ax.set_xlabel("round")
ax.set_ylabel("validation error")
ax.legend()
plt.show()
