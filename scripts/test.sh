#!/usr/bin/env bash
# The whole test suite: Rust (library + CLI) and, when present, the Python package.
# Usage: bash scripts/test.sh        (CI=true makes tests that need ../shared fail instead of skip)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-targets
cargo test --workspace --doc
