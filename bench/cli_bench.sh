#!/usr/bin/env bash
# The command-line benchmark: boostlab train on CSV and Parquet vs LightGBM's own CSV
# parser + training, fresh processes, peak RSS. Writes the "command-line path" section of
# docs/reference/benchmarks.md. Options go to bench/cli_bench.py (--rows, --repeats, --threads, --rounds, --no-write).
# BENCH_PYTHON=/path/to/python uses an interpreter that already has numpy, polars and lightgbm.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${BENCH_PYTHON:-}" ]]; then
  PY="$BENCH_PYTHON"
else
  if [[ ! -x bench/.venv/bin/python ]]; then
    python3 -m venv bench/.venv
  fi
  PY=bench/.venv/bin/python
  "$PY" -m pip install --quiet --disable-pip-version-check numpy polars lightgbm
fi
cargo build --release --quiet -p boostlab-cli
exec "$PY" bench/cli_bench.py "$@"
