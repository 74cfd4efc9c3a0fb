"""Training orchestration: the rounds of a distributed fit (bins from the ranks' summaries, then one
long-running task per rank), the ranks' SPMD training over the collective, and the supervision
that turns a lost worker or a failed rank into one clear error."""

from __future__ import annotations

import threading
import time
import uuid

import distributed
from distributed import wait

from .. import _boostlab
from .._collective import check_same_model
from .._shards import _merge_summaries, _shard_summary, _weight_prefix
from ._collective import Collective, DaskFitError


def _bin_mapper(client, parts_of, ranks, meta, timeout, pin, later):
    """Round 2: the bins from the ranks' summaries of their partitions, merged in rank order
    (the core's sampled binning by global row index: the single machine's bins on the same
    rows); returns the future of the mapper's JSON, on rank 0's worker."""
    offsets = [0.0]
    if meta["weighted"]:
        # The running weight sum, rank after rank (a chain of tiny tasks).
        prev = 0.0
        chain = []
        for a in ranks:
            prev = client.submit(_weight_prefix, prev, parts_of[a], meta, workers=[a], **pin)
            chain.append(prev)
        later.extend(chain)
        # Futures, resolved on the workers: the client does not wait for them.
        total, offsets = chain[-1], [0.0] + chain[:-1]
    else:
        total, offsets = 0.0, [0.0] * len(ranks)
    summaries = [
        client.submit(_shard_summary, parts_of[a], meta, r, offsets[r], total, workers=[a], **pin)
        for r, a in enumerate(ranks)
    ]
    later.extend(summaries)
    # Merged on rank 0's worker (the summaries hold every sampled value, sorted, as f32 for
    # float32 data: ≈ 11 MB per rank at 2M × 28, which a client far from the cluster should
    # not download); the mapper goes from there to the ranks' shard tasks.
    merged = client.submit(_merge_summaries, summaries, meta, workers=[ranks[0]], **pin)
    later.append(merged)
    return merged


def _train(client, shards, ranks, meta, timeout, later, callbacks=()):
    """Round 4: rank 0's listener, then one long-running task per rank. With `callbacks`, rank
    0 publishes each round's record to a queue the client drains, calling the callbacks in
    round order; one that raises cancels the ranks and its exception is raised (as locally:
    no model)."""
    fit_id = uuid.uuid4().hex
    queue = None
    if callbacks:
        queue = distributed.Queue(f"boostlab-rounds-{fit_id}", client=client)
        meta = dict(meta, publish=queue.name)
    hub = client.submit(
        _open_hub, fit_id, ranks, timeout, meta.get("transport", "dask"),
        workers=[ranks[0]], allow_other_workers=False, pure=False,
        key=f"boostlab-hub-{fit_id}",
    )
    later.append(hub)
    hub_address = _supervise(client, [hub], ranks[:1], timeout)[0]
    futs = [
        client.submit(
            _rank_task, fit_id, r, ranks, hub_address, sh, meta, timeout,
            workers=[a], allow_other_workers=False, pure=False, retries=0,
            key=f"boostlab-fit-{fit_id}-rank{r}",
        )
        for r, (a, sh) in enumerate(zip(ranks, shards))
    ]
    later.extend(futs)
    on_poll = _CallbackRunner(queue, callbacks) if queue is not None else None
    try:
        results = _supervise(client, futs, ranks, timeout, on_poll=on_poll)
        if on_poll is not None:
            on_poll(final=True)  # the last rounds' records
    finally:
        if queue is not None:
            queue.close()
    return results[0][0], results


def _fit_shard_spmd(shard, meta, rank, size, allreduce, cancelled):
    """The SPMD fit: the core trains on this rank's rows only (as bins from the merged mapper),
    and every sum over rows goes through `allreduce`."""
    model = _boostlab.fit_shard(
        meta["feature_names"],
        shard["bins"],
        meta["kind"],
        shard["y"],
        meta["class_names"],
        meta["params_json"],
        "",  # the shard is binned: the mapper travels in it
        rank,
        size,
        allreduce,
        shard["w"],
        meta["loss"],
        [_round_check(rank, cancelled)] + ([_publisher(meta["publish"])] if rank == 0 and meta.get("publish") else []),
        meta["n_jobs"],
        valid=shard.get("valid"),
        init_model=meta.get("init"),
    )
    return model.to_json()


