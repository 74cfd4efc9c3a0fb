"""One peer measurement in its own process (so that peak RSS is its own): fit, test accuracy,
optionally prediction timing and the staged training-error curve. Prints one JSON object.

Called by bench/run.py with a JSON job as argv[1]; the thread count is set by the caller through
OMP_NUM_THREADS (scikit-learn's HistGradientBoosting) and the job's "threads" (n_jobs).
"""

import json
import sys
import time

import numpy as np

from harness import reset_peak, rss_kib  # bench/harness.py, shared by the benchmark scripts


def load(path, d):
    return np.fromfile(path, dtype=np.float32).reshape(-1, d)


def make_model(job):
    lib, wl, thr, rounds = job["lib"], job["workload"], job["threads"], job["rounds"]
    leaves = job["leaves"]
    if lib == "sklearn-adaboost":
        from sklearn.ensemble import AdaBoostClassifier
        from sklearn.tree import DecisionTreeClassifier

        return AdaBoostClassifier(estimator=DecisionTreeClassifier(max_depth=1), n_estimators=rounds)
    if lib == "lightgbm":
        import lightgbm as lgb

        kw = dict(n_estimators=rounds, num_leaves=leaves, max_bin=255, n_jobs=thr, verbose=-1)
        if wl == "multiclass":
            kw["objective"] = "multiclass"
        return lgb.LGBMClassifier(**kw)
    if lib == "xgboost":
        import xgboost as xgb

        kw = dict(n_estimators=rounds, tree_method="hist", max_bin=256, n_jobs=thr)
        if leaves == 2:
            kw.update(max_depth=1)
        else:
            kw.update(grow_policy="lossguide", max_leaves=leaves, max_depth=0)
        return xgb.XGBClassifier(**kw)
    if lib == "sklearn-hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(
            max_iter=rounds, max_leaf_nodes=leaves, max_bins=255, early_stopping=False
        )
    raise SystemExit(f"unknown peer {lib}")


def main():
    job = json.loads(sys.argv[1])
    d = job["d"]
    X = load(job["train_x"], d)
    y = np.fromfile(job["train_y"], dtype=np.uint8).astype(np.int64)
    model = make_model(job)
    rss_loaded, _ = rss_kib()
    reset_peak()
    t0 = time.perf_counter()
    model.fit(X, y)
    fit_s = time.perf_counter() - t0
    _, hwm_fit = rss_kib()
    # Rounds actually fitted (scikit-learn's AdaBoost stops early on a perfect or useless stump).
    rounds = job["rounds"]
    if job["lib"] == "sklearn-adaboost":
        rounds = len(model.estimators_)
    out = {
        "library": job["lib"],
        "threads": job["threads"],
        "n_train": int(X.shape[0]),
        "fit_s": fit_s,
        "rounds": rounds,
        "per_round_s": fit_s / max(rounds, 1),
        "rss_loaded_kib": rss_loaded,
        "peak_fit_kib": hwm_fit,
    }
    if job.get("curve"):
        out["train_error_curve"] = [float(np.mean(p != y)) for p in model.staged_predict(X)]
    Xt = load(job["test_x"], d)
    yt = np.fromfile(job["test_y"], dtype=np.uint8).astype(np.int64)
    out["accuracy"] = float(np.mean(model.predict(Xt) == yt))
    del X, y, Xt, yt
    if job.get("predict_x"):
        P = load(job["predict_x"], d)
        rss_before, _ = rss_kib()
        reset_peak()
        t0 = time.perf_counter()
        pred = model.predict(P)
        out["predict_s"] = time.perf_counter() - t0
        out["predict_rows"] = int(P.shape[0])
        out["predict_positive"] = int(np.sum(pred == 1))
        _, hwm = rss_kib()
        out["rss_predict_loaded_kib"] = rss_before
        out["peak_predict_kib"] = hwm
    print(json.dumps(out))


if __name__ == "__main__":
    main()
