"""Multi-class through the Python path: boostlab's `AdaBoostMHClassifier` (real
AdaBoost.MH, 8 leaves) against LightGBM's `LGBMClassifier(objective="multiclass", num_leaves=8)`,
both `fit(X_float32, y)` on the same array, each fit in a fresh process; test accuracy on held-out
rows.

    python bench/multiclass_bench.py    # 7-class 500k × 54 and 26-class 20k × 16, 2 threads, 3 repeats
    python bench/multiclass_bench.py --sets letter --repeats 1 --no-write
    python bench/multiclass_bench.py --no-write --omp-passive
        # on a loaded machine: LightGBM's CPU time without spin-waits

The data are bench/harness.py's generators (make_classification, random_state=0; generated into
bench/out/ if absent): `covertype_like(500000)` (7 classes, 54 features) and `letter_like(20000)`
(26 classes, 16 features, the size of UCI letter). The interpreter needs boostlab (`maturin
develop --release`), numpy, scikit-learn and LightGBM. Writes bench/out/multiclass.json and the
section of docs/reference/benchmarks.md between the MULTICLASS markers.

One job: `python bench/multiclass_bench.py --job JSON` (used internally).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

from harness import (
    OUT,
    bandwidth,
    bandwidth_note,
    busy,
    covertype_like,
    cpu_s,
    fresh_json,
    interleaved,
    letter_like,
    letter_like_arrays,
    module_versions,
    paired_ratio,
    reset_peak,
    rss_kib,
    thread_env,
    write_doc_section,
)

BEGIN, END = "<!-- BEGIN MULTICLASS (bench/multiclass_bench.py) -->", "<!-- END MULTICLASS -->"
LIBS = [("boostlab Real AdaBoost.MH", "boostlab"), ("boostlab Real AdaBoost.MH, criterion=gini", "boostlab-gini"),
        ("LightGBM multiclass", "lightgbm")]


def make(lib, rounds, leaves, threads):
    if lib.startswith("boostlab"):
        import boostlab

        criterion = "gini" if lib == "boostlab-gini" else None
        return boostlab.AdaBoostMHClassifier(n_estimators=rounds, variant="real", max_leaves=leaves,
                                             criterion=criterion)
    import lightgbm as lgb

    return lgb.LGBMClassifier(objective="multiclass", n_estimators=rounds, num_leaves=leaves, max_bin=255,
                              n_jobs=threads, verbose=-1)


def job(spec):
    """One fit in this process: prints time, CPU, memory and test accuracy as JSON."""
    d = spec["d"]
    X = np.fromfile(spec["train_x"], dtype=np.float32).reshape(-1, d)
    y = np.fromfile(spec["train_y"], dtype=np.uint8).astype(np.int64)
    model = make(spec["lib"], spec["rounds"], spec["leaves"], spec["threads"])
    loaded, _ = rss_kib()
    reset_peak()
    t0, c0 = time.perf_counter(), cpu_s()
    model.fit(X, y)
    fit_s, fit_cpu_s = time.perf_counter() - t0, cpu_s() - c0
    _, peak = rss_kib()
    Xt = np.fromfile(spec["test_x"], dtype=np.float32).reshape(-1, d)
    yt = np.fromfile(spec["test_y"], dtype=np.uint8).astype(np.int64)
    acc = float(np.mean(model.predict(Xt) == yt))
    print(json.dumps({"fit_s": fit_s, "fit_cpu_s": fit_cpu_s, "over_loaded_mib": (peak - loaded) / 1024,
                      "accuracy": acc}))


def accuracy_job(spec):
    """Test accuracy of one library on the letter-sized data drawn with each generator seed (one
    process; the accuracy does not depend on the process): prints a JSON list, seed order."""
    accs = []
    for seed in spec["seeds"]:
        Xtr, ytr, Xte, yte = letter_like_arrays(spec["n"], seed)
        model = make(spec["lib"], spec["rounds"], spec["leaves"], spec["threads"])
        model.fit(Xtr, ytr)
        accs.append(float(np.mean(model.predict(Xte) == yte)))
    print(json.dumps(accs))


def seed_accuracies(a, env):
    """Each library's letter accuracy over the generator seeds, and the paired differences to
    LightGBM: one test split of 5,000 rows has a standard error of ≈ 0.65 points, so that "equal or
    better accuracy" is judged on the mean over seeds, not on one draw."""
    seeds = [int(v) for v in a.acc_seeds.split(",") if v != ""]
    out = {}
    for label, lib in LIBS:
        spec = {"lib": lib, "seeds": seeds, "n": 20_000, "rounds": a.rounds, "leaves": a.leaves,
                "threads": a.threads}
        out[label] = fresh_json([sys.executable, __file__, "--accuracy-job", json.dumps(spec)], env)
        print(f"letter seeds {seeds}: {label:42s} " + " ".join(f"{100 * v:.2f}" for v in out[label]), flush=True)
    return {"seeds": seeds, "accuracy": out}


