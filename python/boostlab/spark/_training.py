"""The barrier stage of a Spark fit: one task per rank, each training on its partition's rows.

A task (`_rank_task`, run by `DataFrame.mapInArrow(..., barrier=True)`) goes through these
phases, each named in its errors:

1. reading its partition (Arrow batches into numpy / pandas columns);
2. the rendezvous: rank 0 listens on its executor's host, every task publishes what it has
   (rank 0 its address, every rank its row count) with one `BarrierTaskContext.allGather`, and
   the ranks r > 0 connect to rank 0 (`boostlab._collective`, the TCP star of the Dask path);
3. binning: the weights' running sum chained rank after rank (only with weights), every rank's
   binning summary to rank 0, which merges them (the single machine's bins on the same rows) and
   sends the bin mapper back; each rank bins its rows;
4. training: the core's SPMD fit, every sum over rows through the collective in rank order;
5. checking that every rank holds the same model (the digests' reduction).

Rank 0 returns the model; every rank returns its statistics (reductions, bytes, seconds).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
import uuid

import numpy as np

from .. import _boostlab
from .._collective import Collective, FitError, check_same_model
from .._shards import _assemble_shard, _merge_summaries, _shard_summary

# The stage's result rows.
RESULT_SCHEMA = "rank int, model string, stats string"
# A fault for the tests: "RANK:PHASE" makes that rank's Python process kill itself (SIGKILL, as
# a lost executor) when it starts PHASE, or at round 2 for "training"; "RANK:hang" makes it stop
# answering at round 2. Read from the task's environment (the tests set it with
# `SparkContext.environment`).
_FAULT_ENV = "BOOSTLAB_SPARK_TEST_FAULT"


class SparkFitError(FitError):
    """A Spark fit failed: a task failed or was killed, or did not answer within `timeout`. The
    message names the rank (the partition of the training stage), where it ran and what it was
    doing."""


class SparkCollective(Collective):
    """The engine-neutral collective with Spark's names: a rank is a task of the barrier stage,
    `addrs[r]` its executor's `host:port`."""

    error = SparkFitError
    prefix = "boostlab.spark"
    peer = "task on"


def _fault(rank, phase):
    spec = os.environ.get(_FAULT_ENV, "")
    if spec and spec == f"{rank}:{phase}":
        os.kill(os.getpid(), signal.SIGKILL)


class _Phase:
    """The phase a rank is in: its errors say which (`SparkFitError` naming the rank and host)."""

    def __init__(self, rank, where):
        self.rank, self.where, self.name = rank, where, "starting"
        self.seconds = {}  # phase -> wall seconds
        self.t0 = time.perf_counter()

    def __call__(self, name):
        now = time.perf_counter()
        self.seconds[self.name] = round(now - self.t0, 4)
        self.name, self.t0 = name, now
        if name != "training":  # the training fault strikes at a round (`_training_fault`)
            _fault(self.rank, name)
        return self

    def fail(self, e):
        if isinstance(e, FitError):
            return SparkFitError(f"{e} [rank {self.rank} was {self.name}]")
        return SparkFitError(
            f"boostlab.spark: rank {self.rank} (task on {self.where}) failed while {self.name}: "
            f"{type(e).__name__}: {e}"
        )


def _arrays(table, meta):
    """The partition's Arrow table as (X, y, w, valid mask): X a float64 matrix (a vector column)
    or a pandas DataFrame (feature columns), y float64 labels (a 0/1 matrix for multi-label data),
    w float64 weights or None, the mask None without a validation indicator column."""
    if table is None:  # an empty partition: no batches
        return _empty(meta)
    n = table.num_rows
    if meta["vector"]:
        d = meta["n_features"]
        col = table.column("features").combine_chunks() if n else None
        X = np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float64).reshape(n, d) if n else (
            np.empty((0, d))
        )
    else:
        X = table.select(meta["feature_cols"]).to_pandas()
        X.columns = meta["feature_names_in"]
    if meta["kind"] == "multilabel":
        k = meta["y_width"]
        y = (
            np.asarray(table.column("label").combine_chunks().flatten().to_numpy(zero_copy_only=False)).reshape(n, k)
            if n
            else np.empty((0, k))
        )
    else:
        y = table.column("label").to_numpy(zero_copy_only=False).astype(np.float64)
    w = table.column("weight").to_numpy(zero_copy_only=False).astype(np.float64) if meta["weighted"] else None
    mask = None
    if meta["validation"]:
        mask = np.asarray(table.column("valid").to_numpy(zero_copy_only=False), dtype=bool)
    return X, y, w, mask


def _empty(meta):
    """(X, y, w, mask) of no rows."""
    import pandas as pd

    if meta["vector"]:
        X = np.empty((0, meta["n_features"]))
    else:
        X = pd.DataFrame({
            name: pd.Series([], dtype=np.float64 if kind == "numeric" else object)
            for name, kind in zip(meta["feature_names_in"], meta["kinds"])
        })
    y = np.empty((0, meta["y_width"])) if meta["kind"] == "multilabel" else np.empty(0)
    w = np.empty(0) if meta["weighted"] else None
    mask = np.empty(0, dtype=bool) if meta["validation"] else None
    return X, y, w, mask


