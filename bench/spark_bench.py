"""The Spark benchmark: boostlab.spark on a local Spark session against the single-process fit
and xgboost.spark on the same session. Not a test.

    .venv/bin/python bench/spark_bench.py [--rows 2000000] [--rounds 200] [--leaves 8] [--workers 2]
        [--peers xgboost] [--driver-memory 6g]

Data: scikit-learn's make_classification(rows, 28 features, 10 informative, random_state=0) as
float32 (bench/harness.py's `make_synthetic`), written once to Parquet under bench/out/ and read
by Spark into a vector column (VectorAssembler), cached in `--workers` partitions. Workload: Real
AdaBoost on 8-leaf trees, 200 rounds; xgboost.spark with the same tree size (lossguide,
max_leaves), rounds and 256 bins. Session: local[workers] (one task slot per core). Single
process: the local estimator with n_jobs=workers in this process, on the same rows. Reports wall
seconds and the ratios, boostlab's communication (reductions and bytes through rank 0, from the
model's `comm_stats_`), whether the Spark model is the single-process one (the same trees; the
largest score difference on 100k rows), the load average, and the host's memory-read bandwidth
(`boostlab-bench bandwidth`, from $CARGO_TARGET_DIR or target/).
Needs: pip install pyspark pyarrow xgboost (xgboost is skipped when missing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import OUT, ROOT, fmt_n, fresh_json, make_synthetic, thread_env  # noqa: E402

BIN = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "boostlab-bench"


def parquet_data(n):
    """The benchmark's rows as a Parquet file (f0..f27 float32, label double), made once."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = OUT / f"spark_synth{n}.parquet"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        X, y = make_synthetic(n)
        X = X.astype(np.float32)
        cols = {f"f{j}": X[:, j] for j in range(X.shape[1])}
        cols["label"] = y.astype(np.float64)
        pq.write_table(pa.table(cols), path, row_group_size=250_000)
    return path


def structure(model_json):
    """A model's trees without their floats (leaf values, gains, α: sums in another order) or its
    history and parameter sources."""
    m = json.loads(model_json)
    m.pop("history", None)
    m.pop("param_sources", None)

    def walk(x):
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return None if isinstance(x, float) else x

    return walk(m)


