"""A worker killed mid-fit fails the fit with an error naming it, within the timeout, leaving no task,
worker thread or listener behind (on a cluster of its own, with either transport)."""

from __future__ import annotations

import os
import threading
import time

import pytest

if not os.environ.get("CI"):
    # Under CI, scripts/test.sh installs dask: a missing one fails the import below.
    pytest.importorskip("distributed", reason="boostlab.dask needs pip install 'boostlab[dask]'")

import dask  # noqa: E402
import distributed  # noqa: E402

from boostlab import dask as bdask  # noqa: E402
from boostlab.dask import _training  # noqa: E402

from dask_helpers import (  # noqa: E402
    dask_data,
    local_cluster,
    place,
)

pytestmark = pytest.mark.dask


@pytest.mark.parametrize("transport", ["tcp", "dask"])
@pytest.mark.slow
def test_a_worker_killed_mid_fit(transport):
    """It kills a worker (of its own cluster), with either transport: DaskFitError naming it within
    the timeout, no task processing, no worker thread busy, no listener left."""
    timeout = 20.0
    no_stealing = dask.config.set({"distributed.scheduler.work-stealing": False})
    with no_stealing, local_cluster() as cluster, distributed.Client(cluster) as c:
        X, y, _ = dask_data(n=400)
        dX, dy = place(c, [X, y], [200, 200], [0, 1])
        victim = sorted(c.scheduler_info()["workers"])[1]
        # A fit far too long to end by itself (about a millisecond of exchanges per round).
        est = bdask.DaskRealAdaBoostClassifier(
            n_estimators=1_000_000, max_leaves=8, client=c, timeout=timeout, transport=transport
        )

        def kill():
            # Wait until the ranks train, then end the victim's process.
            for _ in range(400):
                running = [k for v in c.processing().values() for k in v if "boostlab-fit" in str(k)]
                if len(running) >= 2:
                    break
                time.sleep(0.05)
            time.sleep(1.0)
            try:
                c.run(os._exit, 1, workers=[victim])
            except Exception:
                pass

        killer = threading.Thread(target=kill, daemon=True)
        killer.start()
        t0 = time.monotonic()
        with pytest.raises(bdask.DaskFitError, match=victim.replace(".", r"\.")) as err:
            est.fit(dX, dy)
        elapsed = time.monotonic() - t0
        assert "rank 1" in str(err.value)
        print(f"\nkilled worker (transport={transport}): {err.value} (after {elapsed:.1f} s)")
        killer.join()
        assert elapsed < timeout + 15, elapsed
        assert not hasattr(est, "model_")
        # No stray task: nothing is processing, no worker thread still runs a rank, no listener.
        deadline = time.monotonic() + 15
        while True:
            busy = sum(len(v) for v in c.processing().values())
            threads = c.run(lambda dask_worker: len(dask_worker.active_threads))
            hubs = c.run(_training._hub_count)
            if busy == 0 and not any(threads.values()) and not any(hubs.values()):
                break
            assert time.monotonic() < deadline, (busy, threads, hubs)
            time.sleep(0.2)
