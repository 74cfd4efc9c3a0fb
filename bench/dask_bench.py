"""The Dask benchmark: distributed boostlab on a Dask LocalCluster against the single-process fit
and the Dask peers (lightgbm.dask, xgboost.dask) on the same cluster. Not a test.

    .venv/bin/python bench/dask_bench.py [--rows 2000000] [--rounds 200] [--leaves 8]
        [--peers lightgbm,xgboost] [--transport dask[,tcp]] [--repeat 1]

Data: scikit-learn's make_classification(rows, 28 features, 10 informative, random_state=0) as
float32 (bench/harness.py's `make_synthetic`), split into one row block per worker. Workload: Real
AdaBoost on 8-leaf trees, 200 rounds; the peers with the same tree size, rounds and 255/256 bins.
Cluster: LocalCluster(2 workers × 1 thread, processes). Single process: the local estimator with
n_jobs=2 in this process. Reports wall and CPU seconds (this process's for the single fit, the
workers' for the cluster fits), the ratios, and boostlab's per-round communication (reductions
and bytes through rank 0, from `comm_stats_`). It also checks that the distributed model is the
single-process one (the largest difference of the scores on 100k rows). `--transport` lists the
Dask estimators' transports to measure ("dask", the default, "tcp" or both: each gets its
ping-pong and its fit, the fits alternating `--repeat` times, and the models of the transports are
compared bit for bit; the ratios to the peers are the first transport's).
Needs: pip install 'boostlab[dask]' lightgbm xgboost (the peers are skipped when missing).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np

from harness import make_synthetic


def cpu_self():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def workers_cpu(client):
    return sum(client.run(cpu_self).values())


def timed(client, fn):
    c0, t0 = workers_cpu(client), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, workers_cpu(client) - c0


def _pingpong_rank(fit_id, rank, addrs, hub, n, reps, transport="dask"):
    """One rank of the transport's ping-pong: `reps` reductions of `n` values, nothing else."""
    from boostlab.dask import _training
    from boostlab.dask._collective import Collective

    if rank == 0:
        with _training._HUBS_LOCK:
            coll = _training._HUBS.pop(fit_id)
        coll.wait_connected()
    else:
        coll = Collective(fit_id, rank, addrs, 60, transport=transport)
        coll.connect(hub)
    x = np.ones(n)
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(reps):
        coll.allreduce(x)
    out = ((time.perf_counter() - t0) / reps, (time.process_time() - c0) / reps)
    coll.close()
    return out


