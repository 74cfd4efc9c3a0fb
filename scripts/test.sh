#!/usr/bin/env bash
# The whole test suite: Rust (library, CLI, bindings) and the Python package.
# Usage: bash scripts/test.sh        (CI=true makes tests that need ../shared fail instead of skip)
# The Python part builds the package into .venv (git-ignored) from PyPI and crates.io; set
# BOOSTLAB_SKIP_PYTHON=1 to run the Rust tests only.
set -euo pipefail
cd "$(dirname "$0")/.."
# boostlab-py has no Rust tests (it is tested from Python below; clippy checks it in .ci/run).
cargo test --workspace --all-targets --exclude boostlab-py
cargo test --workspace --doc --exclude boostlab-py
# The memory-traffic counters (feature `traffic`, off in the lines above): their one test.
cargo test -p boostlab --features traffic --lib traffic

if [[ "${BOOSTLAB_SKIP_PYTHON:-}" == 1 ]]; then
  exit 0
fi
started=$SECONDS
step=$SECONDS
lap() { echo "[python part] $1: $((SECONDS - step)) s"; step=$SECONDS; }
# The CLI binary, for the tests that compare Python with the command-line tool.
cargo build --release -p boostlab-cli --quiet
# Where cargo put it: $CARGO_TARGET_DIR (relative to this directory) when set, else ./target.
target_dir=${CARGO_TARGET_DIR:-target}
case $target_dir in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export BOOSTLAB_CLI="$target_dir/release/boostlab"
lap "CLI release build"
python3 -m venv .venv
py=.venv/bin/python
"$py" -m pip install --quiet --upgrade pip
# matplotlib, onnx and onnxruntime: the plots and the ONNX export are tested;
# dask[distributed,dataframe]: the Dask estimators (the `dask` extra); cryptography:
# the Dask test on a TLS cluster (`Security.temporary()`); skl2onnx: boostlab's converter for
# pipelines; shap and treelite: the exports
# `to_shap` and `to_treelite` are tested against boostlab's contributions and scores; pyspark: the
# Spark estimators (`boostlab.spark`, with pyarrow for its Arrow batches; the tests start a local[2]
# session, which needs Java 17+ on the PATH); optuna, mlflow, mapie and skops: the tuning and
# tracking integrations (boostlab.callbacks, mlflow.sklearn's default skops format and MAPIE's
# conformal classifiers). Under CI the tests of these fail instead of skipping when a package is
# missing.
"$py" -m pip install --quiet numpy scipy scikit-learn pandas polars pytest matplotlib onnx onnxruntime skl2onnx \
  'dask[distributed,dataframe]' cryptography shap treelite pyspark pyarrow optuna mlflow mapie skops duckdb
lap "venv and test dependencies"
# Builds the release wheel (maturin, from pyproject.toml, in an isolated build environment) and
# installs it with its dependencies: the path of a user's `pip install .`.
"$py" -m pip install --quiet .
lap "pip install . (wheel build)"
# From python/tests, so that `import boostlab` is the installed package.
(cd python/tests && ../../"$py" -m pytest -q -p no:cacheprovider .)
lap "pytest"
echo "[python part] total: $((SECONDS - started)) s"
