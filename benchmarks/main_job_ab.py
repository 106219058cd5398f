"""The main job (``optcmp run``) of two checkouts, interleaved: its CPU and wall time, A vs B.

Run from the repository root::

    git worktree add /tmp/before <commit>
    python benchmarks/main_job_ab.py /tmp/before .            # A B B A: 2 rounds
    python benchmarks/main_job_ab.py /tmp/before . --rounds 3

Each round runs ``python -m optcmp run --no-progress`` once with checkout A on ``PYTHONPATH``
and once with B, in the order A B, then B A (so that a load which rises or falls over the
measurement weighs on both sides alike), each in its own process, timed by the resource usage
of that child process: CPU time (user + system, every thread of the run's process, its
framework pools included) and wall time. The main job sets one thread per framework itself.
Printed: the machine stamp, each run with the load average before it, the medians per side,
the ratio B/A of the medians, and whether the two sides' tables have the same statuses and
iteration counts (they must: a change of speed that changes a count is a change of result).

A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from optcmp.environment import machine_stamp, stamp_text

ROWS = ("gd", "diag_newton", "adadelta", "sgd", "lbfgs")


def run_once(checkout: Path) -> tuple[float, float, list[str]]:
    """CPU seconds, wall seconds and the table rows (optimizer, backend, status, iterations)."""
    env = dict(os.environ, PYTHONPATH=str(checkout), COLUMNS="200")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "optcmp", "run", "--no-progress"], cwd=checkout,
                          env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = sorted(" ".join((f[0], f[1], f[3], f[5])) for f in
                  (line.split() for line in proc.stdout.splitlines()) if f and f[0] in ROWS
                  and len(f) > 5 and f[5].isdigit())
    return cpu, wall, rows


def main() -> None:
    """Parse the arguments, run the rounds, print the medians and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", type=Path, help="checkout A (e.g. the commit before a change)")
    ap.add_argument("b", type=Path, help="checkout B")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of A B / B A (default 2)")
    args = ap.parse_args()
    print(stamp_text(machine_stamp(threads=1)))
    sides: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    tables: dict[str, list[str]] = {}
    for r in range(args.rounds):
        for side in ("A", "B") if r % 2 == 0 else ("B", "A"):
            load = os.getloadavg()[0]
            cpu, wall, rows = run_once(args.a if side == "A" else args.b)
            sides[side].append((cpu, wall))
            tables.setdefault(side, rows)
            print(f"{side}: cpu {cpu:6.1f} s  wall {wall:6.1f} s  (load before {load:.2f})")
    med = {s: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
           for s, v in sides.items()}
    for s, (c, w) in med.items():
        print(f"median {s}: cpu {c:.1f} s, wall {w:.1f} s")
    print(f"B/A: cpu {med['B'][0] / med['A'][0]:.2f}x, wall {med['B'][1] / med['A'][1]:.2f}x")
    same = tables["A"] == tables["B"]
    print("statuses and iterations:", "the same" if same else "DIFFERENT")
    if not same:
        for line in sorted(set(tables["A"]) ^ set(tables["B"])):
            print("  ", "A" if line in tables["A"] else "B", line)


if __name__ == "__main__":
    main()