def _take(X, rows):
    return X[rows] if isinstance(X, np.ndarray) else X.iloc[rows].reset_index(drop=True)


def _table(batches):
    """The partition's Arrow batches as one table, None without batches."""
    import pyarrow as pa

    batches = list(batches)
    return pa.Table.from_batches(batches) if batches else None


def _rank_task(meta):
    """The function of the barrier stage's tasks (one per rank; see the module's doc)."""

    def run(batches):
        import pyarrow as pa
        from pyspark import BarrierTaskContext

        ctx = BarrierTaskContext.get()
        rank = ctx.partitionId()
        addrs = [t.address for t in ctx.getTaskInfos()]
        size = len(addrs)
        phase = _Phase(rank, addrs[rank])
        coll = None
        try:
            phase("reading its partition")
            table = _table(batches)
            X, y, w, mask = _arrays(table, meta)
            valid_parts = None
            if mask is not None:
                keep = np.flatnonzero(~mask)
                held = np.flatnonzero(mask)
                valid_parts = [(_take(X, held), y[held])]
                X, y, w = _take(X, keep), y[keep], None if w is None else w[keep]
            n = int(y.shape[0])

            phase("connecting to rank 0")
            # Rank 0 names this attempt of the stage (a retried stage is a new fit: its ranks
            # never reach a listener of the failed attempt), listens, and says where.
            if rank == 0:
                coll = SparkCollective(f"{meta['fit_id']}-{uuid.uuid4().hex[:12]}", rank, addrs, meta["timeout"])
                hello = {"fit": coll.fit_id, "address": coll.open_root(), "n": n}
            else:
                hello = {"n": n}
            told = [json.loads(m) for m in ctx.allGather(json.dumps(hello))]
            if rank == 0:
                coll.wait_connected()
            else:
                coll = SparkCollective(told[0]["fit"], rank, addrs, meta["timeout"])
                coll.connect(told[0]["address"])

            phase("binning")
            rows = [t["n"] for t in told]
            offsets = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64).tolist()
            meta_r = dict(meta, rank_offsets=offsets, n_rows=int(offsets[-1]), split=False)
            if meta_r["n_rows"] == 0:
                raise ValueError("no training rows (every row is a validation row)")
            parts = [(rank, X, y, w)]
            weight_offset, total = _weight_chain(coll, w) if meta["weighted"] else (0.0, 0.0)
            summaries = coll.gather_bytes(_shard_summary(parts, meta_r, rank, weight_offset, total))
            mapper = coll.broadcast_bytes(
                _merge_summaries(summaries, meta_r).encode() if rank == 0 else None
            ).decode()
            shard = _assemble_shard(parts, meta_r, mapper, valid_parts)

            phase("training")
            n_jobs = meta["n_jobs"] if meta["n_jobs"] is not None else max(1, int(ctx.cpus()))
            callbacks = [_training_fault(rank)] if os.environ.get(_FAULT_ENV) else []
            t0 = time.perf_counter()
            model = _boostlab.fit_shard(
                meta["feature_names"], shard["bins"], meta["kind"], shard["y"], meta["class_names"],
                meta["params_json"], "", rank, size, coll.allreduce_shared, shard["w"], None, callbacks,
                n_jobs, valid=shard.get("valid"),
            )
            model_json = model.to_json()

            phase("checking that the ranks agree")
            check_same_model(coll, model_json)
            phase("done")
            stats = dict(coll.stats, rows=n, wall=time.perf_counter() - t0, host=socket.gethostname(),
                         phases=phase.seconds)
        except BaseException as e:
            raise phase.fail(e) from e
        finally:
            if coll is not None:
                coll.close()
        yield pa.RecordBatch.from_pydict(
            {"rank": [rank], "model": [model_json if rank == 0 else None], "stats": [json.dumps(stats)]},
            schema=pa.schema([("rank", pa.int32()), ("model", pa.string()), ("stats", pa.string())]),
        )

    return run


def _weight_chain(coll, w):
    """(this rank's start, the total) of the weights' running sum in rank order: the single
    machine's sequential sum, chained through the ranks (one reduction each: only rank r's slot is
    non-zero in the r-th, so its sum is exactly rank r's end)."""
    start = 0.0
    mine = 0.0
    for r in range(coll.size):
        if r == coll.rank:
            mine = start
            end = float(_boostlab.weight_prefix(start, w if w is not None else np.empty(0)))
        v = np.array([end if r == coll.rank else 0.0])
        start = float(coll.allreduce(v)[0])
    return mine, start


def _training_fault(rank):
    def check(record):
        if record.get("round") == 2:
            _fault(rank, "training")
            if os.environ.get(_FAULT_ENV) == f"{rank}:hang":
                time.sleep(3600)

    return check
