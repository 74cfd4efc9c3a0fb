"""Memory traffic of a boosting round: bytes per row per round that boostlab's fit reads and
writes, by pass, counted from its data structures (the library's feature `traffic`), against a
floor, with the time per round of the default build and the host's memory-read bandwidth.

    python bench/traffic.py                        # 1M rows, 50 rounds, 2 threads; writes docs/reference/benchmarks.md
    python bench/traffic.py --rows 200000 --no-write

Builds `boostlab-bench` in release twice (with `--features traffic`, kept as
bench/out/boostlab-bench-traffic, then the default build) and runs, each in a fresh process, the
matrix {adaboost, real-adaboost, t-adaboost (t = 0.8), secboost (logistic), real-adaboost-mh on
7-class data} × {stumps, 8 leaves}: once with the counters (`fit --traffic`), once without them
(the time per round). The binary data are make_classification's N × 28 (`harness.synthetic`), the
7-class data N × 54 (`harness.covertype_like`); the interpreter needs scikit-learn.

The floor per row per round: the bins once (d bytes, u8 bins), the statistics once (8k bytes, k
outputs) and the booster's minimal state update: the label read (1 byte), the weights and the
scores read and written (8k bytes each, both ways).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import OUT, ROOT, covertype_like, fmt_n, fresh_json, load_note, synthetic, thread_env, write_doc_section  # noqa: E402

BEGIN, END = "<!-- TRAFFIC:BEGIN -->", "<!-- TRAFFIC:END -->"
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
BIN = TARGET / "release" / "boostlab-bench"
COUNTING_BIN = OUT / "boostlab-bench-traffic"
# (label, algorithm, extra arguments, multi-class data)
BOOSTERS = [
    ("AdaBoost", "adaboost", [], False),
    ("Real AdaBoost", "real-adaboost", [], False),
    ("t-AdaBoost (t = 0.8)", "t-adaboost", ["--t", "0.8"], False),
    ("SecBoost (logistic)", "secboost", [], False),
    ("Real AdaBoost.MH (7 classes)", "real-adaboost-mh", [], True),
]
# Short column names of the passes in the by-pass table.
SHORT = {
    "histogram_bins": "hist bins",
    "histogram_statistics": "hist stats",
    "gather_statistics": "gather",
    "partition": "partition",
    "statistics_check": "check",
    "leaf_of_row": "leaf of row",
    "covers": "covers",
    "tree_outputs": "tree outputs",
    "booster_step": "step",
    "booster_update": "update",
    "booster_statistics": "statistics",
    "normalisation": "normalise",
    "validation": "validation",
}


def build(features):
    cmd = ["cargo", "build", "--release", "--quiet", "-p", "boostlab-bench"] + (["--features", features] if features else [])
    subprocess.run(cmd, cwd=ROOT, check=True)


def floor(d, k):
    """Bytes per row per round: bins (d), statistics (8k), label (1), weights and scores read and written (32k)."""
    return d + 8 * k + 1 + 32 * k


def fit_cmd(binary, ds, algo, extra, leaves, rounds, traffic):
    return [str(binary), "fit", "--train-x", ds["train"]["x"], "--train-y", ds["train"]["y"], "--d", str(ds["d"]),
            "--classes", str(ds["classes"]), "--algorithm", algo, "--rounds", str(rounds), "--leaves", str(leaves),
            *extra, *(["--traffic"] if traffic else [])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per booster and size (the fastest is kept)")
    ap.add_argument("--no-write", action="store_true", help="print the section only")
    a = ap.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    build("traffic")
    shutil.copy2(BIN, COUNTING_BIN)
    build(None)
    env = thread_env(a.threads)
    binary, multi = synthetic(a.rows), covertype_like(a.rows)
    bw = fresh_json([str(BIN), "bandwidth"], env)["gb_per_s"]
    loads, rows = [], []
    for label, algo, extra, is_multi in BOOSTERS:
        ds = multi if is_multi else binary
        k = ds["classes"] if is_multi else 1
        for leaves in (2, 8):
            counted = fresh_json(fit_cmd(COUNTING_BIN, ds, algo, extra, leaves, a.rounds, True), env)
            # The full fit and a fit of one round (the fixed costs: binning, set-up, taken out of the
            # round's own time), alternately, the fastest of each kept: the host's noise only
            # ever adds time.
            runs = [(fresh_json(fit_cmd(BIN, ds, algo, extra, leaves, a.rounds, False), env),
                     fresh_json(fit_cmd(BIN, ds, algo, extra, leaves, 1, False), env)) for _ in range(a.repeats)]
            timed = min((r[0] for r in runs), key=lambda r: r["fit_s"])
            one = min((r[1] for r in runs), key=lambda r: r["fit_s"])
            loads.append(os.getloadavg()[0])
            t = counted["traffic"]
            round_s = (timed["fit_s"] - one["fit_s"]) / max(timed["rounds"] - 1, 1)
            rows.append({"label": label, "leaves": leaves, "d": ds["d"], "k": k, "traffic": t,
                         "floor": floor(ds["d"], k), "per_round_s": timed["per_round_s"], "rounds": timed["rounds"],
                         "round_s": round_s})
            print(f"{label}, {leaves} leaves: {t['total']['read'] + t['total']['written']:.0f} B/row/round, "
                  f"{timed['per_round_s'] * 1e3:.1f} ms/round", file=sys.stderr)
    text = report(rows, a, bw, loads)
    print(text)
    if not a.no_write:
        write_doc_section(BEGIN, END, text, heading="Memory traffic per round")


def report(rows, a, bw, loads):
    out = [
        f"`python bench/traffic.py --rows {a.rows}`: {fmt_n(a.rows)} rows, {a.rounds} rounds, {a.threads} threads"
        f"{load_note(loads, a.threads)}. Host memory-read bandwidth (`boostlab-bench bandwidth`): **{bw:.1f} GB/s**.",
        "",
        "Bytes per row per round of the fit (binning excluded), counted from the data structures by the "
        "feature `traffic` (docs/explanation/performance.md#memory-traffic), not measured by the CPU. "
        "Floor: the bins once (d bytes), the statistics once (8k bytes), the label (1 byte) and the "
        "weights and scores read and written (32k bytes); k outputs. Gathered: reads through a row index per "
        "row per round (each may move a 64-byte line). Time per round: the default build (no counters), "
        f"the fit's time (binning included) over its rounds, the fastest of {a.repeats} runs.",
        "",
        "| booster | leaves | d | read | written | total | floor | total / floor | gathered | ms / round "
        "| GB/s at the counted bytes |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        t = r["traffic"]["total"]
        total = t["read"] + t["written"]
        gbs = total * a.rows / r["per_round_s"] / 1e9
        out.append(
            f"| {r['label']} | {r['leaves']} | {r['d']} | {t['read']:.0f} | {t['written']:.0f} | {total:.0f} "
            f"| {r['floor']} | {total / r['floor']:.2f} | {t['gathered_reads']:.2f} | {r['per_round_s'] * 1e3:.1f} "
            f"| {gbs:.1f} |"
        )
    real = {r["leaves"]: r["round_s"] for r in rows if r["label"] == "Real AdaBoost"}
    out += [
        "",
        "A round's own time: the fit's time at the rounds above minus its time at one round (binning and "
        "set-up taken out), over the rounds in between, each the fastest of "
        f"{a.repeats} runs (alternately), and its ratio to Real AdaBoost's round with the same "
        "leaves (the multi-class row: on its own data, with k outputs).",
        "",
        "| booster | leaves | ms / round, binning excluded | × Real AdaBoost's round |",
        "|---|---:|---:|---:|",
    ]
    for r in rows:
        ratio = r["round_s"] / real[r["leaves"]] if real.get(r["leaves"]) else float("nan")
        out.append(f"| {r['label']} | {r['leaves']} | {r['round_s'] * 1e3:.1f} | {ratio:.2f} |")
    names = [p for p in SHORT if any(r["traffic"]["passes"][p]["read"] + r["traffic"]["passes"][p]["written"] > 0
                                     for r in rows)]
    out += [
        "",
        "By pass: bytes read / written per row per round (passes that move nothing in every run left out).",
        "",
        "| booster | leaves | " + " | ".join(SHORT[p] for p in names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for r in rows:
        cells = []
        for p in names:
            v = r["traffic"]["passes"][p]
            cells.append("–" if v["read"] + v["written"] == 0 else f"{v['read']:.1f} / {v['written']:.1f}")
        out.append(f"| {r['label']} | {r['leaves']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
