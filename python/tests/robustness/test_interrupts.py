"""Ctrl-C (SIGINT) during `fit`, `predict` or `predict_contrib` raises KeyboardInterrupt within a second and leaves no
thread running and the estimator unfitted; two fits in two threads give the models of the same
fits run one after the other."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from boostlab import RealAdaBoostClassifier, TAdaBoostClassifier

CHILD = r"""
import sys, threading, time
import numpy as np
from boostlab import RealAdaBoostClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(100_000, 8))
y = (X[:, 0] + rng.normal(size=100_000) > 0).astype(int)
mode = sys.argv[1]
if mode == "fit":
    clf = RealAdaBoostClassifier(n_estimators=10**6, max_leaves=64)
    go = lambda: clf.fit(X, y)
elif mode == "predict":
    clf = RealAdaBoostClassifier(n_estimators=300, max_leaves=32).fit(X[:5000], y[:5000])
    big = np.tile(X, (10, 1))
    def go():
        while True:
            clf.predict(big)
else:  # exact contributions: about a millisecond per row of this model
    clf = RealAdaBoostClassifier(n_estimators=100, max_leaves=64).fit(X[:20000], y[:20000])
    def go():
        while True:
            clf.predict_contrib(X[:20000])
print("ready", flush=True)
try:
    go()
except KeyboardInterrupt:
    fitted = hasattr(clf, "model_")
    print("interrupted", time.time(), fitted, threading.active_count(), flush=True)
    sys.exit(0)
print("not interrupted", flush=True)
sys.exit(1)
"""


@pytest.mark.parametrize("mode", ["fit", "predict", "contrib"])
@pytest.mark.slow
def test_sigint_raises_keyboardinterrupt_within_1s(mode):
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # well inside the fit / the prediction loop
        assert p.poll() is None
        sent = time.time()
        p.send_signal(signal.SIGINT)
        line = p.stdout.readline().split()
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert line[:1] == ["interrupted"], (line, p.stderr.read())
    delay = float(line[1]) - sent
    assert delay < 1.0, delay
    if mode == "fit":
        assert line[2] == "False"  # left unfitted
    assert line[3] == "1"  # no Python thread left besides the main one
    assert p.returncode == 0


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] - X[:, 1] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return X, y


def test_two_fits_in_two_threads_equal_sequential_fits():
    X1, y1 = _data(1, 3000)
    X2, y2 = _data(2, 3000)
    make = [
        lambda: TAdaBoostClassifier(t=0.6, n_estimators=20, max_leaves=8).fit(X1, y1),
        lambda: RealAdaBoostClassifier(n_estimators=25, max_leaves=16).fit(X2, y2),
    ]
    sequential = [json.loads(f().model_.to_json()) for f in make]
    out = [None, None]

    def run(i):
        out[i] = json.loads(make[i]().model_.to_json())

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == sequential
