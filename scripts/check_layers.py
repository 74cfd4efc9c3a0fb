#!/usr/bin/env python3
"""Check that every module of crates/boostlab/src imports only from its own layer or below.

The layers (the same as the crate documentation in lib.rs), lowest first:

    0  error, util (par, fastmath, cancel, fs)
    1  math (tempered, loss), data (schema, views, weights, bins/, readers)
    2  params
    3  tree, collective
    4  model
    5  eval
    6  boost
    7  select
    8  experiment, explain, onnx, fuzzing

A file belongs to the layer of its top-level module (`tree/split/simd.rs` is in `tree`). For each
file the script finds `use crate::…` items (braced groups included), `crate::x::` paths written
inline, and `super::` paths that climb out of the file's top-level module; an import of a module in
a higher layer is a violation. Imports within one layer are allowed in both directions.

Test code may import anything: items under `#[cfg(test)]` (a `mod tests { … }`, a test-only `use`,
a helper function) are skipped, as are files named `tests.rs`, `*_tests.rs`, `test_support.rs`,
`testutil.rs`, and files that are declared by a `#[cfg(test)] mod x;`. lib.rs (the root, which
re-exports the public API) is not checked.

Known violations that are accepted for now are listed in scripts/layers_allow.txt, one
`file -> module` per line (paths relative to crates/boostlab/src), each with a `#` comment saying
why.

Usage: python3 scripts/check_layers.py [--all]   (exit 1 on any violation not allow-listed;
--all also prints the allow-listed ones)
"""

import os
import re
import sys

LAYERS = [
    ("error", "util", "par", "fastmath", "cancel", "fs"),
    ("math", "tempered", "loss", "data"),
    ("params",),
    ("tree", "collective"),
    ("model",),
    ("eval",),
    ("boost",),
    ("select",),
    ("experiment", "explain", "onnx", "fuzzing"),
]
LAYER_OF = {m: i for i, mods in enumerate(LAYERS) for m in mods}

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "crates", "boostlab", "src")
ALLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers_allow.txt")

TEST_FILE = re.compile(r"(^|_)tests\.rs$|^test_support\.rs$|^testutil\.rs$")


def strip_comments_and_strings(text):
    """Blank out comments, string and char literals, keeping line structure."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'b?r(#*)"', text[i:i + 20])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12])
            if m:
                out.append("' '")
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


def blank_test_items(text):
    """Blank out every item annotated `#[cfg(test)]` (keeping line breaks)."""
    chars = list(text)
    for m in re.finditer(r"#\[cfg\(test\)\]", text):
        j = m.end()
        depth = 0
        while j < len(text):
            ch = text[j]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    j += 1
                    break
            elif ch == ";" and depth == 0:
                j += 1
                break
            j += 1
        for k in range(m.start(), min(j, len(text))):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)


def module_path(rel):
    """`boost/secboost/obi.rs` → ['boost', 'secboost', 'obi']; `boost/mod.rs` → ['boost']."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts.pop()
    return parts


def test_only_files(files):
    """Files declared by `#[cfg(test)] mod x;` (or `#[cfg(test)] #[path = …] mod x;`)."""
    out = set()
    decl = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")
    for rel, text in files.items():
        base = os.path.dirname(rel)
        if not (rel.endswith("mod.rs") or rel == "lib.rs"):
            base = rel[:-3]
        for m in decl.finditer(text):
            for cand in (f"{base}/{m.group(1)}.rs", f"{base}/{m.group(1)}/mod.rs"):
                out.add(cand.lstrip("/"))
    return out


def use_targets(code):
    """(line, top-level module) for each `use crate::…` tree, braces expanded."""
    for m in re.finditer(r"\buse\s+crate::", code):
        line = code.count("\n", 0, m.start()) + 1
        j = m.end()
        if j < len(code) and code[j] == "{":
            depth, k = 0, j
            while k < len(code):
                if code[k] == "{":
                    depth += 1
                elif code[k] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            inner = code[j + 1:k]
            # top-level entries of the group: split at depth-0 commas
            depth, start = 0, 0
            for p, ch in enumerate(inner + ","):
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                elif ch == "," and depth == 0:
                    item = inner[start:p].strip()
                    start = p + 1
                    name = re.match(r"(\w+)", item)
                    if name:
                        yield line + inner.count("\n", 0, p - len(item)), name.group(1)
        else:
            name = re.match(r"(\w+)", code[j:])
            if name:
                yield line, name.group(1)


def imports(rel, code):
    """(line, top-level module) of every reference to another top-level module."""
    found = set()
    for line, mod in use_targets(code):
        found.add((line, mod))
    for m in re.finditer(r"(?<![\w$])crate::(\w+)", code):
        found.add((code.count("\n", 0, m.start()) + 1, m.group(1)))
    depth_of_file = len(module_path(rel))
    for m in re.finditer(r"(?<![\w:])((?:super::)+)(\w+)", code):
        ups = m.group(1).count("super::")
        if ups >= depth_of_file:
            # climbs to the crate root: the next segment is a top-level module
            found.add((code.count("\n", 0, m.start()) + 1, m.group(2)))
    return sorted(found)


def load_allow():
    allow = set()
    if not os.path.exists(ALLOW):
        return allow
    with open(ALLOW, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            left, _, right = line.partition("->")
            allow.add((left.strip(), right.strip()))
    return allow


def main():
    show_all = "--all" in sys.argv[1:]
    files = {}
    for dirpath, _, names in os.walk(SRC):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, SRC).replace(os.sep, "/")
                with open(path, encoding="utf-8") as f:
                    files[rel] = f.read()
    test_files = test_only_files(files)
    allow = load_allow()
    used_allow = set()
    violations, allowed, unknown = [], [], set()
    for rel in sorted(files):
        if rel == "lib.rs" or rel in test_files or TEST_FILE.search(os.path.basename(rel)):
            continue
        top = module_path(rel)[0]
        if top not in LAYER_OF:
            unknown.add(top)
            continue
        code = blank_test_items(strip_comments_and_strings(files[rel]))
        for line, target in imports(rel, code):
            if target == top or target in ("self", "super"):
                continue
            if target not in LAYER_OF:
                continue  # a crate-root item (re-export or macro), not a module
            if LAYER_OF[target] <= LAYER_OF[top]:
                continue
            entry = f"{rel}:{line}: {top} (layer {LAYER_OF[top]}) -> {target} (layer {LAYER_OF[target]})"
            if (rel, target) in allow:
                used_allow.add((rel, target))
                allowed.append(entry)
            else:
                violations.append(entry)
    for top in sorted(unknown):
        print(f"warning: top-level module '{top}' is in no layer; add it to LAYERS", file=sys.stderr)
    for left, right in sorted(allow - used_allow):
        print(f"note: allow-list entry '{left} -> {right}' matches nothing; remove it", file=sys.stderr)
    if show_all and allowed:
        print(f"{len(allowed)} allow-listed (scripts/layers_allow.txt):")
        for v in allowed:
            print("  " + v)
    if violations:
        print(f"{len(violations)} upward import(s):")
        for v in violations:
            print("  " + v)
        return 1
    print(f"layers ok ({len(files)} files; {len(allowed)} allow-listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
