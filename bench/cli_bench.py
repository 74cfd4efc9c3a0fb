"""The command-line path: `boostlab train` on a CSV file and on
the same data as Parquet, against LightGBM building its Dataset from the same CSV path (its own
parser) plus training. Every run is a fresh process; time is wall-clock, peak RSS the process's
own (wait4's ru_maxrss). Medians of --repeats runs.

    bash bench/cli_bench.sh                     # 1M x 28, 1 round, 3 repeats; writes docs/reference/benchmarks.md
    bash bench/cli_bench.sh --rows 100000 --no-write
    python bench/cli_bench.py --make-csv /tmp/big.csv --rows 30000000   # an 8 GB file

The data (make_classification-like, float32, 28 features) are written under bench/out/ (git-ignored).
"""

import argparse
import json
import os
import re
import statistics
import sys

from harness import OUT, ROOT, fresh, thread_env, write_doc_section

BOOSTLAB = os.path.join(ROOT, "target", "release", "boostlab")
D = 28


def make_data(n, seed=0):
    """A make_classification-like problem, generated in blocks (no n x 28 float64 copy)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    w = rng.normal(size=D).astype(np.float32)
    for start in range(0, n, 1_000_000):
        m = min(1_000_000, n - start)
        x = rng.normal(size=(m, D)).astype(np.float32)
        x[:, :8] *= 2.0
        margin = x[:, :8] @ w[:8] + 0.5 * np.sin(x[:, 8] * 3) + rng.normal(scale=0.5, size=m).astype(np.float32)
        y = (margin > 0).astype(np.int8)
        yield x, y


def write_csv(path, n):
    import polars as pl

    with open(path, "wb") as f:
        first = True
        for x, y in make_data(n):
            df = pl.DataFrame({f"f{j}": x[:, j] for j in range(D)} | {"label": y})
            df.write_csv(f, include_header=first)
            first = False


def write_parquet(csv_path, path):
    import polars as pl

    # Snappy: the codec this build reads (with uncompressed); see README.
    pl.read_csv(csv_path).write_parquet(path, compression="snappy")


def timed(cmd, env):
    """(wall s, CPU s, peak RSS MB, stdout) of `cmd` in a fresh process (bench/timing.py)."""
    r = fresh(cmd, env)
    return r["wall_s"], r["cpu_s"], r["rss_mb"], r["stdout"]


LGB = r"""
import sys, time, lightgbm as lgb
path, threads, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0 = time.perf_counter()
ds = lgb.Dataset(path, params={"header": True, "label_column": "name:label", "num_threads": threads,
                               "max_bin": 255, "verbose": -1, "min_data_in_leaf": 1,
                               "feature_pre_filter": False})
ds.construct()
t1 = time.perf_counter()
params = {"objective": "binary", "num_leaves": 8, "learning_rate": 0.1, "num_threads": threads,
          "verbose": -1, "max_bin": 255, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0}
