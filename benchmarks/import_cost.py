"""What ``import optcmp`` costs a fresh process, against bare ``python -c pass``.

Run from the repository root::

    python benchmarks/import_cost.py              # 15 rounds
    python benchmarks/import_cost.py --rounds 31

Every command-line call and every Dask worker pays this import. Each round starts one fresh
interpreter per command, in the order a b b a a b b a ... (so that machine load hits every
command alike), and reads the child's process CPU time (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)``) and its wall time. The figure is the median over rounds
of the CPU time above bare Python; process CPU time is far steadier than wall time on a busy
machine. The load average is printed next to it. Target: at most 0.3 s of CPU above
``python -c pass``; ``import numpy`` is shown for scale.

This is a benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import optcmp": "import optcmp",
}


def one(code: str) -> tuple[float, float]:
    """CPU and wall seconds of one fresh interpreter running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds")
    args = ap.parse_args(argv)
    from optcmp.environment import machine_stamp, stamp_text

    print("machine: " + stamp_text(machine_stamp()))  # what the figures below belong to
    names = list(COMMANDS)
    cpu: dict[str, list[float]] = {n: [] for n in names}
    wall: dict[str, list[float]] = {n: [] for n in names}
    print(f"python {sys.version.split()[0]} ({sys.executable}); "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for n in names:  # warm the file cache once
        one(COMMANDS[n])
    for r in range(args.rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            c, w = one(COMMANDS[n])
            cpu[n].append(c)
            wall[n].append(w)
    base_cpu = statistics.median(cpu[names[0]])
    base_wall = statistics.median(wall[names[0]])
    print(f"{args.rounds} rounds, medians (min):")
    for n in names:
        mc, mw = statistics.median(cpu[n]), statistics.median(wall[n])
        print(f"  {n:16s} CPU {mc:6.3f} s ({min(cpu[n]):.3f})  wall {mw:6.3f} s "
              f"({min(wall[n]):.3f})   above bare: CPU {mc - base_cpu:+.3f} s, "
              f"wall {mw - base_wall:+.3f} s")
    extra = statistics.median(cpu["import optcmp"]) - base_cpu
    print(f"import optcmp: {extra:.3f} s of CPU above bare python (target <= 0.3 s); "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
