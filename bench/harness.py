"""What the benchmark scripts share: paths, the data sets, timing in fresh processes, the versions
measured and the writing of their sections of docs/reference/benchmarks.md.

- Data (`synthetic`, `predict_matrix`, `adult`, `covertype_like`, `letter_like`): scikit-learn's
  make_classification with random_state=0, generated once into bench/out (git-ignored) as raw
  float32 row-major matrices (`*_X.f32`) and uint8 labels (`*_y.u8`); each returns a description
  of the set (`{"name", "key", "d", "classes", "train", "test", "N"}`).
- In a measured process: `rss_kib()` (current and peak RSS from /proc/self/status) and
  `reset_peak()` (resets the peak, VmHWM, through /proc/self/clear_refs), around the timed call;
  `cpu_s()` is the process's CPU time (user + sys, every thread).
- From the driver: `fresh(cmd, env)` runs one command in a fresh process and returns its wall
  time, CPU time (user + sys of the child, from wait4) and peak RSS (ru_maxrss), with its output;
  `fresh_json` the last line of its output as JSON; `thread_env(n)` the environment of a run on
  n threads (Rayon and OpenMP).
- Reports: `module_versions` / `package_versions`, `load_note` (whether the machine was busy) and
  `write_doc_section` (the part of docs/reference/benchmarks.md between a script's markers).

On a shared machine wall-clock times depend on the other jobs; CPU time much less so (it still
grows a little under contention), so the scripts report both, as medians of repeated runs.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
DOC = ROOT / "docs" / "reference" / "benchmarks.md"
ADULT = ROOT.parent / "shared" / "datasets" / "adult.csv"
PREDICT_ROWS = 1_000_000
# A 1-minute load average this far above the run's own threads: the report says it was measured
# under load (the benchmark's own threads keep the average near their number on an idle machine).
BUSY_EXTRA = 0.5


# ------------------------------------------------------------------------------ timing, measured side
def rss_kib():
    """(VmRSS, VmHWM) of this process in KiB."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out.get("VmRSS", 0), out.get("VmHWM", 0)


def reset_peak():
    """Resets this process's peak RSS (VmHWM) to its current RSS, where the kernel allows it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def cpu_s():
    """CPU time of this process so far (user + sys, all threads), in seconds."""
    t = os.times()
    return t.user + t.system


# ------------------------------------------------------------------------------ timing, driver side
def thread_env(threads):
    """The environment of a run on `threads` threads (boostlab's Rayon pool, the peers' OpenMP)."""
    return dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))


def fresh(cmd, env=None):
    """Runs `cmd` in a fresh process: dict(wall_s, cpu_s, rss_mb, stdout, stderr). Exits with the
    command's error output when it fails."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    # Read the pipes to the end, then reap the child with wait4 for its own resource usage.
    out, err = p.stdout.read(), p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(map(str, cmd))}\n{err.decode()}")
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024,
            "stdout": out.decode(), "stderr": err.decode()}


def fresh_json(cmd, env=None):
    """`fresh(cmd, env)`'s last line of output, a JSON document (what a job prints)."""
    return json.loads(fresh(cmd, env)["stdout"].strip().splitlines()[-1])


def interleaved(cmds, repeats, env, loads):
    """Runs the jobs `cmds` (name → command line of a job that prints JSON) `repeats` times,
    interleaved: each repeat runs every job once, in turn, so that a slow spell of the host (a
    neighbour's load, a lower memory bandwidth) falls on all of them alike. Returns name → the
    repeats' JSON documents; appends the 1-minute load average after each run to `loads`."""
    runs = {name: [] for name in cmds}
    for _ in range(repeats):
        for name, cmd in cmds.items():
            runs[name].append(fresh_json(cmd, env))
            loads.append(os.getloadavg()[0])
    return runs


def median_of(runs, key):
    return statistics.median(r[key] for r in runs)


# ------------------------------------------------------------------------------------------- data
def fmt_n(n):
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else (f"{n // 1000}k" if n >= 1000 else str(n))


def save(name, X, y):
    X = np.ascontiguousarray(X, dtype=np.float32)
    X.tofile(OUT / f"{name}_X.f32")
    np.asarray(y, dtype=np.uint8).tofile(OUT / f"{name}_y.u8")
    return {"x": str(OUT / f"{name}_X.f32"), "y": str(OUT / f"{name}_y.u8"), "n": int(X.shape[0])}


