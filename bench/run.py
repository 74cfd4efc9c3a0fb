"""Side-by-side benchmark of boostlab against scikit-learn, LightGBM and XGBoost.

Run through `bash bench/run.sh [options]` (which creates bench/.venv with the peers and builds
the boostlab side in release); see bench/README.md. Every measurement runs in its own process:
boostlab through `target/release/boostlab-bench`, each peer through bench/peer.py. Data are
bench/harness.py's, generated into bench/out (git-ignored) as raw float32 row-major matrices and
uint8 labels.
Results: bench/out/results.json, docs/reference/benchmarks.md (the part between the GENERATED markers)
and docs/figures/bench_time_vs_n.svg.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from harness import (
    DOC,
    OUT,
    ROOT,
    adult,
    covertype_like,
    fmt_n,
    package_versions,
    predict_matrix,
    synthetic,
    thread_env,
    write_doc_section,
)

BIN = ROOT / "target" / "release" / "boostlab-bench"
SVG = ROOT / "docs" / "figures" / "bench_time_vs_n.svg"
BEGIN, END = "<!-- BEGIN GENERATED (bench/run.py) -->", "<!-- END GENERATED -->"
ROUNDS = 200


# ------------------------------------------------------------------------------------- workloads
# (label, runner, algorithm or peer, leaves)
BOOSTLAB = {
    "stumps": [("boostlab AdaBoost", "adaboost", 2)],
    "trees8": [("boostlab Real AdaBoost", "real-adaboost", 8), ("boostlab t-AdaBoost (t=0.8)", "t-adaboost", 8)],
    "multiclass": [("boostlab Real AdaBoost.MH", "real-adaboost-mh", 8)],
}
PEERS = {
    "stumps": [("scikit-learn AdaBoost", "sklearn-adaboost", 2), ("LightGBM", "lightgbm", 2), ("XGBoost", "xgboost", 2)],
    "trees8": [("LightGBM", "lightgbm", 8), ("XGBoost", "xgboost", 8), ("scikit-learn HGB", "sklearn-hgb", 8)],
    "multiclass": [("LightGBM", "lightgbm", 8)],
}
TITLES = {
    "stumps": "Workload 1: stumps (discrete AdaBoost vs scikit-learn AdaBoost, LightGBM num_leaves=2, XGBoost max_depth=1)",
    "trees8": "Workload 2: 8-leaf best-first trees",
    "predict": "Workload 3: prediction of 1M rows with the 200-round models of workload 2",
    "multiclass": "Workload 4: multi-class (7 classes), 8-leaf trees",
}


def run_job(cmd, env_threads, timeout=3600):
    r = subprocess.run(cmd, capture_output=True, text=True, env=thread_env(env_threads), timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}...: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def boostlab_job(ds, algo, leaves, threads, rounds, curve=False, predict=None, model_out=None):
    cmd = [
        str(BIN), "fit", "--train-x", ds["train"]["x"], "--train-y", ds["train"]["y"], "--d", str(ds["d"]),
        "--test-x", ds["test"]["x"], "--test-y", ds["test"]["y"], "--classes", str(ds["classes"]),
        "--algorithm", algo, "--rounds", str(rounds), "--leaves", str(leaves), "--t", "0.8",
    ]
    if algo == "adaboost":
        cmd += ["--criterion", "gini"]  # scikit-learn's stumps split on Gini
    if curve:
        cmd.append("--curve")
    if predict:
        cmd += ["--predict-x", predict]
    if model_out:
        cmd += ["--model-out", str(model_out)]
    return run_job(cmd, threads)


def peer_job(ds, lib, workload, leaves, threads, rounds, curve=False, predict=None):
    job = {
        "lib": lib, "workload": workload, "leaves": leaves, "threads": threads, "rounds": rounds, "d": ds["d"],
        "train_x": ds["train"]["x"], "train_y": ds["train"]["y"], "test_x": ds["test"]["x"], "test_y": ds["test"]["y"],
        "curve": curve, "predict_x": predict,
    }
    return run_job([sys.executable, str(ROOT / "bench" / "peer.py"), json.dumps(job)], threads)


def median_of(runs):
    keys = ["fit_s", "per_round_s", "peak_fit_kib", "rss_loaded_kib", "accuracy", "predict_s", "peak_predict_kib",
            "rss_predict_loaded_kib"]
    out = dict(runs[0])
    for k in keys:
        vals = [r[k] for r in runs if k in r]
        if vals:
            out[k] = statistics.median(vals)
    out["runs"] = len(runs)
    out["fit_s_all"] = [r["fit_s"] for r in runs]
    return out


# ------------------------------------------------------------------------------------ reporting
def mib(kib):
    return f"{kib / 1024:.0f}"


def table(res, workload, ds_key, threads):
    rows = [r for r in res["results"] if r["workload"] == workload and r["ds"] == ds_key and r["threads"] == threads]
    if not rows:
        return ""
    ours = [r for r in rows if r["lib"].startswith("boostlab")]
    peers = [r for r in rows if not r["lib"].startswith("boostlab")]
    head = "| library | fit (s) | rounds | per round (ms) | peak RSS fit (MiB) | RSS data loaded (MiB) | test acc. (%) |"
    sep = "|---|---:|---:|---:|---:|---:|---:|"
    for o in ours:
        head += f" {o['label'].replace('boostlab ', '')} / this |"
        sep += "---:|"
    lines = [head, sep]
    for r in rows:
        extr = " *" if r.get("extrapolated") else ""
        line = (
            f"| {r['label']} | {r['fit_s']:.2f}{extr} | {r['rounds']} | {1000 * r['per_round_s']:.2f} | {mib(r['peak_fit_kib'])} | "
            f"{mib(r['rss_loaded_kib'])} | {100 * r['accuracy']:.2f} |"
        )
        for o in ours:
            line += f" {o['fit_s'] / r['fit_s']:.2f} |" if r in peers else " |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def predict_table(res, threads):
    rows = [r for r in res["results"] if r["workload"] == "trees8" and r["threads"] == threads and "predict_s" in r]
    if not rows:
        return ""
    ours = [r for r in rows if r["lib"].startswith("boostlab")]
    head = "| library (model trained on) | predict 1M rows (s) | rows/s (M) | peak RSS predict (MiB) | RSS before (MiB) |"
    sep = "|---|---:|---:|---:|---:|"
    for o in ours:
        head += f" {o['label'].replace('boostlab ', '')} time / this |"
        sep += "---:|"
    lines = [head, sep]
    for r in rows:
        line = (
            f"| {r['label']} ({r['ds_name']}) | {r['predict_s']:.3f} | {r['predict_rows'] / r['predict_s'] / 1e6:.2f} | "
            f"{mib(r['peak_predict_kib'])} | {mib(r['rss_predict_loaded_kib'])} |"
        )
        for o in ours:
            line += f" {o['predict_s'] / r['predict_s']:.2f} |" if not r["lib"].startswith("boostlab") else " |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def svg_plot(res, path):
    """Log-log fit time vs N for workloads 1 and 2 at the highest thread count (hand-written SVG)."""
    thr = max(r["threads"] for r in res["results"])
    series = {}
    for r in res["results"]:
        if r["threads"] == thr and r["ds"].startswith("synth") and r["workload"] in ("stumps", "trees8"):
            key = f"{'W1' if r['workload'] == 'stumps' else 'W2'} {r['label']}"
            series.setdefault(key, []).append((r["N"], r["fit_s"]))
    if not series:
        return
    W, H, L, R, T, B = 900, 520, 70, 330, 30, 50
    xs = [p[0] for s in series.values() for p in s]
    ys = [p[1] for s in series.values() for p in s]
    lx0, lx1 = np.log10(min(xs)) - 0.1, np.log10(max(xs)) + 0.1
    ly0, ly1 = np.floor(np.log10(min(ys))), np.ceil(np.log10(max(ys)))

    def px(x):
        return L + (np.log10(x) - lx0) / (lx1 - lx0) * (W - L - R)

    def py(y):
        return H - B - (np.log10(y) - ly0) / (ly1 - ly0) * (H - T - B)

    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    for e in range(int(ly0), int(ly1) + 1):
        y = py(10.0 ** e)
        out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 8}" y="{y + 4:.1f}" text-anchor="end">{10.0 ** e:g} s</text>')
    for n in sorted(set(xs)):
        x = px(n)
        out.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{H - B + 18}" text-anchor="middle">{fmt_n(n)}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 10}" text-anchor="middle">training rows N (28 features, 200 rounds, {thr} threads)</text>')
    out.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="black"/>')
    for i, (name, pts) in enumerate(sorted(series.items())):
        pts = sorted(pts)
        c = colors[i % len(colors)]
        dash = ' stroke-dasharray="6,4"' if name.startswith("W1") else ""
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        ly = T + 14 + 18 * i
        out.append(f'<line x1="{W - R + 15}" y1="{ly - 4}" x2="{W - R + 45}" y2="{ly - 4}" stroke="{c}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{W - R + 52}" y="{ly}">{name}</text>')
    out.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")


def write_doc(res):
    m = res["meta"]
    s = ["",
         f"Generated by `{m['command']}` on {m['date']} ({m['machine']}; {m['cpus']} logical CPUs shared with other "
         f"jobs, so times are noisy). Versions: {m['versions']}. {ROUNDS} rounds everywhere; times are medians of "
         f"{m['repeats']} runs (each in a fresh process).", ""]
    bw = res.get("bandwidth", {})
    if bw:
        s.append("Memory-read bandwidth (parallel streaming sum of 512 MiB): "
                 + ", ".join(f"{t} thread(s): {v:.1f} GB/s" for t, v in sorted(bw.items())) + ".\n")
    fl = res.get("floor")
    if fl:
        s.append(f"**Bandwidth floor, workload 2 at {fmt_n(fl['N'])} rows, {fl['threads']} threads**: one pass over the "
                 f"bins and the statistics touches {fl['bytes'] / 1e6:.0f} MB per round "
                 f"({fl['N']} × ({fl['d']} B of u8 bins + 8 B of signed f64 statistics)); at {fl['bw']:.1f} GB/s that takes "
                 f"{1000 * fl['floor_s']:.2f} ms. boostlab's per-round time: Real AdaBoost "
                 f"{1000 * fl['real_s']:.2f} ms ({fl['real_s'] / fl['floor_s']:.1f}× the floor), t-AdaBoost "
                 f"{1000 * fl['t_s']:.2f} ms ({fl['t_s'] / fl['floor_s']:.1f}× the floor).\n")
    det = res.get("determinism")
    if det:
        s.append("Determinism: boostlab's workload-2 models trained with 1 and 2 threads are "
                 + ("**bit-identical** (model JSON compared byte for byte): " if all(det.values()) else "**NOT identical**: ")
                 + ", ".join(f"{k}: {'identical' if v else 'DIFFERENT'}" for k, v in det.items()) + ".\n")
    for wl in ("stumps", "trees8", "multiclass"):
        keys = []
        for r in res["results"]:
            if r["workload"] == wl and (r["ds"], r["ds_name"], r["N"]) not in keys:
                keys.append((r["ds"], r["ds_name"], r["N"]))
        if not keys:
            continue
        s.append(f"### {TITLES[wl]}\n")
        for thr in sorted({r["threads"] for r in res["results"]}, reverse=True):
            for ds, name, n in sorted(keys, key=lambda k: (k[0].startswith("synth") is False, k[2])):
                t = table(res, wl, ds, thr)
                if t:
                    s.append(f"**{name}** ({n} training rows), {thr} thread(s):\n\n{t}")
        if wl == "stumps":
            curves = res.get("curves", {})
            if curves:
                s.append("Staged training error, boostlab (Gini stumps, 255 bins) vs scikit-learn's AdaBoost (exact "
                         "thresholds): " + "; ".join(f"{k}: max |Δ| = {v['max_abs_diff']:.4f} over {v['rounds']} rounds, "
                                                       f"final {v['boostlab_final']:.4f} vs {v['sklearn_final']:.4f}"
                                                       for k, v in curves.items()) + ".\n")
            if any(r.get("extrapolated") for r in res["results"]):
                s.append("\\* scikit-learn's AdaBoost at this size was run for fewer rounds (it is single-threaded and "
                         "its per-round time is constant for stumps); the fit time shown is per-round × 200.\n")
        if wl == "trees8":
            s.append(f"### {TITLES['predict']}\n")
            for thr in sorted({r["threads"] for r in res["results"]}, reverse=True):
                t = predict_table(res, thr)
                if t:
                    s.append(f"{thr} thread(s):\n\n{t}")
    s.append("![fit time vs N](../figures/bench_time_vs_n.svg)\n")
    write_doc_section(BEGIN, END, "\n".join(s))


# ------------------------------------------------------------------------------------------ main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="sizes 10k and 100k only, 7-class data at 50k")
    ap.add_argument("--sizes", default="10000,100000,1000000", help="synthetic training sizes (comma-separated)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per measurement (median reported)")
    ap.add_argument("--threads", default="2,1", help="thread counts (comma-separated)")
    ap.add_argument("--workloads", default="stumps,trees8,multiclass", help="subset of stumps,trees8,multiclass")
    ap.add_argument("--libs", default="", help="only these runners (e.g. boostlab,lightgbm); default all")
    ap.add_argument("--multiclass-n", type=int, default=200_000, help="training rows of the 7-class data")
    ap.add_argument("--no-adult", action="store_true")
    ap.add_argument("--slow-rounds", type=int, default=20,
                    help="rounds of scikit-learn's AdaBoost at >= 1M rows (time extrapolated to 200)")
    ap.add_argument("--curve-max-n", type=int, default=100_000, help="compare training-error curves up to this N")
    ap.add_argument("--no-write", action="store_true", help="do not rewrite docs/reference/benchmarks.md and the SVG")
    ap.add_argument("--report-only", action="store_true",
                    help="only rewrite docs/reference/benchmarks.md and the SVG from bench/out/results.json")
    ap.add_argument("--append", action="store_true",
                    help="add to bench/out/results.json (e.g. a second run with other --threads/--libs)")
    a = ap.parse_args()
    if a.report_only:
        res = json.loads((OUT / "results.json").read_text())
        res["bandwidth"] = {int(k): v for k, v in res.get("bandwidth", {}).items()}
        write_doc(res)
        svg_plot(res, SVG)
        return
    sizes = [10_000, 100_000] if a.quick else [int(x) for x in a.sizes.split(",") if x]
    mc_n = 50_000 if a.quick else a.multiclass_n
    threads = [int(x) for x in a.threads.split(",")]
    workloads = a.workloads.split(",")
    libs = set(a.libs.split(",")) if a.libs else None
    OUT.mkdir(parents=True, exist_ok=True)
    if not BIN.exists():
        sys.exit(f"{BIN} is missing: run `cargo build --release -p boostlab-bench` (bench/run.sh does)")

    t_start = time.time()
    print("generating data ...", flush=True)
    binary_sets = [synthetic(n) for n in sizes]
    if not a.no_adult:
        ad = adult()
        if ad:
            binary_sets.append(ad)
    mc_sets = [covertype_like(mc_n)] if "multiclass" in workloads else []
    pred = predict_matrix()["x"] if "trees8" in workloads else None
    largest = max(sizes) if sizes else 0

    versions = package_versions("scikit-learn", "lightgbm", "xgboost", "numpy")
    res = {"meta": {"command": "bash bench/run.sh " + " ".join(sys.argv[1:]), "date": time.strftime("%Y-%m-%d %H:%M"),
                    "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                    "versions": versions, "repeats": a.repeats}, "results": [], "curves": {}}

    prev = json.loads((OUT / "results.json").read_text()) if a.append and (OUT / "results.json").exists() else None
    if prev:
        res["results"] = prev["results"]
        res["meta"]["command"] = prev["meta"]["command"] + "` + `" + res["meta"]["command"]
    bw = {int(k): v for k, v in prev.get("bandwidth", {}).items()} if prev else {}
    for thr in threads:
        bw[thr] = run_job([str(BIN), "bandwidth"], thr)["gb_per_s"]
    res["bandwidth"] = bw
    print("bandwidth GB/s:", bw, flush=True)

    models = {}
    for wl in workloads:
        sets = mc_sets if wl == "multiclass" else binary_sets
        for ds in sets:
            for thr in threads:
                runners = [("boostlab", *b) for b in BOOSTLAB[wl]] + [("peer", *p) for p in PEERS[wl]]
                for kind, label, what, leaves in runners:
                    if libs and ("boostlab" if kind == "boostlab" else what) not in libs:
                        continue
                    slow = what == "sklearn-adaboost" and ds["N"] >= 100_000
                    few = what == "sklearn-adaboost" and ds["N"] >= 1_000_000
                    if what == "sklearn-adaboost" and thr != threads[0]:
                        # Single-threaded library: measured once, shown for every thread count.
                        prev = [r for r in res["results"] if r["lib"] == what and r["ds"] == ds["key"]]
                        if prev:
                            res["results"].append(dict(prev[0], threads=thr))
                            continue
                    rounds = a.slow_rounds if few else ROUNDS
                    curve = (wl == "stumps" and ds["N"] <= a.curve_max_n and thr == threads[0]
                             and what in ("adaboost", "sklearn-adaboost"))
                    predict = pred if (wl == "trees8" and ds["key"] == f"synth{largest}") else None
                    runs = []
                    for rep in range(1 if slow else a.repeats):
                        c = curve and rep == 0
                        try:
                            r = None
                            if kind == "boostlab":
                                mo = OUT / f"model_{what}_{ds['key']}_{thr}.json" if (wl == "trees8" and rep == 0) else None
                                r = boostlab_job(ds, what, leaves, thr, rounds, c, predict, mo)
                                if mo:
                                    models.setdefault((what, ds["key"]), {})[thr] = mo
                            else:
                                r = peer_job(ds, what, wl, leaves, thr, rounds, c, predict)
                        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
                            print(f"  FAILED {wl} {ds['name']} {thr}t {label}: {str(e)[-300:]}", flush=True)
                            continue
                        runs.append(r)
                        print(f"  {wl:10s} {ds['name']:14s} {thr}t {label:28s} fit {r['fit_s']:8.3f}s "
                              f"acc {r.get('accuracy', 0):.4f} peak {r['peak_fit_kib'] / 1024:7.0f} MiB"
                              + (f" predict {r['predict_s']:.3f}s" if 'predict_s' in r else ""), flush=True)
                    if not runs:
                        continue
                    m = median_of(runs)
                    curve_data = m.pop("train_error_curve", None) or runs[0].get("train_error_curve")
                    for r in runs:
                        r.pop("train_error_curve", None)
                    m.pop("train_error_curve", None)
                    if few:
                        m["extrapolated"] = True
                        m["fit_s"] = m["per_round_s"] * ROUNDS
                    m.update(workload=wl, ds=ds["key"], ds_name=ds["name"], N=ds["N"], threads=thr, lib=(
                        f"boostlab-{what}" if kind == "boostlab" else what), label=label)
                    res["results"].append(m)
                    if curve_data:
                        res["curves"].setdefault(ds["key"], {})[m["lib"]] = curve_data
    # Training-error curves: boostlab vs scikit-learn's AdaBoost.
    cmp = dict(prev.get("curves", {})) if prev else {}
    for key, c in res["curves"].items():
        b, s = c.get("boostlab-adaboost"), c.get("sklearn-adaboost")
        if b and s:
            k = min(len(b), len(s))
            cmp[key] = {"rounds": k, "max_abs_diff": max(abs(x - y) for x, y in zip(b[:k], s[:k])),
                        "boostlab_final": b[k - 1], "sklearn_final": s[k - 1]}
    res["curves"] = cmp
    # Determinism across thread counts (model files of both runs when appending).
    det = {}
    for f in OUT.glob("model_*_*.json"):
        what, key, thr_s = f.stem[len("model_"):].rsplit("_", 2)
        models.setdefault((what, key), {})[int(thr_s)] = f
    for (what, key), by_thr in models.items():
        files = [Path(p).read_bytes() for _, p in sorted(by_thr.items())]
        if len(files) > 1:
            det[f"{what} on {key}"] = all(f == files[0] for f in files)
    res["determinism"] = det
    # Bandwidth floor for workload 2 at the largest size, at the highest thread count measured.
    thr = max(r["threads"] for r in res["results"])

    def row(lib):
        return next((r for r in res["results"] if r["lib"] == lib and r["ds"] == f"synth{largest}"
                     and r["threads"] == thr and r["workload"] == "trees8"), None)

    real, tada = row("boostlab-real-adaboost"), row("boostlab-t-adaboost")
    if real and tada:
        nbytes = largest * (28 + 8)  # u8 bins + one signed f64 statistic per row
        res["floor"] = {"N": largest, "d": 28, "threads": thr, "bytes": nbytes, "bw": bw[thr],
                        "floor_s": nbytes / (bw[thr] * 1e9), "real_s": real["per_round_s"], "t_s": tada["per_round_s"]}
        f = res["floor"]
        print(f"floor at {largest}: {1000 * f['floor_s']:.2f} ms/round; boostlab real {1000 * f['real_s']:.2f} ms, "
              f"t {1000 * f['t_s']:.2f} ms", flush=True)
    (OUT / "results.json").write_text(json.dumps(res, indent=1))
    if not a.no_write:
        write_doc(res)
        svg_plot(res, SVG)
        print(f"wrote {DOC.relative_to(ROOT)} and {SVG.relative_to(ROOT)}")
    print(f"done in {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
