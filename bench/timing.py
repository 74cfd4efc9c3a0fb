"""Fresh-process timing shared by the benchmark scripts (bench/peer.py, bench/python_path.py,
bench/cli_bench.py).

- In the measured process: `rss_kib()` (current and peak RSS from /proc/self/status) and
  `reset_peak()` (resets the peak, VmHWM, through /proc/self/clear_refs), around the timed call;
  `cpu_s()` is the process's CPU time (user + sys, every thread).
- From the driver: `fresh(cmd, env)` runs one command in a fresh process and returns its wall
  time, CPU time (user + sys of the child, from wait4) and peak RSS (ru_maxrss), with its output.

On a shared machine wall-clock times depend on the other jobs; CPU time much less so (it still
grows a little under contention), so the scripts report both, as medians of repeated runs.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time


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


def median_of(runs, key):
    return statistics.median(r[key] for r in runs)
