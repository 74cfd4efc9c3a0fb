"""Peak memory of a fit from Arrow input: `RealAdaBoostClassifier().fit` on the same float32 data
as a numpy array, a polars DataFrame, a pyarrow Table and the same Table in record batches of
100,000 rows (as a duckdb result arrives), each in a fresh process; prints the peak
RSS of the fit over the RSS after building the data (MB).

    python bench/arrow_memory.py                 # 2M × 20, 20 rounds
    python bench/arrow_memory.py --n 200000

The interpreter must have boostlab, numpy, polars and pyarrow. One job:
`python bench/arrow_memory.py --job KIND N D ROUNDS` (used internally).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    """The peak RSS since the last reset: the kernel's high-water mark (`VmHWM`), which
    `clear_refs` resets (Linux), or `ru_maxrss` of the process where it cannot be read."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _job(kind: str, n: int, d: int, rounds: int) -> None:
    import numpy as np

    import boostlab

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d), dtype=np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    names = [f"x{j}" for j in range(d)]
    if kind == "polars":
        import polars as pl

        data = pl.DataFrame({c: X[:, j] for j, c in enumerate(names)})
    elif kind.startswith("pyarrow"):
        import pyarrow as pa

        data = pa.table({c: X[:, j] for j, c in enumerate(names)})
        if kind == "pyarrow-batches":
            data = pa.Table.from_batches(data.to_batches(max_chunksize=100_000))
    else:
        data = X
    if kind != "numpy":
        # Columns copied out of the row-major array: only the frame's own buffers remain.
        del X
    import gc

    gc.collect()
    base = _rss_mb()
    # The peak so far (building the data) is reset, so that the peak is the fit's.
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    boostlab.RealAdaBoostClassifier(n_estimators=rounds, max_leaves=2, learning_rate=1.0, calibration=None).fit(data, y)
    peak = _peak_mb()
    print(f"{peak - base:.0f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=2_000_000)
    p.add_argument("--d", type=int, default=20)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--job", nargs=4, metavar=("KIND", "N", "D", "ROUNDS"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.job:
        kind, n, d, rounds = a.job
        _job(kind, int(n), int(d), int(rounds))
        return
    data_mb = a.n * a.d * 4 / 2**20
    print(f"{a.n} x {a.d} float32 ({data_mb:.0f} MB), RealAdaBoostClassifier(n_estimators={a.rounds}, max_leaves=2, learning_rate=1)")
    print("peak RSS of the fit over the RSS after building the data:")
    for kind in ("numpy", "polars", "pyarrow", "pyarrow-batches"):
        cmd = [sys.executable, __file__, "--job", kind, str(a.n), str(a.d), str(a.rounds)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
        print(f"  {kind:16s} +{out} MB")


if __name__ == "__main__":
    main()
