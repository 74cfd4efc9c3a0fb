#!/usr/bin/env python3
"""Fails when the product mentions the project's issue numbers or development rounds.

Code comments say why, not when; CLI help and output, docstrings, docs and test names are read by
users, who have no use for the tracker's numbering. History belongs in CHANGELOG.md and git.

Usage: python3 scripts/check_no_history.py   (exit status 1 and one line per hit when any)
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Files that may tell history: the changelog, and this script (which names the patterns).
ALLOWED = {"CHANGELOG.md", "scripts/check_no_history.py"}

PATTERNS = [
    # "issue 13", "issues 12 and 14", "Issue #7", "issue_13_dask", "test_issue_4"
    re.compile(r"\bissues?[ _#-]*\d+", re.IGNORECASE),
    re.compile(r"issue_\d+", re.IGNORECASE),
    # development rounds and optimisation logs
    re.compile(r"\b(optimi[sz]ation|development|work) rounds?\b", re.IGNORECASE),
    re.compile(r"\brounds? of (work|optimi[sz]ation)\b", re.IGNORECASE),
    re.compile(r"\b(last|previous|this|next) (session|round of work)\b", re.IGNORECASE),
    # "session 9", "session_9_reused_buffers"
    re.compile(r"\bsessions?[ _#-]*\d+", re.IGNORECASE),
]


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def main() -> int:
    hits = []
    for rel in tracked_files():
        if rel in ALLOWED:
            continue
        path = ROOT / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binaries (fuzz corpora, figures) and files deleted in the work tree
        for pattern in PATTERNS:
            if pattern.search(rel):
                hits.append(f"{rel}: file name matches {pattern.pattern!r}")
        for lineno, line in enumerate(text.splitlines(), 1):
            for pattern in PATTERNS:
                m = pattern.search(line)
                if m:
                    hits.append(f"{rel}:{lineno}: {m.group(0)!r}: {line.strip()[:120]}")
                    break
    for h in hits:
        print(h)
    if hits:
        print(f"{len(hits)} mention(s) of issue numbers or development rounds in the product", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