def bandwidth(threads):
    if not BIN.exists():
        return None
    return fresh_json([str(BIN), "bandwidth"], thread_env(threads))["gb_per_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--leaves", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--peers", default="xgboost")
    ap.add_argument("--driver-memory", default="6g")
    args = ap.parse_args()
    n, w = args.rows, args.workers

    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.ml.feature import VectorAssembler
    from pyspark.sql import SparkSession

    import boostlab
    from boostlab.spark import SparkRealAdaBoostClassifier

    path = parquet_data(n)
    spark = (
        SparkSession.builder.master(f"local[{w}]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.sql.shuffle.partitions", str(w))
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    raw = spark.read.parquet(str(path))
    cols = [c for c in raw.columns if c != "label"]
    df = VectorAssembler(inputCols=cols, outputCol="features").transform(raw).select("features", "label")
    df = df.repartition(w).cache()
    df.count()
    res = {"rows": n, "rounds": args.rounds, "leaves": args.leaves, "workers": w, "load_before": os.getloadavg()[0]}
    print(f"data: {fmt_n(n)} × 28 float32, Real AdaBoost {args.leaves} leaves, {args.rounds} rounds; "
          f"local[{w}]; load average {res['load_before']:.1f}", flush=True)

    # The single-process fit on the rows in the Spark fit's order (partition by partition),
    # collected as Arrow.
    from pyspark.ml.functions import vector_to_array

    table = df.select(vector_to_array("features", "float32").alias("x"), "label").toArrow()
    X = table.column("x").combine_chunks().flatten().to_numpy().reshape(table.num_rows, -1)
    y = table.column("label").to_numpy()
    del table
    t0 = time.perf_counter()
    single = boostlab.RealAdaBoostClassifier(
        n_estimators=args.rounds, max_leaves=args.leaves, n_jobs=w, calibration=None
    ).fit(X, y)
    res["single"] = time.perf_counter() - t0
    print(f"single process, {w} threads       : wall {res['single']:7.2f} s", flush=True)

    # A warm-up fit: the session's Python workers start and import boostlab, pandas and pyarrow
    # (≈ 10 s on a loaded host), once per session.
    SparkRealAdaBoostClassifier(n_estimators=2, max_leaves=args.leaves, numWorkers=w).fit(df.limit(1000).repartition(w))
    est = SparkRealAdaBoostClassifier(
        n_estimators=args.rounds, max_leaves=args.leaves, numWorkers=w, n_jobs=1, calibration=None
    )
    t0 = time.perf_counter()
    model = est.fit(df)
    res["spark"] = time.perf_counter() - t0
    print(f"  phases of rank 0 (s): {model.comm_stats_[0]['phases']}", flush=True)
    st = model.comm_stats_
    print(f"boostlab.spark ({w} ranks × 1 thread): wall {res['spark']:7.2f} s  "
          f"boostlab.spark / single = {res['spark'] / res['single']:.2f}×", flush=True)
    r0 = st[0]
    trees = model.to_local().model_.n_trees
    print(f"  communication: {r0['reductions']} reductions ({r0['reductions'] / trees:.1f} per round), "
          f"{(r0['bytes_sent'] + r0['bytes_received']) / 2**20:.1f} MiB through rank 0 "
          f"({(r0['bytes_sent'] + r0['bytes_received']) / trees / 2**10:.0f} KiB per round), "
          f"{r0['seconds']:.2f} s in reductions on rank 0; training wall per rank: "
          f"{[round(s['wall'], 2) for s in st]} s", flush=True)
    res["comm"] = st
    a, b = model.to_local(), single
    res["same_structure"] = structure(a.model_.to_json()) == structure(b.model_.to_json())
    sub = X[:100_000]
    diff = float(np.max(np.abs(a.decision_function(sub) - b.decision_function(sub))))
    res["max_score_diff"] = diff
    print(f"  the single-process model's trees (structure, features, thresholds): {res['same_structure']}; "
          f"max |score difference| on {sub.shape[0]} rows: {diff:.3g}", flush=True)

    if "xgboost" in args.peers.split(","):
        try:
            from xgboost.spark import SparkXGBClassifier
        except ImportError as e:
            print(f"xgboost.spark: skipped ({e})")
        else:
            xgb = SparkXGBClassifier(
                features_col="features", label_col="label", num_workers=w, n_estimators=args.rounds,
                max_leaves=args.leaves, max_depth=0, grow_policy="lossguide", tree_method="hist", max_bin=256,
            )
            xgb.copy({xgb.n_estimators: 2}).fit(df.limit(1000).repartition(w))  # warm-up, as above
            t0 = time.perf_counter()
            xgb.fit(df)
            res["xgboost"] = time.perf_counter() - t0
            print(f"xgboost.spark ({w} workers × 1 thread) : wall {res['xgboost']:7.2f} s  "
                  f"boostlab.spark / xgboost.spark = {res['spark'] / res['xgboost']:.2f}×", flush=True)
    res["load_after"] = os.getloadavg()[0]
    res["bandwidth_gb_s"] = bandwidth(w)
    bw = res["bandwidth_gb_s"]
    print(f"load average after: {res['load_after']:.1f}; memory-read bandwidth (`boostlab-bench bandwidth`, "
          f"{w} threads): {'n/a (build boostlab-bench)' if bw is None else f'{bw:.1f} GB/s'}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"spark_bench_{fmt_n(n)}.json").write_text(json.dumps(res, indent=1, default=str))
    spark.stop()


if __name__ == "__main__":
    main()
