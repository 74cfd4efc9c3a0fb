"""Experiment grids as Dask tasks (`boostlab.experiment.run`, `boostlab experiment
--dask`). A tiny generated grid (36 cells, seconds) must give, cell for cell, the records of the
local run of `boostlab experiment`; a run stopped mid-way and resumed must complete with the same
records. Each test starts its own `distributed.LocalCluster`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import boostlab.experiment as bx

SPEC = """
name = "dask-grid"
seed = 13
folds = 3
noise = [0.0, 0.1]

[params]
rounds = 5

[[datasets]]
name = "a"
path = "a.csv"

[[datasets]]
name = "b"
path = "b.csv"

[[settings]]
name = "tada"
algo = "t-adaboost"
max_nodes = 5
grid = { t = [0.5, 1.0] }

[[settings]]
name = "ada"
algo = "adaboost"
"""
N_CELLS = 2 * 3 * 2 * 3


def write_grid(d: Path) -> Path:
    for name, seed, n in [("a", 1, 120), ("b", 2, 90)]:
        rng = np.random.RandomState(seed)
        x = rng.uniform(-1, 1, size=(n, 4)).round(4)
        y = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.4, size=n) > 0).astype(int)
        lines = ["x1,x2,x3,x4,label"] + [",".join(map(str, r)) + f",{c}" for r, c in zip(x, y)]
        (d / f"{name}.csv").write_text("\n".join(lines) + "\n")
    spec = d / "grid.toml"
    spec.write_text(SPEC)
    return spec


def cells_of(out: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted((out / "cells").glob("*.json"))}


@pytest.fixture(scope="module")
def grid(tmp_path_factory, cli):
    """The spec and the reference: a local run of `boostlab experiment`."""
    d = tmp_path_factory.mktemp("grid")
    spec = write_grid(d)
    out = d / "local"
    r = subprocess.run(
        [str(cli), "experiment", str(spec), "--out", str(out), "--threads", "2", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert len(cells_of(out)) == N_CELLS
    return spec, out


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None
    ) as cluster, Client(cluster) as c:
        yield c


@pytest.mark.dask
def test_dask_grid_equals_local_run(grid, client, tmp_path):
    spec, local = grid
    out = tmp_path / "dask"
    s = bx.run(spec, out, client=client, batch_size=5)
    assert (s.total, s.already_done, s.completed, s.failures) == (N_CELLS, 0, N_CELLS, [])
    assert s.is_complete
    # Cell for cell, byte for byte: the same records and the same merged file.
    assert cells_of(out) == cells_of(local)
    assert (out / "results.jsonl").read_bytes() == (local / "results.jsonl").read_bytes()
    # One task for every cell of a (dataset, fold): the same records.
    big = tmp_path / "big"
    s = bx.run(spec, big, client=client, batch_size=N_CELLS)
    assert s.is_complete and cells_of(big) == cells_of(local)


def test_in_process_run_equals_local_run(grid, tmp_path):
    spec, local = grid
    out = tmp_path / "here"
    # In this process (no Dask), through the same code: the same records.
    s = bx.run(spec, out, client="local", threads_per_task=2)
    assert s.is_complete and s.completed == N_CELLS
    assert (out / "results.jsonl").read_bytes() == (local / "results.jsonl").read_bytes()


@pytest.mark.dask
def test_dask_grid_stopped_and_resumed(grid, client, tmp_path):
    spec, local = grid
    out = tmp_path / "resumed"
    # "Killed" after 7 cells: the remaining tasks are cancelled, the finished batches are kept.
    s = bx.run(spec, out, client=client, batch_size=3, stop_after=7)
    assert not s.is_complete
    done = len(cells_of(out))
    assert 7 <= done < N_CELLS and s.completed == done
    # Nothing half-written, and the cluster has no task left.
    assert not [p for p in (out / "cells").iterdir() if p.name.startswith(".")]
    # (Cancellation and the release of the futures reach the scheduler asynchronously.)
    deadline = time.monotonic() + 10
    while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0
    # Resumed by a Dask run: only the missing cells run.
    s = bx.run(spec, out, client=client, batch_size=3)
    assert (s.already_done, s.completed, s.failures) == (done, N_CELLS - done, [])
    assert cells_of(out) == cells_of(local)
    assert (out / "results.jsonl").read_bytes() == (local / "results.jsonl").read_bytes()
    # Finished: a rerun does nothing.
    s = bx.run(spec, out, client=client)
    assert (s.already_done, s.completed) == (N_CELLS, 0)


@pytest.mark.dask
@pytest.mark.slow
def test_cli_dask_stopped_then_resumed_by_the_local_runner(grid, client, cli, tmp_path):
    spec, local = grid
    out = tmp_path / "cli"
    env = dict(os.environ, BOOSTLAB_PYTHON=sys.executable)
    address = client.scheduler.address
    run = lambda *extra: subprocess.run(  # noqa: E731
        [str(cli), "experiment", str(spec), "--out", str(out), "--dask", address, *extra],
        capture_output=True,
        text=True,
        env=env,
    )
    r = run("--stop-after", "4")
    assert r.returncode == 3, r.stderr
    assert "dask-grid: 36 cells, on Dask" in r.stderr
    assert 4 <= len(cells_of(out)) < N_CELLS
    # The local runner resumes a directory a Dask run started (same storage, same spec hash).
    r = subprocess.run([str(cli), "experiment", str(spec), "--out", str(out), "--quiet"], capture_output=True)
    assert r.returncode == 0, r.stderr
    assert cells_of(out) == cells_of(local)


def test_cli_dask_without_the_python_package_is_a_clear_error(grid, cli, tmp_path):
    spec, _ = grid
    env = dict(os.environ, BOOSTLAB_PYTHON=str(tmp_path / "no-such-python"))
    r = subprocess.run(
        [str(cli), "experiment", str(spec), "--out", str(tmp_path / "x"), "--dask", "tcp://127.0.0.1:1"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 1
    assert "--dask runs the grid through Python" in r.stderr and "boostlab[dask]" in r.stderr, r.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.dask
def test_a_different_spec_is_refused(grid, client, tmp_path):
    spec, local = grid
    other = tmp_path / "other.toml"
    other.write_text(spec.read_text().replace("seed = 13", "seed = 14"))
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_bytes((spec.parent / name).read_bytes())
    with pytest.raises(ValueError, match="different spec"):
        bx.run(other, local, client=client)


# ------------------------------------------------------------------ a worker killed mid-grid


def _kill_once(arm: Path, cells: Path, after: int):
    """A worker plugin that ends its worker's process (`os._exit`, as a crash or the OOM killer
    would) at the start of a grid task, once: when the file `arm` exists and the results
    directory already holds `after` records. The first worker to remove `arm` dies; the nanny
    then starts a fresh worker process in its place. `arm + ".killed"` tells the test what died.
    (Defined in a function: Dask ships it to the workers by value.)"""
    from distributed import WorkerPlugin

    class KillOnce(WorkerPlugin):
        name = "boostlab-test-kill-once"

        def __init__(self):
            self.arm, self.cells, self.after = str(arm), str(cells), after

        def transition(self, key, start, finish, **kwargs):
            if finish != "executing" or "_run_batch" not in str(key) or not os.path.exists(self.arm):
                return
            done = len([p for p in os.listdir(self.cells) if p.endswith(".json")]) if os.path.isdir(self.cells) else 0
            if done < self.after:
                return
            try:
                os.remove(self.arm)  # only one worker wins, and only once
            except FileNotFoundError:
                return
            Path(self.arm + ".killed").write_text(f"{key} {done}")
            os._exit(1)

    return KillOnce()


@pytest.fixture(scope="module")
def grid_here(tmp_path_factory):
    """The spec and its reference records from an in-process run (equal to `boostlab
    experiment`'s: test_in_process_run_equals_local_run)."""
    d = tmp_path_factory.mktemp("grid-here")
    spec = write_grid(d)
    out = d / "local"
    assert bx.run(spec, out, client="local").is_complete
    return spec, out


def _wait_for_workers(client, n, timeout=60.0):
    deadline = time.monotonic() + timeout
    while len(client.scheduler_info()["workers"]) < n:
        assert time.monotonic() < deadline, "the nanny did not restart the killed worker"
        time.sleep(0.1)


@pytest.mark.dask
@pytest.mark.slow
def test_dask_grid_with_a_worker_killed_mid_task(grid_here, tmp_path):
    """A worker process killed while it runs a batch of cells (after some records are written):
    by default Dask reruns the lost batch on another worker (a cell is pure and its record is
    written atomically by the client) and the run completes by itself; when Dask gives up on the
    batch (`allowed-failures` 0: `KilledWorker`), its cells are reported as failed, nothing is
    half-written, and rerunning the same call completes the grid. Either way the records are the
    local run's, byte for byte."""
    from distributed import Client, LocalCluster

    spec, local = grid_here
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, worker_dashboard_address=None
    ) as cluster, Client(cluster) as client:
        # 1. Dask reschedules the lost batch: the run completes, every record the local one.
        out = tmp_path / "rescheduled"
        arm = tmp_path / "arm1"
        arm.write_text("")
        client.register_plugin(_kill_once(arm, out / "cells", after=3))
        s = bx.run(spec, out, client=client, batch_size=2)
        killed = Path(str(arm) + ".killed")
        assert killed.exists() and not arm.exists(), "no worker was killed: the grid ran too fast"
        assert int(killed.read_text().split()[-1]) >= 3
        assert (s.completed, s.failures) == (N_CELLS, []) and s.is_complete
        assert cells_of(out) == cells_of(local)
        assert (out / "results.jsonl").read_bytes() == (local / "results.jsonl").read_bytes()

        # 2. Dask gives up on the lost batch: its cells fail, the rest are recorded; resumed
        # (the same call, on the same cluster with the nanny's new worker), the grid completes.
        _wait_for_workers(client, 2)
        client.run_on_scheduler(lambda dask_scheduler: setattr(dask_scheduler, "allowed_failures", 0))
        out = tmp_path / "killed"
        arm = tmp_path / "arm2"
        arm.write_text("")
        client.register_plugin(_kill_once(arm, out / "cells", after=3))
        s = bx.run(spec, out, client=client, batch_size=2)
        assert Path(str(arm) + ".killed").exists(), "no worker was killed: the grid ran too fast"
        assert s.failures and not s.is_complete
        # The batch that ran on the killed worker (2 cells; at most one more it held queued).
        assert len(s.failures) in (2, 4), s.failures
        assert all("KilledWorker" in msg for _, msg in s.failures), s.failures
        assert s.completed == N_CELLS - len(s.failures) == len(cells_of(out))
        assert not [p for p in (out / "cells").iterdir() if p.name.startswith(".")]
        n_failed = len(s.failures)
        _wait_for_workers(client, 2)
        s = bx.run(spec, out, client=client, batch_size=2)
        assert (s.already_done, s.completed, s.failures) == (N_CELLS - n_failed, n_failed, [])
        assert s.is_complete
        assert cells_of(out) == cells_of(local)
        assert (out / "results.jsonl").read_bytes() == (local / "results.jsonl").read_bytes()
