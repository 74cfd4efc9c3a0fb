"""The Python code blocks of docs/python.md run (the README's quick start among them)."""

from __future__ import annotations

import re

from helpers import ROOT

DOC = ROOT / "docs" / "python.md"


def test_python_blocks_of_the_docs_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})
    out = capsys.readouterr().out
    accuracy = float(re.search(r"accuracy (\d\.\d+)", out).group(1))
    assert accuracy > 0.93
