#!/usr/bin/env bash
# Builds the documentation site (Sphinx + MyST, sphinx-gallery examples executed) with warnings
# as errors: docs/_build/html/index.html.
# Usage: PY=/path/to/venv/bin/python bash scripts/docs.sh
# The venv must already hold boostlab (scripts/test.sh installs it into .venv); this script adds
# the documentation tools to it (and optuna, which a gallery example uses). No network access is needed at build time: the intersphinx
# inventories of scikit-learn and numpy are generated from the installed packages.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -c "import boostlab" || { echo "docs.sh: boostlab is not installed in $PY (run scripts/test.sh first)" >&2; exit 1; }
"$PY" -m pip install --quiet sphinx myst-parser numpydoc sphinx-gallery furo matplotlib scikit-learn optuna
"$PY" scripts/docs_inventory.py docs/_build/inventories
rm -rf docs/auto_examples docs/_build/html
"$PY" -m sphinx -W --keep-going -b html docs docs/_build/html
echo "docs: docs/_build/html/index.html"
