#!/usr/bin/env python3
"""T schedules and t = auto variants against t = 1 and the oracle (the best fixed t
per domain and noise rate, chosen in hindsight on the test folds), from the cells of
experiments/tadaboost-schedule.toml.

  python3 scripts/schedule_eval.py RESULTS [MORE_RESULTS ...] [--svg docs/figures/t-schedule.svg]

For every non-fixed setting (auto, auto-1se, sched-*): per noise rate, a markdown table of mean test
error (%) per domain, paired two-sided t-tests over the folds at p < 0.1 against t = 1 and against
the oracle, the counts better / equivalent / worse and the mean gap to the oracle. No third-party
package.
"""
import glob
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
from paired_vs import paired_p  # noqa: E402

ALPHA = 0.1
TS = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0]


def main():
    svg = sys.argv[sys.argv.index("--svg") + 1] if "--svg" in sys.argv else None
    dirs = [a for a in sys.argv[1:] if a != "--svg" and a != svg]
    err, chosen = {}, {}
    files = [f for d in dirs for f in glob.glob(os.path.join(d, "cells", "*.json"))]
    for f in sorted(files):
        r = json.load(open(f))
        key = (r["dataset"], r["setting"], r["noise"])
        err.setdefault(key, {})[r["fold"]] = r["result"]["final_test_error"]
        if "chosen_t" in r["result"].get("extra", {}):
            chosen.setdefault(key, {})[r["fold"]] = r["result"]["extra"]["chosen_t"]
    specs = [json.load(open(os.path.join(d, "spec.json")))["spec"] for d in dirs]
    datasets = [d["name"] for d in specs[0]["datasets"]]
    settings = [s["name"] for spec in specs for s in spec["settings"] if "grid" not in s]
    mean = lambda d: 100 * sum(d.values()) / len(d)
    summary, fig = [], {}
    for setting in settings:
        for noise in sorted({k[2] for k in err}):
            print(f"\n#### {setting}, η = {noise:g}: mean test error (%)\n")
            print(f"| dataset | {setting} | t = 1 | vs t = 1 | oracle (t) | vs oracle |" + (" chosen t |" if setting.startswith("auto") else ""))
            print("|---|---:|---:|---|---:|---|" + ("---|" if setting.startswith("auto") else ""))
            c1, co, gaps = Counter(), Counter(), []
            for ds in datasets:
                a = err.get((ds, setting, noise))
                fixed = {t: err.get((ds, f"default[t={t:g}]", noise)) for t in TS}
                if not a or len(a) < 10 or any(v is None or len(v) != len(a) for v in fixed.values()):
                    print(f"| {ds} | — (incomplete) |")
                    continue
                best_t = min(TS, key=lambda t: mean(fixed[t]))
                folds = sorted(a)
                out = []
                for ref, counter in ((fixed[1.0], c1), (fixed[best_t], co)):
                    p, d = paired_p([a[f] for f in folds], [ref[f] for f in folds])
                    o = "better" if p < ALPHA and d < 0 else "worse" if p < ALPHA else "equivalent"
                    counter[o] += 1
                    out.append(f"{o} (p = {p:.2f})")
                gaps.append(mean(a) - mean(fixed[best_t]))
                fig.setdefault((ds, noise), {})[setting] = mean(a)
                fig[(ds, noise)]["t = 1"] = mean(fixed[1.0])
                fig[(ds, noise)]["oracle"] = mean(fixed[best_t])
                extra = ""
                if setting.startswith("auto"):
                    ch = Counter(chosen.get((ds, setting, noise), {}).values())
                    extra = " " + ", ".join(f"{t:g}×{n}" for t, n in sorted(ch.items())) + " |"
                print(f"| {ds} | {mean(a):.2f} | {mean(fixed[1.0]):.2f} | {out[0]} | {mean(fixed[best_t]):.2f} ({best_t:g}) | {out[1]} |{extra}")
            g = sum(gaps) / max(len(gaps), 1)
            line = (f"{setting}, η = {noise:g}: vs t = 1 better {c1['better']} / equivalent {c1['equivalent']} / worse {c1['worse']}; "
                    f"vs oracle {co['better']} / {co['equivalent']} / {co['worse']}; mean gap to the oracle {g:+.2f} points")
            print("\n" + line)
            summary.append(line)
    print("\n### Summary\n")
    for line in summary:
        print("- " + line)
    if svg:
        write_svg(svg, datasets, settings, fig)


def write_svg(path, datasets, settings, fig):
    marks = ["t = 1", "oracle"] + settings
    colors = ["#d62728", "#2ca02c", "#1f77b4", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
    noises = sorted({k[1] for k in fig})
    w, rowh, left, top = 700, 18, 120, 40 + 14 * ((len(marks) + 3) // 4)
    h = top + rowh * len(datasets) * len(noises) + 30 + 12 * len(noises)
    vals = [v for d in fig.values() for v in d.values()]
    lo, hi = min(vals) - 1, max(vals) + 1
    x = lambda v: left + (v - lo) / (hi - lo) * (w - left - 20)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
         '<text x="4" y="14">Mean test error (%) per domain, 10 folds</text>']
    for i, m in enumerate(marks):
        cx, cy = 4 + (i % 4) * 170, 30 + 14 * (i // 4)
        s.append(f'<circle cx="{cx + 4}" cy="{cy - 4}" r="4" fill="{colors[i % len(colors)]}"/><text x="{cx + 12}" y="{cy}">{m}</text>')
    y = top
    for noise in noises:
        s.append(f'<text x="4" y="{y}" font-weight="bold">η = {noise:g}</text>')
        y += 12
        for ds in datasets:
            d = fig.get((ds, noise))
            if not d:
                continue
            s.append(f'<text x="4" y="{y + 4}">{ds}</text>')
            s.append(f'<line x1="{left}" y1="{y}" x2="{w - 20}" y2="{y}" stroke="#ddd"/>')
            for i, m in enumerate(marks):
                if m in d:
                    s.append(f'<circle cx="{x(d[m]):.1f}" cy="{y}" r="3.5" fill="{colors[i % len(colors)]}" fill-opacity="0.8"/>')
            y += rowh
    for v in range(int(lo) + 1, int(hi) + 1, 5):
        s.append(f'<line x1="{x(v):.1f}" y1="{top}" x2="{x(v):.1f}" y2="{y - 10}" stroke="#eee"/>')
        s.append(f'<text x="{x(v):.1f}" y="{y + 4}" text-anchor="middle">{v}</text>')
    s.append("</svg>")
    open(path, "w").write("\n".join(s) + "\n")


if __name__ == "__main__":
    main()
