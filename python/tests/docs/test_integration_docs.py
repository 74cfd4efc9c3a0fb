"""The Python code blocks of the integration pages run: the Optuna / MLflow / MAPIE how-to guide
(in order, with MLflow tracking to a file store in a temporary folder) and the metadata-routing
example of the Python reference."""

from __future__ import annotations

import re

from helpers import ROOT, optional_module

PAGE = ROOT / "docs" / "how-to" / "tuning-tracking.md"


def test_tuning_tracking_page_runs(tmp_path, monkeypatch, capsys):
    for name in ("optuna", "mlflow", "mapie", "skops"):
        optional_module(name)
    import mlflow

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    monkeypatch.setenv("MLFLOW_ALLOW_PICKLE_DESERIALIZATION", "true")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    try:
        namespace: dict = {}
        blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
        assert len(blocks) == 5
        for block in blocks:
            exec(compile(block, str(PAGE), "exec"), namespace)
    finally:
        while mlflow.active_run() is not None:
            mlflow.end_run()
        mlflow.set_tracking_uri(previous)
    out = capsys.readouterr().out
    assert float(re.search(r"best validation error (\d\.\d+)", out).group(1)) < 0.1
    logged, kept = map(int, re.search(r"(\d+) rounds logged, (\d+) kept", out).groups())
    assert logged >= kept >= 1
    assert float(re.search(r"coverage (\d\.\d+)", out).group(1)) >= 0.8


def test_metadata_routing_example_of_the_python_reference_runs(capsys):
    page = ROOT / "docs" / "reference" / "python.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(page), "exec"), {})
    assert re.search(r"\{'max_leaves': [24]\} 0\.\d+", capsys.readouterr().out)
