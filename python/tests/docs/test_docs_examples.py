"""The Python code blocks of the tutorials and how-to guides run (the README's quick start among them)."""

from __future__ import annotations

import re

from helpers import ROOT

DOCS = ROOT / "docs"
PAGES = [
    "tutorials/first-model-python.md",
    "how-to/early-stopping-warm-start.md",
    "how-to/explain-export.md",
    "how-to/shap-treelite.md",
    "how-to/input-formats.md",
    "how-to/sample-weights.md",
    "how-to/constraints.md",
    "how-to/custom-secboost-loss.md",
    "how-to/multi-label.md",
    "how-to/threads-memory.md",
    "how-to/choosing-t.md",
]


def test_python_blocks_of_the_docs_run(capsys):
    n = 0
    for page in PAGES:
        doc = DOCS / page
        for block in re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S):
            exec(compile(block, str(doc), "exec"), {})
            n += 1
    assert n >= 8
    out = capsys.readouterr().out
    accuracy = float(re.search(r"accuracy (\d\.\d+)", out).group(1))
    assert accuracy > 0.93