def _publisher(queue_name):
    """Rank 0's round callback with user callbacks: each round's record goes to the client through
    a `distributed.Queue` (one scheduler message per round), where the callbacks run."""
    from distributed import Queue

    queue = Queue(queue_name)

    def publish(record):
        queue.put(dict(record))

    return publish


def _round_check(rank, cancelled):
    """A round callback that stops a rank whose task was cancelled (another rank failed)."""

    def check(_record):
        if cancelled():
            raise DaskFitError(f"boostlab.dask: rank {rank}'s fit was cancelled")

    return check


def _cancel_check():
    """A function telling whether the calling task has been cancelled (by the client, after
    another rank failed): the running rank then stops at its next reduction or round."""
    from distributed import get_worker
    from distributed.worker import thread_state

    worker = get_worker()
    key = getattr(thread_state, "key", None)

    def cancelled():
        ts = worker.state.tasks.get(key)
        return ts is None or ts.state not in ("executing", "long-running")

    return cancelled


_HUBS: dict[str, Collective] = {}
_HUBS_LOCK = threading.Lock()


def _open_hub(fit_id, addrs, timeout, transport="dask"):
    """First round (a short task on rank 0's worker): rank 0 starts listening, and its address goes
    back to the client, which gives it to the other ranks. The listener waits for rank 0's
    training task for at most `timeout`, then closes itself."""
    from distributed import get_worker

    coll = Collective(fit_id, 0, addrs, timeout, transport=transport)
    address = coll.open_root(get_worker().security.get_listen_args("worker"))
    with _HUBS_LOCK:
        _HUBS[fit_id] = coll

    def expire():
        with _HUBS_LOCK:
            left = _HUBS.pop(fit_id, None)
        if left is not None:
            left.close()

    t = threading.Timer(timeout, expire)
    t.daemon = True
    t.start()
    return address


def _hub_count():
    """Open listeners in this worker process (the tests check that none is left behind)."""
    with _HUBS_LOCK:
        return len(_HUBS)


def _rank_task(fit_id, rank, addrs, hub, shard, meta, timeout):
    """One rank's long-running task: connects the collective, trains on the worker's shard, and
    checks that every rank holds the same model."""
    from distributed import get_worker

    cancelled = _cancel_check()
    if rank == 0:
        with _HUBS_LOCK:
            coll = _HUBS.pop(fit_id, None)
        if coll is None:
            raise DaskFitError(
                f"boostlab.dask: rank 0's listener (worker {addrs[0]}) expired before its task "
                f"started (timeout={timeout:g} s)"
            )
    else:
        coll = Collective(fit_id, rank, addrs, timeout, transport=meta.get("transport", "dask"))
    coll.cancelled = cancelled
    try:
        worker = get_worker()
        if meta["n_jobs"] is None:
            meta = dict(meta, n_jobs=worker.state.nthreads)
        if rank == 0:
            coll.wait_connected()
        else:
            coll.connect(hub, worker.security.get_connection_args("worker"))
        cpu0, wall0 = time.process_time(), time.perf_counter()
        allreduce, waits = _timed(coll.allreduce_shared)
        model_json = _fit_shard_spmd(shard, meta, rank, len(addrs), allreduce, cancelled)
        _agree(coll, model_json, rank, len(addrs))
        # The worker process's CPU seconds and the wall seconds of the training (all threads).
        stats = dict(coll.stats, cpu=time.process_time() - cpu0, wall=time.perf_counter() - wall0, waits=waits)
        return (model_json if rank == 0 else None), stats
    finally:
        coll.close()


def _timed(allreduce):
    """`allreduce` with its wall seconds counted by kind of reduction (to see where a
    rank waits for the others): a tree's first histogram (`root`: after a booster step, the
    other rank's step and root histogram are what this rank waits for), the next histograms
    (`children`: the other rank's split search and smaller child) and the small sums (`small`:
    the booster's steps, the set-up's). Returns the wrapper and the `{kind: [calls, seconds]}`
    dict it fills."""
    waits = {"root": [0, 0.0], "children": [0, 0.0], "small": [0, 0.0]}
    last = ["small"]

    def timed(buf):
        t = time.perf_counter()
        out = allreduce(buf)
        kind = "small" if buf.size < 1024 else ("children" if last[0] != "small" else "root")
        last[0] = kind
        w = waits[kind]
        w[0] += 1
        w[1] += time.perf_counter() - t
        return out

    return timed, waits