lgb.train(params, ds, num_boost_round=rounds)
t2 = time.perf_counter()
print(f"dataset {t1 - t0:.3f} train {t2 - t1:.3f}")
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--make-csv", help="only write a CSV of --rows rows here, then exit")
    ap.add_argument("--make-parquet", nargs=2, metavar=("CSV", "PARQUET"), help="only convert, then exit")
    a = ap.parse_args()
    if a.make_csv:
        write_csv(a.make_csv, a.rows)
        return
    if a.make_parquet:
        write_parquet(*a.make_parquet)
        return
    os.makedirs(OUT, exist_ok=True)
    csv = os.path.join(OUT, f"cli_{a.rows}.csv")
    pq = os.path.join(OUT, f"cli_{a.rows}.parquet")
    # The files are written by child processes, so that this process stays small: a child's peak
    # RSS (wait4's ru_maxrss) starts at its parent's RSS at fork, since exec keeps the high-water
    # mark of the forked copy.
    if not os.path.exists(csv):
        fresh([sys.executable, __file__, "--rows", str(a.rows), "--make-csv", csv])
    if not os.path.exists(pq):
        fresh([sys.executable, __file__, "--make-parquet", csv, pq])
    mb = os.path.getsize(csv) / 1e6
    env = thread_env(a.threads)
    model = os.path.join(OUT, "cli_model.json")
    rows = {}
    load0 = os.getloadavg()[0]

    def boostlab(path):
        cmd = [BOOSTLAB, "train", "--data", path, "--algo", "real-adaboost", "--max-leaves", "8",
               "--rounds", str(a.rounds), "--learning-rate", "1", "--calibration", "none", "--quiet", "--model", model]
        wall, cpu, rss, out = timed(cmd, env)
        read = float(re.search(r"into bins in ([0-9.]+) s", out).group(1))
        return wall, cpu, rss, read

    def lightgbm():
        wall, cpu, rss, out = timed([sys.executable, "-c", LGB, csv, str(a.threads), str(a.rounds)], env)
        read = float(re.search(r"dataset ([0-9.]+)", out).group(1))
        return wall, cpu, rss, read

    for name, f in [("boostlab, CSV", lambda: boostlab(csv)), ("boostlab, Parquet", lambda: boostlab(pq)),
                    ("LightGBM, CSV (its parser)", lightgbm)]:
        runs = [f() for _ in range(a.repeats)]
        rows[name] = {k: statistics.median(r[i] for r in runs) for i, k in enumerate(["wall", "cpu", "rss", "read"])}
        rows[name]["wall_all"] = [round(r[0], 3) for r in runs]
        print(name, rows[name], flush=True)
    load = open("/proc/loadavg").read().split()[:3]
    table = [
        f"1M-row benchmark file: {a.rows:,} rows × {D} float32 features + 0/1 label, CSV {mb:.0f} MB, "
        f"Parquet (snappy) {os.path.getsize(pq) / 1e6:.0f} MB. Real AdaBoost, 8 leaves, {a.rounds} round(s), "
        f"{a.threads} threads, fresh process per run, medians of {a.repeats}; wall = file → saved model, "
        f"CPU = user + sys of the whole process. "
        + (
            f"Machine idle but for this benchmark (1-minute load average {load0:.1f} at the start, "
            f"{' '.join(load)} at the end)."
            if load0 < 1.5
            else f"**Measured under load**: 1-minute load average {load0:.1f} at the start, {' '.join(load)} at "
            f"the end (2 cores shared with other jobs), so wall times are pessimistic and CPU times the "
            f"steadier figure."
        ),
        "",
        "| path | wall | CPU (user+sys) | read + bin (wall) | read throughput | peak RSS | wall / LightGBM "
        "| CPU / LightGBM |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lg = rows.get("LightGBM, CSV (its parser)")
    for name, r in rows.items():
        size = mb if "Parquet" not in name else os.path.getsize(pq) / 1e6
        rw = f"{r['wall'] / lg['wall']:.2f}×" if lg and r is not lg else ""
        rc = f"{r['cpu'] / lg['cpu']:.2f}×" if lg and r is not lg else ""
        table.append(f"| {name} | {r['wall']:.2f} s | {r['cpu']:.2f} s | {r['read']:.2f} s "
                     f"| {size / r['read']:.0f} MB/s | {r['rss']:.0f} MB | {rw} | {rc} |")
    text = "\n".join(table)
    print(text)
    with open(os.path.join(OUT, "cli_results.json"), "w") as f:
        results = {"rows": a.rows, "threads": a.threads, "rounds": a.rounds, "results": rows, "load": load}
        json.dump(results, f, indent=1)
    if not a.no_write:
        begin, end = "<!-- CLI-GENERATED-BEGIN -->", "<!-- CLI-GENERATED-END -->"
        if not write_doc_section(begin, end, text, append=False):
            print("docs/reference/benchmarks.md has no CLI markers; not written")


if __name__ == "__main__":
    main()
