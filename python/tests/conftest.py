"""Shared fixtures: the `boostlab` command-line binary and the Dask cluster of the distributed tests.

The tests are grouped in folders by feature; `helpers.py` (data and comparisons) and
`dask_helpers.py` are importable from every folder (`pythonpath` in pyproject.toml). Markers:
`dask` (needs `distributed`, starts a local cluster) and `slow` (takes several seconds); for
example `pytest -m "not slow and not dask"` runs the quick local tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `boostlab` binary: $BOOSTLAB_CLI, else release/boostlab under cargo's target directory
    ($CARGO_TARGET_DIR, relative to the repository, or target/), built if missing."""
    target = ROOT / os.environ.get("CARGO_TARGET_DIR", "target")  # an absolute one replaces ROOT
    path = Path(os.environ.get("BOOSTLAB_CLI", target / "release" / "boostlab"))
    if not path.exists():
        if shutil.which("cargo") is None:
            pytest.fail(f"no boostlab binary at {path} and no cargo to build it")
        subprocess.run(
            ["cargo", "build", "--release", "-p", "boostlab-cli", "--quiet"], cwd=ROOT, check=True
        )
    return path


@pytest.fixture(scope="session")
def client():
    """A `distributed.Client` on a local cluster of 2 worker processes × 1 thread, without work
    stealing (so that a partition stays on the worker that holds its data: the tests place
    partitions on purpose), shared by the Dask tests of the session. Without Dask installed the
    tests that take it are skipped, except under CI (where scripts/test.sh installs it)."""
    if not os.environ.get("CI"):
        pytest.importorskip("distributed", reason="boostlab.dask needs pip install 'boostlab[dask]'")
    import dask
    import distributed

    from dask_helpers import local_cluster

    with dask.config.set({"distributed.scheduler.work-stealing": False}):
        cluster = local_cluster()
        c = distributed.Client(cluster)
    with cluster, c:
        yield c


@pytest.fixture(scope="session")
def bdask(client):
    """`boostlab.dask`, for modules that mix local and Dask tests (imported once Dask is known to be
    installed)."""
    from boostlab import dask as bdask

    return bdask


@pytest.fixture(scope="session")
def cancer():
    """The breast-cancer data as `(X, y)`."""
    from sklearn.datasets import load_breast_cancer

    return load_breast_cancer(return_X_y=True)
