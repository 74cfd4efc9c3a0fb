"""The reductions over Dask's own communication layer (`transport="dask"`, the default) as well as
over plain TCP sockets (`transport="tcp"`).

One star algorithm, two channels: the sums are taken in rank order either way, so the model files
of the two transports must be byte-identical; the fault handling (a worker killed mid-fit, a rank
that does not answer) and TLS must hold with either channel.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pandas as pd
import pytest

if not os.environ.get("CI"):
    # Under CI, scripts/test.sh installs dask: a missing one fails the import below.
    pytest.importorskip("distributed", reason="boostlab.dask needs pip install 'boostlab[dask]'")
import importlib  # noqa: E402

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import distributed  # noqa: E402

import boostlab  # noqa: E402
from boostlab import dask as bdask  # noqa: E402
from boostlab.dask import _collective  # noqa: E402

from dask_helpers import (  # noqa: E402
    assert_same_model,
    dask_data,
    fit_checked,
    in_training_order,
    place,
)

pytestmark = pytest.mark.dask


def _model_bytes(est, path):
    est.save_model(path)
    return path.read_bytes()


def _run_ranks(transport, vectors, timeout=20.0, silent=()):
    """The star between threads of this process (no Dask cluster): rank r reduces `vectors[r]`
    once, then once more; a rank in `silent` connects and never reduces. Returns each rank's
    results or exception, and whether its connections carried raw messages on the comm's stream
    (always for "tcp"; for "dask" over a TCP comm, after the hello)."""
    size = len(vectors)
    addrs = [f"tcp://127.0.0.1:{40000 + r}" for r in range(size)]
    fit_id = f"test-{transport}-{time.time_ns()}"
    root = _collective.Collective(fit_id, 0, addrs, timeout, transport=transport)
    address = root.open_root()
    out = [None] * size
    raw = [None] * size

    def rank(r):
        coll = root if r == 0 else _collective.Collective(fit_id, r, addrs, timeout, transport=transport)
        try:
            if r == 0:
                coll.wait_connected()
            else:
                coll.connect(address)
            if r in silent:
                time.sleep(timeout + 3)
                out[r] = "silent"
                return
            out[r] = [coll.allreduce(np.asarray(vectors[r])), coll.allreduce(np.asarray(vectors[r]) * 2)]
            if transport == "dask":
                raw[r] = all(_collective._raw_stream(c) is not None for c in coll._chan.comms if c is not None)
        except Exception as e:  # noqa: BLE001 - handed to the test
            out[r] = e
        finally:
            coll.close()

    threads = [threading.Thread(target=rank, args=(r,), daemon=True) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 10)
    return out, raw


@pytest.mark.parametrize("transport", ["tcp", "dask"])
def test_transport_sums_in_rank_order(transport):
    """((x0 + x1) + x2) + x3 on every rank, bit for bit, whichever message arrives first: with
    1e16 + 1 rounding to 1e16, any other order gives another number."""
    vectors = [[1e16, 0.1, 3.0], [1.0, 0.2, -1.0], [-1e16, 0.3, 2.5], [1.0, 1e-17, 0.0]]
    want = ((np.array(vectors[0]) + vectors[1]) + vectors[2]) + vectors[3]
    assert want[0] == 1.0  # ((1e16 + 1) − 1e16) + 1: the order is visible
    out, raw = _run_ranks(transport, vectors)
    # "dask" over TCP: after the hello, the raw messages on the comm's stream.
    assert raw == ([True] * 4 if transport == "dask" else [None] * 4)
    for r, got in enumerate(out):
        assert not isinstance(got, Exception), (r, got)
        assert got[0].tobytes() == want.tobytes(), (r, got[0], want)
        # The second reduction (every vector doubled: exact) on the same connections.
        assert got[1].tobytes() == (2 * want).tobytes(), (r, got[1])


@pytest.mark.parametrize("transport", ["tcp", "dask"])
@pytest.mark.slow
def test_transport_a_silent_rank_times_out_naming_it(transport):
    """Rank 2 connects and never reduces: rank 0 fails within the timeout naming rank 2 and its
    worker, and closes its connections, so that rank 1 fails too instead of waiting."""
    t0 = time.monotonic()
    out, _ = _run_ranks(transport, [[1.0], [2.0], [3.0]], timeout=2.0, silent=(2,))
    elapsed = time.monotonic() - t0
    assert isinstance(out[0], _collective.DaskFitError), out[0]
    assert "rank 2 (worker tcp://127.0.0.1:40002) did not answer reduction #1 within timeout=2 s" in str(out[0])
    assert isinstance(out[1], _collective.DaskFitError), out[1]
    assert "rank 0" in str(out[1])
    assert out[2] == "silent"
    assert elapsed < 2.0 + 3 + 8, elapsed


def test_transport_is_validated():
    with pytest.raises(ValueError, match=r"invalid parameter `transport`: expected one of 'tcp', 'dask', got 'udp'"):
        _collective.check_transport("udp")
    assert [_collective.check_transport(t) for t in ("tcp", "dask")] == ["tcp", "dask"]


def test_transport_parameter(client):
    from sklearn.base import clone

    est = bdask.DaskRealAdaBoostClassifier(n_estimators=3, transport="tcp")
    p = est.get_params()
    assert p["transport"] == "tcp"
    assert clone(est).get_params() == p
    est.set_params(client=client)
    assert bdask.DaskAdaBoostMRClassifier().transport == "dask"
    X, y, _ = dask_data(n=100)
    dX, dy = place(client, [X, y], [50, 50], [0, 1])
    # Checked at fit (as every parameter), before anything runs on the cluster.
    for bad in ("udp", None, 1):
        with pytest.raises(ValueError, match="invalid parameter `transport`"):
            bdask.DaskRealAdaBoostClassifier(transport=bad, client=client).fit(dX, dy)
    # to_local drops it (the local estimator has no such parameter).
    est.fit(dX, dy)
    assert "transport" not in est.to_local().get_params()


@pytest.mark.parametrize(
    "cls, kw, classes",
    [
        (bdask.DaskRealAdaBoostClassifier, {"max_leaves": 8}, 2),
        (bdask.DaskSecBoostClassifier, {"max_leaves": 4}, 2),
        (bdask.DaskAdaBoostMHClassifier, {"max_leaves": 4}, 3),
    ],
    ids=["real", "secboost", "mh"],
)
def test_transports_give_byte_identical_model_files(client, tmp_path, cls, kw, classes):
    """The same data and parameters over both transports: the same model file, byte for byte, the
    same number of reductions and values (the messages per round do not depend on the channel)."""
    X, y, w = dask_data(n=700, seed=3, classes=classes)
    sizes = [90, 260, 40, 310]
    dX, dy, dw = place(client, [X, y, w], sizes, [0, 1, 0, 1])
    fits = {}
    # tcp, dask, tcp: the same placement each time (a fit keeps a partition where it last
    # trained), the same bytes.
    for i, t in enumerate(["tcp", "dask", "tcp"]):
        est = fit_checked(
            cls(n_estimators=10, random_state=5, client=client, timeout=60, transport=t, **kw), dX, dy, sample_weight=dw
        )
        assert all(s["transport"] == t for s in est.comm_stats_["per_rank"])
        fits[(t, i)] = (est, _model_bytes(est, tmp_path / f"{t}{i}.json"))
    d, d_bytes = fits[("dask", 1)]
    tcp, tcp_bytes = fits[("tcp", 0)]
    assert {e.training_order_ == d.training_order_ for e, _ in fits.values()} == {True}
    assert d_bytes == tcp_bytes == fits[("tcp", 2)][1]
    for k in ("reductions", "values_reduced", "bytes_through_rank0"):
        assert d.comm_stats_[k] == tcp.comm_stats_[k], k
    # And the model is the local one (within REL: the local sums are taken in another order).
    local = cls._local_cls(n_estimators=10, random_state=5, **kw).fit(
        *in_training_order(d, [X, y], sizes), sample_weight=in_training_order(d, [w], sizes)[0]
    )
    assert_same_model(d, local)
    # The dask channel connected over the workers' own protocol.
    assert d.comm_stats_["per_rank"][1]["address"].startswith("tcp://")


def test_transport_dask_with_workers_in_the_clients_process():
    """LocalCluster(processes=False): the workers' comms are in-process (inproc://), so is the
    dask channel's listener; the model file is the tcp transport's, and the local one."""
    rng = np.random.RandomState(4)
    X = rng.normal(size=(1200, 4))
    y = (X[:, 0] - X[:, 2] > 0.1).astype(np.int64)
    with dask.config.set({"distributed.scheduler.work-stealing": False}), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster) as c:
        assert all(a.startswith("inproc://") for a in c.scheduler_info()["workers"])
        # Persisted and held: both fits find the partitions where the first found them.
        dX, dy = c.persist([da.from_array(X, chunks=(300, 4)), da.from_array(y, chunks=300)])
        distributed.wait([dX, dy])
        a, b = (
            fit_checked(
                bdask.DaskRealAdaBoostClassifier(n_estimators=6, max_leaves=4, client=c, timeout=30, transport=t),
                dX,
                dy,
            )
            for t in ("dask", "tcp")
        )
    assert a.comm_stats_["per_rank"][1]["address"].startswith("inproc://")
    assert a.training_order_ == b.training_order_
    assert a.model_.to_json() == b.model_.to_json()
    local = boostlab.RealAdaBoostClassifier(n_estimators=6, max_leaves=4).fit(*in_training_order(a, [X, y], [300] * 4))
    assert_same_model(a, local)


@pytest.mark.slow
def test_transport_both_on_a_tls_cluster():
    """With TLS configured for the workers (`protocol="tls"`, `Security.temporary()`): the dask
    channel (the default) connects over tls:// with the workers' security and wraps no socket of
    its own; the tcp channel wraps both ends of its one connection in the workers' own TLS
    contexts. The same model file either way, and the local model."""
    if not os.environ.get("CI"):
        pytest.importorskip("cryptography", reason="Security.temporary() needs cryptography")
    from distributed.security import Security

    sec = Security.temporary()
    assert sec.get_listen_args("worker")["ssl_context"] is not None
    rng = np.random.RandomState(4)
    X = rng.normal(size=(1200, 4))
    y = (X[:, 0] - X[:, 2] > 0.1).astype(np.int64)

    def wrapped_ends():
        return importlib.import_module("boostlab.dask._collective").TLS_WRAPPED[0]

    with dask.config.set({"distributed.scheduler.work-stealing": False}), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", security=sec, protocol="tls"
    ) as cluster, distributed.Client(cluster, security=sec) as c:
        assert all(a.startswith("tls://") for a in c.scheduler_info()["workers"])
        # Placed on both workers (a loaded scheduler may otherwise keep every chunk on one, and
        # a one-rank fit opens no connection to wrap).
        dX, dy = place(c, [pd.DataFrame(X), pd.Series(y)], [500, 500, 200], [0, 1, 0])
        est = fit_checked(bdask.DaskRealAdaBoostClassifier(n_estimators=6, max_leaves=4, client=c, timeout=30), dX, dy)
        wrapped = c.run(wrapped_ends)
        assert sorted(wrapped.values()) == [0, 0], wrapped
        tcp = fit_checked(
            bdask.DaskRealAdaBoostClassifier(n_estimators=6, max_leaves=4, client=c, timeout=30, transport="tcp"),
            dX,
            dy,
        )
        # Rank 0's end and rank 1's end of the one connection were wrapped.
        wrapped = c.run(wrapped_ends)
        assert sorted(wrapped.values()) == [1, 1], wrapped
    assert est.n_workers_ == tcp.n_workers_ == 2
    assert all(s["address"].startswith("tls://") for s in est.comm_stats_["per_rank"])
    assert all(s["transport"] == "dask" for s in est.comm_stats_["per_rank"])
    assert (tcp.training_order_, tcp.model_.to_json()) == (est.training_order_, est.model_.to_json())
    local = boostlab.RealAdaBoostClassifier(n_estimators=6, max_leaves=4).fit(
        *in_training_order(est, [pd.DataFrame(X), pd.Series(y)], [500, 500, 200])
    )
    assert_same_model(est, local)
