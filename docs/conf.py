"""Sphinx configuration of the boostlab documentation (built by scripts/docs.sh)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent


def _version() -> str:
    for line in (ROOT / "Cargo.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    return "unknown"


project = "boostlab"
author = "the boostlab developers"
copyright = "the boostlab developers; MIT OR Apache-2.0"
release = version = _version()

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "sphinx.ext.intersphinx",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.pickle",
]

# MyST: $…$ and $$…$$ maths, ::: fences, definition lists; headings up to ### get anchors so that
# `page.md#a-heading` links resolve.
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# The Python API from the numpydoc docstrings. Members inherited from scikit-learn are left to
# scikit-learn's own reference.
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# Links into scikit-learn's and numpy's references, from inventories written locally by
# scripts/docs_inventory.py (the build machine has no network access).
_INV = DOCS / "_build" / "inventories"
if not (_INV / "sklearn.inv").exists() or not (_INV / "numpy.inv").exists():
    subprocess.run([sys.executable, str(ROOT / "scripts" / "docs_inventory.py"), str(_INV)], check=True)
intersphinx_mapping = {
    "sklearn": ("https://scikit-learn.org/stable/", str(_INV / "sklearn.inv")),
    "numpy": ("https://numpy.org/doc/stable/", str(_INV / "numpy.inv")),
}

# The examples in examples/ run at every build; a failing example fails the build.
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "sphinx_gallery.sorting.FileNameSortKey",
}

# Docstrings are written to be read with help() first: a plain-text `n_features_in_` or `|α|`
# there is not meant as reST markup (a reference, a substitution). Quote such words as literals
# before numpydoc and docutils see them.
_BARE_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w*:.])([A-Za-z][A-Za-z0-9_]*_)(?![`\w*:])")
_BARS = re.compile(r"(?<![`\\])\|([^|`\s][^|`]*?)\|")


def _plain_text_docstring(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if line.lstrip().startswith((".. ", ">>>")):
            continue
        parts = line.split("`")
        for j in range(0, len(parts), 2):  # outside backquotes only
            part = _BARE_TRAILING_UNDERSCORE.sub(r"``\1``", parts[j])
            parts[j] = _BARS.sub(r"\\|\1\\|", part)
        lines[i] = "`".join(parts)


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Members inherited from scikit-learn (metadata routing, get_params, ...) are documented there."""
    module = getattr(obj, "__module__", "") or ""
    if module.startswith("sklearn"):
        return True
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _plain_text_docstring)
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)


html_theme = "furo"
html_title = f"boostlab {release}"
html_static_path: list[str] = []
