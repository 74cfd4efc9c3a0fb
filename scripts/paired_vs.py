#!/usr/bin/env python3
"""Paired comparisons of experiment settings, per t and noise rate, from the harness's
cell records (results/cells/*.json).

  python3 scripts/paired_vs.py RESULTS REFERENCE_FAMILY [FAMILY ...] [--alpha 0.1] [--md]

For every family F (a setting name before `[t=...]`), every t and every noise rate: the mean test
error (%) per dataset of F[t] and REFERENCE[t], and a two-sided paired Student t-test over folds
(p < alpha: better / worse). A family named `NAME@t=X` compares NAME (no grid) to REFERENCE[t=X].
Pure Python (the t distribution by numerical integration), no third-party package.
"""
import glob
import json
import math
import os
import re
import sys
from collections import defaultdict


def t_sf(t, df):
    """Two-sided p-value of Student's t with df degrees of freedom (regularised incomplete beta)."""
    x = df / (df + t * t)
    return betainc(df / 2.0, 0.5, x)


def betainc(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(math.log(x) * a + math.log(1.0 - x) * b + lbeta)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * cf(a, b, x) / a
    return 1.0 - math.exp(math.log(1.0 - x) * b + math.log(x) * a + lbeta) * cf(b, a, 1.0 - x) / b


def cf(a, b, x):
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2))
        d = 1.0 + aa * d; d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))
        d = 1.0 + aa * d; d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-14:
            break
    return h


def paired_p(a, b):
    d = [x - y for x, y in zip(a, b)]
    n = len(d)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1)
    if var == 0.0:
        return 1.0 if mean == 0.0 else 0.0, mean
    return t_sf(mean / math.sqrt(var / n), n - 1), mean


def load(results):
    errs = defaultdict(dict)  # (dataset, setting, noise) -> fold -> error
    for f in glob.glob(os.path.join(results, "cells", "*.json")):
        r = json.load(open(f))
        errs[(r["dataset"], r["setting"], r["noise"])][r["fold"]] = r["result"]["final_test_error"]
    return errs


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    alpha = 0.1
    if "--alpha" in sys.argv:
        alpha = float(sys.argv[sys.argv.index("--alpha") + 1])
        args.remove(sys.argv[sys.argv.index("--alpha") + 1])
    results, ref, fams = args[0], args[1], args[2:]
    errs = load(results)
    datasets = sorted({k[0] for k in errs}, key=lambda d: min(i for i, k in enumerate(sorted(errs)) if k[0] == d))
    noises = sorted({k[2] for k in errs})
    ts = sorted({float(m.group(1)) for k in errs for m in [re.search(r"\[t=([0-9.]+)\]", k[1])] if m})
    for fam in fams:
        for noise in noises:
            print(f"\n### {fam} vs {ref}, η = {noise:g} (mean test error %, * = p < {alpha}: better +, worse −)\n")
            print("| dataset | " + " | ".join(f"t={t:g}" for t in ts) + " |")
            print("|---|" + "---:|" * len(ts))
            counts = {t: [0, 0, 0] for t in ts}
            for ds in datasets:
                row = []
                for t in ts:
                    a = errs.get((ds, f"{fam}[t={t:g}]", noise)) or errs.get((ds, fam, noise))
                    b = errs.get((ds, f"{ref}[t={t:g}]", noise))
                    if not a or not b or set(a) != set(b):
                        row.append("—"); continue
                    folds = sorted(a)
                    p, mean = paired_p([a[f] for f in folds], [b[f] for f in folds])
                    ma, mb = 100 * sum(a.values()) / len(a), 100 * sum(b.values()) / len(b)
                    mark = ""
                    if p < alpha:
                        mark = " +" if mean < 0 else " −"
                        counts[t][0 if mean < 0 else 2] += 1
                    else:
                        counts[t][1] += 1
                    row.append(f"{ma:.2f} / {mb:.2f}{mark}")
                print(f"| {ds} | " + " | ".join(row) + " |")
            print("| better/eq/worse | " + " | ".join("/".join(map(str, counts[t])) for t in ts) + " |")


if __name__ == "__main__":
    main()
