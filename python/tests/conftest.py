"""Shared fixtures: the repository, the `boostlab` command-line binary and the shared datasets."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `boostlab` binary: $BOOSTLAB_CLI, else target/release/boostlab (built if missing)."""
    path = Path(os.environ.get("BOOSTLAB_CLI", ROOT / "target" / "release" / "boostlab"))
    if not path.exists():
        if shutil.which("cargo") is None:
            pytest.fail(f"no boostlab binary at {path} and no cargo to build it")
        subprocess.run(
            ["cargo", "build", "--release", "-p", "boostlab-cli", "--quiet"], cwd=ROOT, check=True
        )
    return path


def shared_dataset(name: str) -> Path:
    """A file of ../shared/datasets: a missing file fails the test under CI and skips it
    otherwise."""
    path = SHARED / name
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing (CI is set)")
        pytest.skip(f"{path} not found")
    return path
