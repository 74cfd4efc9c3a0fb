#!/usr/bin/env bash
# Side-by-side benchmark: creates bench/.venv with the peers (scikit-learn, LightGBM,
# XGBoost from pip), builds the boostlab side in release, runs bench/run.py and regenerates
# docs/reference/benchmarks.md and docs/figures/bench_time_vs_n.svg. Not part of the test suite.
#   bash bench/run.sh                 # full run: 10k, 100k, 1M rows, adult, 7-class; 2 and 1 threads
#   bash bench/run.sh --quick         # 10k and 100k only
#   bash bench/run.sh --sizes 1000000 --repeats 3 --workloads trees8
# BENCH_PYTHON=/path/to/python uses an existing interpreter that already has the peers instead.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${BENCH_PYTHON:-}" ]]; then
  PY="$BENCH_PYTHON"
else
  if [[ ! -x bench/.venv/bin/python ]]; then
    python3 -m venv bench/.venv
  fi
  PY=bench/.venv/bin/python
  "$PY" -m pip install --quiet --disable-pip-version-check numpy scikit-learn lightgbm xgboost
fi
cargo build --release --quiet -p boostlab-bench
exec "$PY" bench/run.py "$@"
