#!/usr/bin/env bash
# Lint and type-check the Python code: ruff (python/, bench/, examples/, scripts/, docs/conf.py) and mypy on the package (python/boostlab),
# both configured in pyproject.toml. Installs them into the venv of $PY (default .venv/bin/python).
#   bash scripts/lint_python.sh            # with .venv
#   PY=/path/to/python bash scripts/lint_python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PY:-.venv/bin/python}"
"$py" -m pip install --quiet ruff mypy
"$py" -m ruff check python bench examples scripts docs/conf.py
"$py" -m mypy
