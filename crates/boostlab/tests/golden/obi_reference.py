"""50-digit references for the closed-form OBI of the convex built-in losses.

    python3 crates/boostlab/tests/golden/obi_reference.py > crates/boostlab/tests/golden/obi_reference.json

Q_F(z, b, b) = max over x in [z, b] of line(x) − F(x), the line through (z, F(z)) and (b, F(b)),
with z and b the f64 values the test passes (b = z + v rounded). Needs mpmath.
"""
import json

import mpmath as mp

mp.mp.dps = 50


def logistic(x):
    return mp.log1p(mp.exp(-x))


def dlogistic_inv(s):  # x with F'(x) = -1/(1 + e^x) = s
    return mp.log(-(1 + s) / s)


def exponential(x):
    return mp.exp(-x)


def tempered(t):
    def f(x):
        base = 1 - (1 - t) * x
        if base <= 0:
            return mp.mpf(0) if t < 1 else mp.inf
        return base ** ((2 - t) / (1 - t))

    def inv(s):
        base = (-s / (2 - t)) ** (1 - t)
        return (1 - base) / (1 - t)

    return f, inv


def obi(f, inv, z, b):
    z, b = mp.mpf(z), mp.mpf(b)
    fa, fb = f(z), f(b)
    s = (fb - fa) / (b - z)
    lo, hi = min(z, b), max(z, b)
    if s >= 0:
        return mp.mpf(0)
    x = min(max(inv(s), lo), hi)
    return max(fa + s * (x - z) - f(x), mp.mpf(0))


def main():
    losses = {
        "logistic": (logistic, dlogistic_inv),
        "exponential": (exponential, lambda s: -mp.log(-s)),
        "tempered:t=0.5": tempered(mp.mpf("0.5")),
        "tempered:t=1.5": tempered(mp.mpf("1.5")),
        "tempered:t=0": tempered(mp.mpf(0)),
    }
    zs = [-30.0, -5.0, -1.0, 0.0, 0.7, 3.0, 20.0]
    vs = [3.0, -2.0, 0.3, -0.05, 2e-3, -1.1e-3, 9e-4, -1e-4, 1e-6, -1e-9, 1e-12]
    out = []
    for name, (f, inv) in losses.items():
        for z in zs:
            if name.startswith("tempered") and abs(z) > 5:
                continue
            for v in vs:
                b = z + v  # rounded to f64, as the library computes it
                if b == z:
                    continue
                fa, fb = f(mp.mpf(z)), f(mp.mpf(b))
                if not (mp.isfinite(fa) and mp.isfinite(fb)):
                    continue
                q = obi(f, inv, z, b)
                out.append({"loss": name, "z": z, "v": v, "q": float(q)})
    print(json.dumps(out, indent=0))


main()