def cached(name):
    x, y = OUT / f"{name}_X.f32", OUT / f"{name}_y.u8"
    if x.exists() and y.exists():
        return {"x": str(x), "y": str(y), "n": y.stat().st_size}
    return None


def make_synthetic(n_samples):
    """make_classification(n_samples, 28 features, 10 informative, random_state=0): the binary data
    of every benchmark (float64 X, int labels; the callers take float32)."""
    from sklearn.datasets import make_classification

    return make_classification(n_samples=n_samples, n_features=28, n_informative=10, random_state=0)


def synthetic(n):
    """make_classification(N + T, 28 features, 10 informative, random_state=0): the first N rows
    train, the last T = min(N/4, 100k) test."""
    t = min(n // 4, 100_000)
    tr, te = cached(f"synth{n}_train"), cached(f"synth{n}_test")
    if not (tr and te):
        OUT.mkdir(parents=True, exist_ok=True)
        X, y = make_synthetic(n + t)
        X = X.astype(np.float32)
        tr, te = save(f"synth{n}_train", X[:n], y[:n]), save(f"synth{n}_test", X[n:], y[n:])
    return {"name": f"synthetic {fmt_n(n)}", "key": f"synth{n}", "d": 28, "classes": 2, "train": tr, "test": te,
            "N": n}


def predict_matrix():
    """The 1M rows used to time prediction: the first 1M rows of make_classification(1.25M, ...),
    i.e. the training rows of the 1M data set."""
    c = cached("predict1m")
    if c:
        return c
    X, y = make_synthetic(PREDICT_ROWS + PREDICT_ROWS // 4)
    return save("predict1m", X[:PREDICT_ROWS].astype(np.float32), y[:PREDICT_ROWS])


def adult():
    """adult.csv: numeric columns as they are, categorical ones as ordinal codes (levels sorted,
    "?" one more level), the same matrix for every library; a seeded 80/20 split."""
    if not ADULT.exists():
        return None
    tr, te = cached("adult_train"), cached("adult_test")
    with open(ADULT) as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    d = len(header) - 1
    if not (tr and te):
        cols = list(zip(*rows))
        feats = []
        for j in range(d):
            try:
                feats.append(np.array([float(v) for v in cols[j]]))
            except ValueError:
                # Categorical: ordinal codes of the sorted levels; a missing "?" is one more level
                # (no NaN: scikit-learn's AdaBoost rejects it).
                levels = sorted(set(cols[j]))
                code = {v: i for i, v in enumerate(levels)}
                feats.append(np.array([code[v] for v in cols[j]], dtype=float))
        X = np.stack(feats, axis=1).astype(np.float32)
        labels = sorted(set(cols[d]))
        y = np.array([labels.index(v) for v in cols[d]])
        perm = np.random.default_rng(0).permutation(len(y))
        cut = int(0.8 * len(y))
        tr, te = save("adult_train", X[perm[:cut]], y[perm[:cut]]), save("adult_test", X[perm[cut:]], y[perm[cut:]])
    return {"name": "adult", "key": "adult", "d": d, "classes": 2, "train": tr, "test": te, "N": tr["n"]}


def covertype_like(n):
    """Covertype-like multi-class data: make_classification(N + T, 54 features, 7 classes,
    20 informative, random_state=0), T = min(N/4, 100k) test rows."""
    from sklearn.datasets import make_classification

    t = min(n // 4, 100_000)
    tr, te = cached(f"cov{n}_train"), cached(f"cov{n}_test")
    if not (tr and te):
        OUT.mkdir(parents=True, exist_ok=True)
        X, y = make_classification(
            n_samples=n + t, n_features=54, n_informative=20, n_redundant=10, n_classes=7, random_state=0
        )
        X = X.astype(np.float32)
        tr, te = save(f"cov{n}_train", X[:n], y[:n]), save(f"cov{n}_test", X[n:], y[n:])
    return {"name": f"7-class {fmt_n(n)}", "key": f"cov{n}", "d": 54, "classes": 7, "train": tr, "test": te, "N": n}


def letter_like_arrays(n, seed):
    """`letter_like`'s data drawn with generator seed `seed`, in memory: (X_train, y_train, X_test,
    y_test), float32 features."""
    from sklearn.datasets import make_classification

    t = n // 4
    X, y = make_classification(
        n_samples=n + t, n_features=16, n_informative=12, n_redundant=2, n_classes=26,
        n_clusters_per_class=1, random_state=seed,
    )
    X = X.astype(np.float32)
    return X[:n], y[:n], X[n:], y[n:]


def letter_like(n):
    """Letter-sized multi-class data: make_classification(N + T, 16 features, 26 classes, 12
    informative, 1 cluster per class, random_state=0), T = N/4 test rows (20k × 16 as UCI letter)."""
    tr, te = cached(f"letter{n}_train"), cached(f"letter{n}_test")
    if not (tr and te):
        OUT.mkdir(parents=True, exist_ok=True)
        Xtr, ytr, Xte, yte = letter_like_arrays(n, 0)
        tr, te = save(f"letter{n}_train", Xtr, ytr), save(f"letter{n}_test", Xte, yte)
    return {"name": f"26-class {fmt_n(n)}", "key": f"letter{n}", "d": 16, "classes": 26, "train": tr, "test": te,
            "N": n}


# ---------------------------------------------------------------------------------------- reports
def module_versions(*modules):
    """{module: its __version__, or "absent"} (a missing peer is reported, not fatal)."""
    out = {}
    for m in modules:
        try:
            out[m] = __import__(m).__version__
        except Exception:  # noqa: BLE001 - a missing library is reported as absent
            out[m] = "absent"
    return out


def package_versions(*dists):
    """"name version, ..." of the installed distributions among `dists`."""
    import importlib.metadata as md

    v = []
    for p in dists:
        try:
            v.append(f"{p} {md.version(p)}")
        except md.PackageNotFoundError:
            pass
    return ", ".join(v)


def bandwidth(threads):
    """The host's memory-read bandwidth in GB/s, as `boostlab-bench bandwidth` measures it with
    `threads` threads (the figure every speed ratio depends on), or None when the binary is missing
    (`cargo build --release -p boostlab-bench`, under `$CARGO_TARGET_DIR` when it is set;
    `$BOOSTLAB_BENCH` names another one)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = Path(os.environ.get("BOOSTLAB_BENCH", target / "release" / "boostlab-bench"))
    if not binary.exists():
        return None
    out = subprocess.run([str(binary), "bandwidth"], env=thread_env(threads), capture_output=True, text=True, check=True)
    return round(json.loads(out.stdout.strip().splitlines()[-1])["gb_per_s"], 1)


def paired_ratio(r, p, key):
    """The median over the repeats of `r`'s time over `p`'s in the same repeat (`key` "fit_s" or
    "fit_cpu_s"; the ratio of the medians when the repeats are not paired, as in older files)."""
    a, b = r.get(key + "_all"), p.get(key + "_all")
    if a and b and len(a) == len(b):
        return statistics.median(x / y for x, y in zip(a, b))
    return r[key] / p[key]


def bandwidth_note(gbs, threads):
    """The report's sentence on the host's memory bandwidth: `gbs` one figure, or the figures
    measured before and after the runs (a list)."""
    figures = [g for g in (gbs if isinstance(gbs, list) else [gbs]) if g is not None]
    if not figures:
        return " Memory bandwidth not measured (no boostlab-bench binary)."
    if len(figures) == 1:
        return f" Memory bandwidth (`boostlab-bench bandwidth`, {threads} threads): {figures[0]} GB/s."
    return (f" Memory bandwidth (`boostlab-bench bandwidth`, {threads} threads): {figures[0]} GB/s before the runs, "
            f"{figures[-1]} GB/s after.")


def busy(loads, threads):
    """Whether something besides the run loaded the machine: its 1-minute load averages `loads`
    above the run's own `threads` by more than BUSY_EXTRA."""
    return max(loads) > threads + BUSY_EXTRA


def load_note(loads, threads):
    """What the load during a run of `threads` threads means for the figures, for a report's first
    paragraph."""
    return (" — **measured under load**: wall ratios are noisy, CPU ratios steadier" if busy(loads, threads)
            else " (no other load)")


def write_doc_section(begin, end, text, *, heading=None, doc=DOC, append=True):
    """Replaces the part of `doc` from the marker `begin` to the marker `end` with the markers
    around `text`. Without the markers, appends that block (under the `## heading`) when `append`,
    else leaves the file as it is. Returns whether it wrote."""
    s = doc.read_text() if doc.exists() else "# Benchmarks\n\n" + begin + "\n" + end + "\n"
    block = f"{begin}\n{text}\n{end}"
    if begin in s and end in s:
        s = s[: s.index(begin)] + block + s[s.index(end) + len(end):]
    elif append:
        s = s.rstrip() + "\n\n" + (f"## {heading}\n\n" if heading else "") + block + "\n"
    else:
        return False
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(s)
    return True
