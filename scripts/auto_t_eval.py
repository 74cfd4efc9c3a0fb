#!/usr/bin/env python3
"""T = auto against t = 1 and against the oracle (the best fixed t per domain and
noise rate, chosen in hindsight on the test folds), from experiments/tadaboost-auto.toml's cells.

  python3 scripts/auto_t_eval.py AUTO_RESULTS FIXED_RESULTS [--svg docs/figures/auto-t.svg]

FIXED_RESULTS holds the fixed-t cells as `forbid[t=…]` (experiments/tadaboost-ablation2.toml:
the library's defaults) or `default[t=…]`.

Prints markdown tables (mean test error %, paired two-sided t-tests at p < 0.1 over the 10 folds,
the chosen t per fold) and writes a small SVG figure. No third-party package.
"""
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
import glob
import json

from paired_vs import paired_p  # noqa: E402

ALPHA = 0.1


def main():
    results, fixed_dir = sys.argv[1], sys.argv[2]
    svg = sys.argv[sys.argv.index("--svg") + 1] if "--svg" in sys.argv else None
    err, chosen = {}, {}
    files = glob.glob(os.path.join(results, "cells", "*.json")) + glob.glob(os.path.join(fixed_dir, "cells", "*.json"))
    for f in sorted(files):
        r = json.load(open(f))
        key = (r["dataset"], r["setting"].replace("forbid[", "default["), r["noise"])
        err.setdefault(key, {})[r["fold"]] = r["result"]["final_test_error"]
        if "chosen_t" in r["result"].get("extra", {}):
            chosen.setdefault((r["dataset"], r["noise"]), {})[r["fold"]] = r["result"]["extra"]["chosen_t"]
    spec = json.load(open(os.path.join(results, "spec.json")))
    datasets = [d["name"] for d in spec["spec"]["datasets"]]
    ts = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0]
    mean = lambda d: 100 * sum(d.values()) / len(d)
    fig = {}
    for noise in sorted({k[2] for k in err}):
        print(f"\n### η = {noise:g}: mean test error (%), auto vs t = 1 and vs the oracle\n")
        print("| dataset | auto | t = 1 | auto vs t = 1 | oracle (t) | auto vs oracle | chosen t (10 folds) |")
        print("|---|---:|---:|---|---:|---|---|")
        c1, co, gaps = Counter(), Counter(), []
        for ds in datasets:
            a = err.get((ds, "auto", noise))
            fixed = {t: err.get((ds, f"default[t={t:g}]", noise)) for t in ts}
            if not a or any(v is None or len(v) != len(a) for v in fixed.values()):
                print(f"| {ds} | — |"); continue
            best_t = min(ts, key=lambda t: mean(fixed[t]))
            folds = sorted(a)
            out = []
            for ref, counter in ((fixed[1.0], c1), (fixed[best_t], co)):
                p, d = paired_p([a[f] for f in folds], [ref[f] for f in folds])
                o = "better" if p < ALPHA and d < 0 else "worse" if p < ALPHA else "equivalent"
                counter[o] += 1
                out.append(f"{o} (p = {p:.2f})")
            gaps.append(mean(a) - mean(fixed[best_t]))
            ch = Counter(chosen.get((ds, noise), {}).values())
            chs = ", ".join(f"{t:g}×{n}" for t, n in sorted(ch.items()))
            print(f"| {ds} | {mean(a):.2f} | {mean(fixed[1.0]):.2f} | {out[0]} | {mean(fixed[best_t]):.2f} ({best_t:g}) | {out[1]} | {chs} |")
            fig[(ds, noise)] = (mean(a), mean(fixed[1.0]), mean(fixed[best_t]))
        print(f"\nauto vs t = 1: better {c1['better']}, equivalent {c1['equivalent']}, worse {c1['worse']}; "
              f"auto vs oracle: better {co['better']}, equivalent {co['equivalent']}, worse {co['worse']}; "
              f"mean gap to the oracle {sum(gaps) / max(len(gaps), 1):+.2f} points")
    if svg:
        write_svg(svg, datasets, fig)


def write_svg(path, datasets, fig):
    noises = sorted({k[1] for k in fig})
    w, rowh, left, top = 640, 18, 120, 40
    h = top + rowh * len(datasets) * len(noises) + 30 + 12 * len(noises)
    vals = [v for t in fig.values() for v in t]
    lo, hi = min(vals) - 1, max(vals) + 1
    x = lambda v: left + (v - lo) / (hi - lo) * (w - left - 20)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
         f'<text x="{left}" y="14">Test error (%) per domain: ● auto   ■ t = 1   ◆ oracle (best fixed t in hindsight)</text>']
    y = top
    for noise in noises:
        s.append(f'<text x="4" y="{y}" font-weight="bold">η = {noise:g}</text>')
        y += 12
        for ds in datasets:
            if (ds, noise) not in fig:
                continue
            a, one, orc = fig[(ds, noise)]
            s.append(f'<text x="4" y="{y + 4}">{ds}</text>')
            s.append(f'<line x1="{left}" y1="{y}" x2="{w - 20}" y2="{y}" stroke="#ddd"/>')
            s.append(f'<rect x="{x(one) - 4:.1f}" y="{y - 4}" width="8" height="8" fill="#d62728"/>')
            s.append(f'<path d="M{x(orc):.1f},{y - 5} l5,5 l-5,5 l-5,-5 z" fill="#2ca02c"/>')
            s.append(f'<circle cx="{x(a):.1f}" cy="{y}" r="4" fill="#1f77b4"/>')
            y += rowh
    for v in range(int(lo) + 1, int(hi) + 1, 5):
        s.append(f'<line x1="{x(v):.1f}" y1="{top}" x2="{x(v):.1f}" y2="{y - 10}" stroke="#eee"/>')
        s.append(f'<text x="{x(v):.1f}" y="{y + 4}" text-anchor="middle">{v}</text>')
    s.append("</svg>")
    open(path, "w").write("\n".join(s) + "\n")


if __name__ == "__main__":
    main()