def pingpong(client, reps=500, transport="dask"):
    """The transport alone: wall and CPU milliseconds per reduction on each rank, for a small
    vector (a booster's sums) and a histogram (28 features × 256 bins × 2 + 4 values)."""
    from boostlab.dask import _training

    ranks = sorted(client.scheduler_info()["workers"])
    out = {}
    for n in (15, 14340):
        fit_id = f"pingpong-{n}-{time.time_ns()}"
        hub = client.submit(_training._open_hub, fit_id, ranks, 60, transport, workers=[ranks[0]], pure=False).result()
        futs = [client.submit(_pingpong_rank, fit_id, r, ranks, hub, n, reps, transport, workers=[a], pure=False)
                for r, a in enumerate(ranks)]
        out[n] = [(round(w * 1e3, 3), round(c * 1e3, 3)) for w, c in client.gather(futs)]
        print(f"  ping-pong ({transport}), {n} values: (wall ms, cpu ms) per reduction per rank: {out[n]}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--leaves", type=int, default=8)
    ap.add_argument("--peers", default="lightgbm,xgboost")
    ap.add_argument("--transport", default="dask",
                    help="the Dask estimators' transports: dask (the default), tcp or dask,tcp")
    ap.add_argument("--repeat", type=int, default=1, help="fits of boostlab.dask per transport (alternating)")
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args()

    import dask.array as da
    import distributed

    import boostlab
    from boostlab.dask import DaskRealAdaBoostClassifier

    X, y = make_synthetic(args.rows)
    X = X.astype(np.float32)
    y = y.astype(np.int64)
    n, rounds, leaves = args.rows, args.rounds, args.leaves
    load = os.getloadavg()[0]
    print(f"data: {n} × 28 float32, Real AdaBoost {leaves} leaves, {rounds} rounds; load average {load:.1f} "
          f"(the machine is shared: timings are under load)")
    res = {"rows": n, "rounds": rounds, "leaves": leaves, "load_before": load}

    # Single process, 2 threads.
    c0, t0 = cpu_self(), time.perf_counter()
    local = boostlab.RealAdaBoostClassifier(n_estimators=rounds, max_leaves=leaves, n_jobs=2, calibration=None).fit(X, y)
    res["single"] = {"wall": time.perf_counter() - t0, "cpu": cpu_self() - c0}
    print(f"single process, 2 threads : wall {res['single']['wall']:7.2f} s  cpu {res['single']['cpu']:7.2f} s")

    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", worker_dashboard_address=":0"
    ) as cluster, distributed.Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        half = n // 2
        # One row block per worker, placed explicitly (as a user's persisted data would be).
        blocks = [client.scatter(X[:half], workers=[workers[0]]), client.scatter(X[half:], workers=[workers[1]])]
        yblocks = [client.scatter(y[:half], workers=[workers[0]]), client.scatter(y[half:], workers=[workers[1]])]
        dX = da.concatenate([da.from_delayed(b, shape=(m, 28), dtype=np.float32) for b, m in zip(blocks, (half, n - half))])
        dy = da.concatenate([da.from_delayed(b, shape=(m,), dtype=np.int64) for b, m in zip(yblocks, (half, n - half))])
        dX, dy = client.persist([dX, dy])
        distributed.wait([dX, dy])

        def warm(peers=args.peers):
            # Imports on the workers before any timing (a warm cluster, for every contender).
            import boostlab.dask  # noqa: F401

            for p in [p for p in peers.split(",") if p]:
                try:
                    __import__({"lightgbm": "lightgbm", "xgboost": "xgboost.dask"}[p])
                except ImportError:
                    pass

        client.run(warm)
        from boostlab.dask._collective import check_transport

        transports = [check_transport(t) for t in args.transport.split(",") if t]
        res["pingpong"] = {t: pingpong(client, transport=t) for t in transports}
        if transports == ["tcp"]:
            res["pingpong"] = res["pingpong"]["tcp"]  # the layout of a tcp-only run

        # The fits, the transports alternating (a shared machine's load drifts).
        runs = {t: [] for t in transports}
        models = {}
        for _ in range(max(1, args.repeat)):
            for t in transports:
                est = DaskRealAdaBoostClassifier(
                    n_estimators=rounds, max_leaves=leaves, calibration=None, client=client, transport=t
                )
                _, w, c = timed(client, lambda est=est: est.fit(dX, dy))
                runs[t].append((w, c, est))
                print(f"boostlab.dask (2 × 1 thr, transport={t}): wall {w:7.2f} s  cpu {c:7.2f} s")
        for t in transports:
            walls = sorted(r[0] for r in runs[t])
            cpus = sorted(r[1] for r in runs[t])
            wall, cpu = walls[len(walls) // 2], cpus[len(cpus) // 2]
            est = runs[t][-1][2]
            models[t] = (est.model_.to_json(), est.training_order_, est.workers_)
            st = est.comm_stats_
            per_round_red = st["reductions"] / est.model_.n_trees
            per_round_bytes = st["bytes_through_rank0"] / est.model_.n_trees
            key = "boostlab_dask" if t == transports[0] else f"boostlab_dask_{t}"
            res[key] = {"transport": t, "wall": wall, "cpu": cpu, "walls": walls, "cpus": cpus,
                        "trees": est.model_.n_trees,
                        "reductions": st["reductions"], "bytes_through_rank0": st["bytes_through_rank0"],
                        "values_reduced": st["values_reduced"],
                        "reductions_per_round": per_round_red, "bytes_per_round_rank0": per_round_bytes,
                        "training_order": est.training_order_, "seconds": st["seconds"]}
            print(f"boostlab.dask, transport={t} (median of {len(walls)}): wall {wall:7.2f} s  cpu {cpu:7.2f} s  "
                  f"= {wall / res['single']['wall']:.2f}× single")
            print(f"  communication: {st['reductions']} reductions ({per_round_red:.1f} per round), "
                  f"{st['values_reduced'] * 8 / est.model_.n_trees / 1e3:.1f} kB reduced per round per rank, "
                  f"{per_round_bytes / 1e3:.1f} kB per round through rank 0 (2 ranks: 2(P−1) messages per reduction)")
            print(f"  stages (s): {st['seconds']}")
            # Where the workers' CPU goes: each rank's training (its process's CPU during fit_shard)
            # and its wall seconds inside the allreduce; the rest of `cpu` is the stages before.
            res[key]["per_rank"] = st["per_rank"]
            for r, s in enumerate(st["per_rank"]):
                print(f"  rank {r}: training cpu {s['cpu']:.2f} s, wall {s['wall']:.2f} s, "
                      f"in allreduce {s['seconds']:.2f} s wall")
                if "waits" in s:  # the wall seconds in the allreduce by kind of reduction
                    print("    waits: " + ", ".join(f"{k} {c} calls {t:.2f} s" for k, (c, t) in s["waits"].items()))
            # The same model as the single process on the rows in the training order.
            if est.training_order_ == [0, 1]:
                sub = X[:: max(1, n // 100_000)]
                diff = float(np.max(np.abs(est.to_local().decision_function(sub) - local.decision_function(sub))))
                res[key]["max_score_diff_vs_single"] = diff
                if t == transports[0]:
                    res["max_score_diff_vs_single"] = diff
                print(f"  max |score difference| vs the single-process model on {sub.shape[0]} rows: {diff:.3g}")
        if len(transports) > 1:
            same = len({(m[0], tuple(m[1]), tuple(m[2])) for m in models.values()}) == 1
            res["transports_bit_identical"] = same
            print(f"  models of the transports {transports} bit-identical: {same}")
        wall = res["boostlab_dask"]["wall"]

        for peer in [p for p in args.peers.split(",") if p]:
            try:
                if peer == "lightgbm":
                    import lightgbm as lgb

                    model = lgb.DaskLGBMClassifier(client=client, n_estimators=rounds, num_leaves=leaves, max_bin=255,
                                                   n_jobs=1, verbose=-1)
                elif peer == "xgboost":
                    import xgboost as xgb
                    import xgboost.dask  # noqa: F401 - a submodule, not imported by xgboost itself

                    model = xgb.dask.DaskXGBClassifier(n_estimators=rounds, tree_method="hist", grow_policy="lossguide",
                                                       max_leaves=leaves, max_depth=0, max_bin=256, n_jobs=1)
                    model.client = client
                else:
                    raise SystemExit(f"unknown peer {peer}")
            except ImportError as e:
                print(f"{peer}: skipped ({e})")
                continue
            _, pw, pc = timed(client, lambda model=model: model.fit(dX, dy))
            res[peer] = {"wall": pw, "cpu": pc}
            print(f"{peer + '.dask':26s} : wall {pw:7.2f} s  cpu {pc:7.2f} s  boostlab.dask / {peer} = {wall / pw:.2f}×")
    res["load_after"] = os.getloadavg()[0]
    print(f"load average after: {res['load_after']:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
