"""Every `python` row of the bad-input table in docs/reference/errors.md raises
exactly the exception the table shows (`type: message`). The table cannot drift from the code."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

import boostlab
from boostlab import *  # noqa: F403 - the rows name the estimators as a user would

from helpers import ROOT


def _cells(line: str) -> list[str]:
    cells, cur, i = [], "", 0
    body = line.strip().strip("|")
    while i < len(body):
        if body[i] == "\\" and body[i + 1 : i + 2] == "|":
            cur += "|"
            i += 2
            continue
        if body[i] == "|":
            cells.append(cur.strip())
            cur = ""
        else:
            cur += body[i]
        i += 1
    cells.append(cur.strip())
    return cells


def _code(cell: str) -> str:
    assert cell.startswith("`` ") and cell.endswith(" ``"), cell
    return cell[3:-3]


def table_rows():
    doc = (ROOT / "docs" / "reference" / "errors.md").read_text(encoding="utf-8")
    section = doc.split("\n## Bad inputs", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| #"):
            c = _cells(line)
            assert len(c) == 5, line
            rows.append((c[0], c[1], _code(c[3]), _code(c[4])))
    return rows


ROWS = table_rows()
PY_ROWS = [r for r in ROWS if r[1] == "python"]


def test_the_table_has_at_least_30_rows():
    assert len(ROWS) >= 30
    assert len(PY_ROWS) >= 15


@pytest.fixture(scope="module")
def namespace():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = boostlab.AdaBoostClassifier(n_estimators=3).fit(X, y)
        # A model with a categorical feature `c` (and a numeric `x`), fitted on a DataFrame.
        frame = pd.DataFrame({"x": X[:, 0], "c": np.where(X[:, 1] > 0, "red", "blue")})
        cat_fitted = boostlab.AdaBoostClassifier(n_estimators=3).fit(frame, y)
    ns = dict(vars(boostlab))
    ns.update(np=np, pd=pd, boostlab=boostlab, X=X, y=y, y3=np.arange(60) % 3, fitted=fitted, cat_fitted=cat_fitted)
    return ns


@pytest.mark.parametrize("row", PY_ROWS, ids=[r[0] for r in PY_ROWS])
def test_bad_input_row(row, namespace, tmp_path, monkeypatch):
    _, _, code, want = row
    (tmp_path / "bad.json").write_text("{not json")
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BaseException) as info:
            eval(code, dict(namespace))  # noqa: S307 - the table's own rows
    got = f"{type(info.value).__name__}: {info.value}"
    assert got == want
    assert os.getcwd() == str(tmp_path)