def datasets(names):
    OUT.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        if name == "cov":
            out.append(covertype_like(500_000))
        elif name == "letter":
            out.append(letter_like(20_000))
        else:
            raise SystemExit(f"unknown data set {name} (cov, letter)")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--job", help=argparse.SUPPRESS)
    ap.add_argument("--sets", default="cov,letter", help="comma-separated: cov (7-class 500k), letter (26-class 20k)")
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--leaves", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--accuracy-job", help=argparse.SUPPRESS)
    ap.add_argument("--acc-seeds", default="0,1,2,3,4",
                    help="generator seeds of the letter-sized data whose test accuracies are averaged "
                         "(empty: skip)")
    ap.add_argument("--no-write", action="store_true", help="do not rewrite docs/reference/benchmarks.md")
    ap.add_argument("--omp-passive", action="store_true",
                    help="OMP_WAIT_POLICY=PASSIVE: LightGBM's idle threads sleep instead of spinning, so that its CPU "
                         "time counts work on a loaded machine (its wall time may suffer; not for idle runs)")
    a = ap.parse_args()
    if a.job:
        return job(json.loads(a.job))
    if a.accuracy_job:
        return accuracy_job(json.loads(a.accuracy_job))
    env = thread_env(a.threads)
    if a.omp_passive:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    loads = [os.getloadavg()[0]]
    results = []
    gbs = [bandwidth(a.threads)]
    for ds in datasets(a.sets.split(",")):
        # The repeats interleaved; the ratios are medians of the repeats' paired ratios.
        cmds = {}
        for label, lib in LIBS:
            spec = {"lib": lib, "rounds": a.rounds, "leaves": a.leaves, "threads": a.threads, "d": ds["d"],
                    "train_x": ds["train"]["x"], "train_y": ds["train"]["y"],
                    "test_x": ds["test"]["x"], "test_y": ds["test"]["y"]}
            cmds[label] = [sys.executable, __file__, "--job", json.dumps(spec)]
        runs = interleaved(cmds, a.repeats, env, loads)
        for label, lib in LIBS:
            rs = runs[label]
            r = {"data": ds["name"], "n": ds["N"], "d": ds["d"], "classes": ds["classes"], "config": label,
                 "library": lib, "fit_s_all": [x["fit_s"] for x in rs],
                 "fit_cpu_s_all": [x["fit_cpu_s"] for x in rs]}
            for key in ("fit_s", "fit_cpu_s", "over_loaded_mib", "accuracy"):
                r[key] = statistics.median(x[key] for x in rs)
            results.append(r)
            print(f"{ds['name']:14s} {label:26s} fit {r['fit_s']:7.2f} s (CPU {r['fit_cpu_s']:7.2f} s) "
                  f"acc {100 * r['accuracy']:.2f} %  {[round(v, 2) for v in r['fit_s_all']]}", flush=True)
    gbs.append(bandwidth(a.threads))
    seeds = seed_accuracies(a, env) if a.acc_seeds and "letter" in a.sets.split(",") else None
    meta = {"rounds": a.rounds, "leaves": a.leaves, "threads": a.threads, "repeats": a.repeats,
            "omp_passive": a.omp_passive,
            "load_average_1min": [round(v, 1) for v in loads], "machine": platform.machine(),
            "cpus": os.cpu_count(), "versions": versions(), "date": time.strftime("%Y-%m-%d %H:%M"),
            "bandwidth_gb_s": gbs}
    (OUT / "multiclass.json").write_text(json.dumps({"meta": meta, "results": results, "letter_seeds": seeds},
                                                   indent=1))
    text = report(results, meta, seeds)
    print(text)
    if not a.no_write:
        write_doc(text)