def _agree(coll, model_json, rank, size):
    """Every rank checks that all ranks hold the same model (`check_same_model`)."""
    check_same_model(coll, model_json)


def _wait(futs, timeout, what):
    """Waits for short tasks (at most `timeout`); a task that failed raises its error, a cancelled
    one (its worker was lost) a `DaskFitError`."""
    try:
        wait(futs, timeout=timeout)
    except distributed.TimeoutError:
        raise DaskFitError(f"boostlab.dask: {what} took longer than timeout={timeout:g} s") from None
    except Exception as e:  # e.g. FuturesCancelledError: a worker holding data was lost
        raise DaskFitError(f"boostlab.dask: {what} failed ({type(e).__name__}: {e}); was a worker lost?") from e
    for f in futs:
        if f.status == "error":
            f.result()  # raises the task's exception
        if f.status == "cancelled":
            raise DaskFitError(f"boostlab.dask: {what}: a task was cancelled (worker lost?)")


class _CallbackRunner:
    """Calls the user's callbacks, on the client, with the records rank 0 published (in round
    order). Called while the ranks train; `final=True` after they finished: every record is then
    in the queue (rank 0 published it before its task ended)."""

    def __init__(self, queue, callbacks):
        self.queue, self.callbacks, self.seen = queue, callbacks, 0

    def __call__(self, final=False):
        while True:
            try:
                n = self.queue.qsize()
            except Exception:  # the scheduler is unreachable: the supervision reports it
                return
            if n == 0:
                return
            for record in self.queue.get(batch=n):
                self.seen += 1
                for f in self.callbacks:
                    f(record)
            if not final:
                return


def _supervise(client, futs, ranks, timeout, results=True, on_poll=None):
    """Waits for the ranks' tasks: returns their results, or raises the most telling error as
    soon as a task fails or is cancelled, or a rank's worker leaves the cluster (a lost worker's
    restricted task would otherwise wait forever), after giving the other ranks a moment to stop."""
    rank_of = {f.key: r for r, f in enumerate(futs)}
    while True:
        pending = [f for f in futs if not f.done()]
        if pending:
            try:
                wait(pending, timeout=1.0 if on_poll is None else 0.2, return_when="FIRST_COMPLETED")
            except Exception:  # a timeout, or a future cancelled because its worker left
                pass
        if on_poll is not None:
            try:
                on_poll()
            except BaseException:
                # A user callback raised: the fit stops (the ranks are cancelled by the caller's
                # cleanup) and the exception is the fit's, as locally.
                client.cancel(futs, force=True)
                raise
        failed = [f for f in futs if f.status in ("error", "cancelled", "lost")]
        if not failed and all(f.status == "finished" for f in futs):
            return client.gather(futs) if results else None
        alive = set(client.nthreads())
        lost = [r for r, a in enumerate(ranks) if a not in alive]
        if failed or lost:
            break
    # Give the other ranks a moment to fail too (they notice the closed connections), so that
    # the reported error is the first cause rather than its echo.
    try:
        wait(futs, timeout=min(timeout, 5.0))
    except Exception:
        pass
    lost = [r for r, a in enumerate(ranks) if a not in set(client.nthreads())]
    if lost:
        names = ", ".join(f"rank {r} (worker {ranks[r]})" for r in lost)
        raise DaskFitError(
            f"boostlab.dask: lost {names} during the fit; the other ranks were cancelled. "
            "Restart or replace the worker (the data it held must be persisted again) and fit again."
        )
    errors = [(rank_of[f.key], f.exception()) for f in futs if f.status == "error"]
    if not errors:
        raise DaskFitError(
            "boostlab.dask: the fit's tasks were cancelled: "
            + ", ".join(
                f"rank {rank_of[f.key]} (worker {ranks[rank_of[f.key]]})" for f in futs if f.status != "finished"
            )
        )
    # The root cause: an error that is not the echo of a closed connection, else the first.
    errors.sort(key=lambda e: (isinstance(e[1], DaskFitError) and "lost the connection" in str(e[1]), e[0]))
    raise errors[0][1]
