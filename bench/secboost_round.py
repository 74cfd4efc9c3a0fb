"""The cost of a SecBoost round (logistic loss) against a Real AdaBoost round on the path users take:
the Python estimators' `fit` on a float32 numpy array, each fit in a fresh process.

    python bench/secboost_round.py                   # 1M × 28, 30 rounds, 2 threads, 5 repeats
    python bench/secboost_round.py --n 200000 --repeats 1 --no-write

A round's time is measured inside the fit, by a round callback: the median of the intervals between
consecutive rounds (the first round, which follows binning and set-up, left out). Every
configuration runs with the estimators' default shrinkage (`learning_rate` left unset) and without
shrinkage (`learning_rate=1.0`), with stumps and with 8 leaves; `calibration=None` (the trees alone).
The repeats run interleaved (every fit once per repeat, in turn) and a ratio is the median of the
repeats' ratios, so that a slow spell of the host falls on both boosters alike.

The interpreter must have boostlab (`maturin develop --release` or `pip install .`) and numpy. Data:
bench/out/synth{N}_train_X.f32 (bench/harness.py's `synthetic`, make_classification with
random_state=0; generating it needs scikit-learn). Writes the section of docs/reference/benchmarks.md
between the SECBOOST ROUND markers.

One job: `python bench/secboost_round.py --job JSON` (used internally).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

from harness import (
    bandwidth,
    bandwidth_note,
    interleaved,
    load_note,
    module_versions,
    synthetic,
    thread_env,
    write_doc_section,
)

BEGIN, END = "<!-- BEGIN SECBOOST ROUND (bench/secboost_round.py) -->", "<!-- END SECBOOST ROUND -->"
BOOSTERS = {"SecBoost (logistic)": "SecBoostClassifier", "Real AdaBoost": "RealAdaBoostClassifier"}
TARGET = 1.5


def job(spec):
    """One fit in this process: prints the median time between rounds (seconds) as JSON."""
    import boostlab

    X = np.fromfile(spec["x"], dtype=np.float32).reshape(-1, spec["d"])
    y = np.fromfile(spec["y"], dtype=np.uint8).astype(np.int64)
    stamps = []
    kw = {"n_estimators": spec["rounds"], "max_leaves": spec["leaves"], "calibration": None,
          "callbacks": [lambda _record: stamps.append(time.perf_counter())]}
    if spec["lr"] is not None:
        kw["learning_rate"] = spec["lr"]
    model = getattr(boostlab, spec["cls"])(**kw)
    model.fit(X, y)
    gaps = np.diff(stamps)[1:]
    print(json.dumps({"round_s": float(np.median(gaps)), "rounds": len(stamps),
                      "learning_rate": json.loads(model.model_.params_json).get("learning_rate", 1.0)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--job", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=1_000_000, help="training rows (bench/harness.py's synthetic data)")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-write", action="store_true", help="do not rewrite docs/reference/benchmarks.md")
    a = ap.parse_args()
    if a.job:
        return job(json.loads(a.job))
    train = synthetic(a.n)["train"]
    env = thread_env(a.threads)
    loads = [os.getloadavg()[0]]
    gbs = [bandwidth(a.threads)]
    settings = [(lr, leaves) for lr in (None, 1.0) for leaves in (2, 8)]
    cmds = {}
    for lr, leaves in settings:
        for label, cls in BOOSTERS.items():
            spec = {"x": train["x"], "y": train["y"], "d": 28, "cls": cls, "leaves": leaves, "lr": lr,
                    "rounds": a.rounds}
            cmds[(label, lr, leaves)] = [sys.executable, __file__, "--job", json.dumps(spec)]
    runs = interleaved(cmds, a.repeats, env, loads)
    gbs.append(bandwidth(a.threads))
    rows = []
    for lr, leaves in settings:
        sec, real = runs[("SecBoost (logistic)", lr, leaves)], runs[("Real AdaBoost", lr, leaves)]
        ratios = [s["round_s"] / r["round_s"] for s, r in zip(sec, real)]
        rows.append({"lr": sec[0]["learning_rate"], "default": lr is None, "leaves": leaves,
                     "sec_ms": 1e3 * statistics.median(s["round_s"] for s in sec),
                     "real_ms": 1e3 * statistics.median(r["round_s"] for r in real),
                     "ratio": statistics.median(ratios), "ratios": ratios})
    text = report(rows, a, loads, gbs)
    print(text)
    if not a.no_write:
        write_doc_section(BEGIN, END, text, heading="SecBoost's round on the Python path")


def report(rows, a, loads, gbs):
    versions = ", ".join(f"{k} {v}" for k, v in module_versions("boostlab", "numpy").items())
    lines = [
        f"`python bench/secboost_round.py`: make_classification {a.n:,} × 28 float32, {a.rounds} rounds, "
        f"{a.threads} threads, `SecBoostClassifier` and `RealAdaBoostClassifier` with `calibration=None`, each "
        f"`fit(X, y)` in a fresh process; a round's time is the median interval between rounds inside the fit "
        f"(a round callback's clock), the medians of {a.repeats} interleaved repeats, and the ratio the median of "
        f"the repeats' ratios. Machine load (1-min average): {min(loads):.1f}–{max(loads):.1f}"
        + load_note(loads, a.threads) + "." + bandwidth_note(gbs, a.threads) + f" Versions: {versions}.",
        "",
        "| learning_rate | leaves | SecBoost ms / round | Real AdaBoost ms / round | ratio (each repeat) | target |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lr = f"{r['lr']:g} (default)" if r["default"] else f"{r['lr']:g}"
        each = ", ".join(f"{x:.2f}" for x in r["ratios"])
        met = "met" if r["ratio"] <= TARGET else "**missed**"
        lines.append(f"| {lr} | {r['leaves']} | {r['sec_ms']:.1f} | {r['real_ms']:.1f} | **{r['ratio']:.2f}×** ({each}) "
                     f"| ≤ {TARGET}×: {met} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