def versions():
    return module_versions("boostlab", "lightgbm", "numpy")


def report(results, meta, seeds=None):
    loaded = busy(meta["load_average_1min"], meta["threads"])
    lines = [
        f"Generated by `python bench/multiclass_bench.py` on {meta['date']}: {meta['rounds']} rounds, "
        f"{meta['leaves']} leaves, {meta['threads']} threads, each `fit(X_float32, y)` in a fresh process, "
        f"medians of {meta['repeats']} interleaved repeats (each runs every library once, in turn; a ratio is the "
        f"median of the repeats' ratios); accuracy on the held-out rows. Machine load (1-min average) during the "
        f"run: {min(meta['load_average_1min'])}–{max(meta['load_average_1min'])} on {meta['cpus']} CPUs"
        + (" — **measured under load**: wall times (and LightGBM's CPU time: OpenMP threads spin while they "
           "wait) are inflated; the CPU-time ratio is the steadier figure" if loaded else " (an idle machine)")
        + ("; OpenMP threads passive (`--omp-passive`)" if meta.get("omp_passive") else "")
        + "." + bandwidth_note(meta.get("bandwidth_gb_s"), meta["threads"])
        + " Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".",
        "",
        "| data | library | wall | CPU (user+sys) | RSS over data | test acc. | vs LightGBM (wall) "
        "| vs LightGBM (CPU) | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        peer = next((p for p in results if p["data"] == r["data"] and p["library"] == "lightgbm"), None)
        mine = r["library"].startswith("boostlab") and peer

        def ratio(k, r=r, peer=peer, mine=mine):
            return f"{paired_ratio(r, peer, k):.2f}×" if mine else ""

        lines.append(
            f"| {r['data']} ({r['n']:,} × {r['d']}, {r['classes']} classes) | {r['config']} | {r['fit_s']:.2f} s | "
            f"{r['fit_cpu_s']:.2f} s | +{r['over_loaded_mib']:.0f} MiB | {100 * r['accuracy']:.2f} % | "
            f"{ratio('fit_s')} | {ratio('fit_cpu_s')} | {'≤ 0.8× LightGBM at ≥ its accuracy' if mine else ''} |"
        )
    if seeds:
        peer = seeds["accuracy"]["LightGBM multiclass"]
        lines += ["", f"Letter-sized data drawn with generator seeds {', '.join(map(str, seeds['seeds']))} "
                  "(one fit each, same parameters): test accuracy, and the paired difference to LightGBM "
                  "(mean ± standard error over the seeds).", "",
                  "| library | accuracy per seed (%) | mean | − LightGBM |", "|---|---|---|---|"]
        for label, accs in seeds["accuracy"].items():
            diffs = [100 * (x - p) for x, p in zip(accs, peer)]
            se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0.0
            lines.append(f"| {label} | {' / '.join(f'{100 * v:.2f}' for v in accs)} | "
                         f"{100 * statistics.mean(accs):.2f} % | "
                         + ("" if label.startswith("LightGBM") else f"{statistics.mean(diffs):+.2f} ± {se:.2f} points")
                         + " |")
    return "\n".join(lines)


def write_doc(text):
    write_doc_section(BEGIN, END, text, heading="Multi-class, the Python path")


if __name__ == "__main__":
    main()
