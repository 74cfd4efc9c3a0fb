#!/usr/bin/env python3
"""Write intersphinx inventories (objects.inv) for scikit-learn and numpy from the installed packages.

The documentation links to scikit-learn's and numpy's API pages, but the machine that builds it
has no network access, so Sphinx cannot download their inventories. This script writes them
locally instead: every public name of the modules listed below, with the URL that name has on the
project's site (the layout of their generated API pages). The format is Sphinx's inventory
version 2: four header lines, then zlib-compressed lines `name domain:role priority uri dispname`.

Usage: python scripts/docs_inventory.py [OUT_DIR]   (default docs/_build/inventories)
"""

from __future__ import annotations

import importlib
import inspect
import sys
import zlib
from pathlib import Path

SKLEARN_MODULES = [
    "sklearn",
    "sklearn.base",
    "sklearn.calibration",
    "sklearn.datasets",
    "sklearn.ensemble",
    "sklearn.inspection",
    "sklearn.linear_model",
    "sklearn.metrics",
    "sklearn.model_selection",
    "sklearn.pipeline",
    "sklearn.preprocessing",
    "sklearn.tree",
    "sklearn.utils",
    "sklearn.utils.estimator_checks",
]
NUMPY_MODULES = ["numpy", "numpy.random"]


def _role(obj: object) -> str:
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def _entries(modules: list[str], page) -> list[str]:
    """Inventory lines for the public names of `modules`; `page(name)` is a name's page."""
    lines: list[str] = []
    seen: set[str] = set()

    def add(name: str, role: str, uri: str) -> None:
        if name not in seen:
            seen.add(name)
            lines.append(f"{name} py:{role} 1 {uri} -")

    for modname in modules:
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        add(modname, "module", page(modname, module=True))
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for n in sorted(names):
            try:
                obj = getattr(mod, n, None)
            except ImportError:  # experimental names that need an explicit opt-in import
                continue
            if obj is None or inspect.ismodule(obj):
                continue
            full = f"{modname}.{n}"
            role = _role(obj)
            add(full, role, page(full))
            if role == "class":
                for m, member in sorted(vars(obj).items()):
                    if not m.startswith("_") and callable(member):
                        add(f"{full}.{m}", "method", page(full) + f"#{full}.{m}")
    return lines


def _sklearn_page(name: str, module: bool = False) -> str:
    if module:
        return f"api/{name}.html"
    return f"modules/generated/{name}.html#$"


def _numpy_page(name: str, module: bool = False) -> str:
    if module:
        return "reference/index.html"
    return f"reference/generated/{name}.html#$"


def write(path: Path, project: str, version: str, lines: list[str]) -> None:
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header + zlib.compress(("\n".join(lines) + "\n").encode()))


def main(out: Path) -> None:
    import numpy
    import sklearn

    write(out / "sklearn.inv", "scikit-learn", sklearn.__version__, _entries(SKLEARN_MODULES, _sklearn_page))
    write(out / "numpy.inv", "NumPy", numpy.__version__, _entries(NUMPY_MODULES, _numpy_page))
    print(f"inventories written to {out}")


if __name__ == "__main__":
    main(
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[1] / "docs" / "_build" / "inventories"
    )
