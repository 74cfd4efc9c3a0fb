#!/usr/bin/env bash
# The whole test suite: Rust (library, CLI, bindings) and the Python package.
# Usage: bash scripts/test.sh        (CI=true makes tests that need ../shared fail instead of skip)
# The Python part builds the package into .venv (git-ignored) from PyPI and crates.io; set
# BOOSTLAB_SKIP_PYTHON=1 to run the Rust tests only.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-targets

if [[ "${BOOSTLAB_SKIP_PYTHON:-}" == 1 ]]; then
  exit 0
fi
started=$SECONDS
# The CLI binary, for the tests that compare Python with the command-line tool.
cargo build --release -p boostlab-cli --quiet
export BOOSTLAB_CLI="$PWD/target/release/boostlab"
python3 -m venv .venv
py=.venv/bin/python
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet numpy scipy scikit-learn pandas polars pytest
# Builds the release wheel (maturin, from pyproject.toml) and installs it with its dependencies.
"$py" -m pip install --quiet .
echo "python package built and installed in $((SECONDS - started)) s"
# From python/tests, so that `import boostlab` is the installed package.
(cd python/tests && ../../"$py" -m pytest -q -p no:cacheprovider .)
echo "python part: $((SECONDS - started)) s"
