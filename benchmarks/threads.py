"""Why optcmp gives every backend one thread by default: the same work with 1 and with N threads.

Run from the repository root::

    python benchmarks/threads.py                   # 1,000,000 rows, 3 rounds, N = cores
    python benchmarks/threads.py --rows 200000 --rounds 2 --threads 2

Each side is a fresh process (TensorFlow fixes its pools when its runtime starts) that runs
100 full-batch GD iterations and an L-BFGS run to 1e-6 on every installed backend with
``threads=1`` or ``threads=N``; the sides alternate (1, N, N, 1, ...) and the median over rounds
is printed: timed wall and process CPU seconds per GD iteration, L-BFGS time-to-target, the
contention flag, and the load average before and after. One thread wins on a shared machine
when N threads cost more wall time per step (oversubscribed pools wait for each other) or give
a different float result (reduction order); the CPU column shows what the extra threads burn.

A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from optcmp.timing import load_average

_CHILD = r"""
import json, sys
import optcmp
from optcmp.frameworks import available_backends
from optcmp.problems import LinearRegression
rows, threads = int(sys.argv[1]), int(sys.argv[2])
p = LinearRegression(n_samples=rows)
p.optimum()
fixed = optcmp.MaxIter(100) | optcmp.RelativeSuboptimality(1e-300)
out = {}
for b in available_backends():
    gd = optcmp.run(p, optcmp.gd(), backend=b, stopping=fixed, threads=threads)
    lb = optcmp.run(p, optcmp.lbfgs(), backend=b, max_iter=1000, threads=threads)
    out[b] = {"gd_wall": gd.time / gd.nit, "gd_cpu": (gd.cpu_time or 0) / gd.nit,
              "gd_fun": gd.fun, "lbfgs": lb.time_to_target, "lbfgs_nit": lb.nit_to_target,
              "threads": gd.threads, "contended": gd.timing.contended or lb.timing.contended}
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    from optcmp.environment import machine_stamp, stamp_text

    print("machine: " + stamp_text(machine_stamp()))  # what the figures below belong to
    env = {k: v for k, v in os.environ.items() if k != "OPTCMP_CONTENTION_MARGIN"}
    print(f"cores {os.cpu_count()}, rows {args.rows}, sides 1 and {args.threads} threads, "
          f"load average before {load_average()}")
    res: dict[int, list[dict]] = {1: [], args.threads: []}
    for k in range(args.rounds):
        for n in ((1, args.threads) if k % 2 == 0 else (args.threads, 1)):
            out = subprocess.run([sys.executable, "-c", _CHILD, str(args.rows), str(n)],
                                 capture_output=True, text=True, env=env, check=True)
            res[n].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{'backend':11s} {'threads':>7s} {'gd wall/it':>11s} {'gd cpu/it':>10s} "
          f"{'lbfgs ttt':>10s} {'lbfgs nit':>9s} {'contended':>9s}")
    for b in res[1][0]:
        for runs in res.values():
            med = {k: statistics.median(r[b][k] for r in runs)
                   for k in ("gd_wall", "gd_cpu", "lbfgs")}
            nits = sorted({r[b]["lbfgs_nit"] for r in runs})
            busy = sum(bool(r[b]["contended"]) for r in runs)
            print(f"{b:11s} {runs[0][b]['threads']!s:>7s} {med['gd_wall'] * 1e3:9.2f}ms "
                  f"{med['gd_cpu'] * 1e3:8.2f}ms {med['lbfgs'] * 1e3:8.1f}ms "
                  f"{'/'.join(map(str, nits)):>9s} {busy:>5d}/{len(runs)}")
    print(f"load average after {load_average()}")


if __name__ == "__main__":
    main()
