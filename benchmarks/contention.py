"""The same comparison alone and next to a CPU-bound load this script starts: is contention seen?

Run from the repository root::

    python benchmarks/contention.py                 # 1,000,000 rows, 3 rounds
    python benchmarks/contention.py --rows 100000 --rounds 2 --load 4
    python benchmarks/contention.py --quick          # 20,000 rows, 1 round, 8 processes: ~30 s
    python benchmarks/contention.py --fizzbuzz       # the FizzBuzz winner, quiet and 10 loads

Each round runs the same ``compare()`` twice, interleaved (quiet, loaded, loaded, quiet, ...):
once alone and once while ``--load`` processes (default: one per core) spin on the CPU. Every run
has one thread and the default rule with an iteration budget of 2,000 (L-BFGS reaches the target
in 12), with censoring at 10x the best CPU time-to-target, so both sides should do the same work:
same statuses and iterations, checked and printed (censoring is decided on CPU time at a
round's iteration cap, see "Censoring" in docs/concepts.md). Printed first: the machine stamp
(:func:`optcmp.environment.machine_stamp`). Printed per side: how many runs optcmp flagged ``contended`` (wall time
more than 20% above process CPU time, :func:`optcmp.timing.contended`), the median wall time
and CPU time of the timed steps per entry, the ratio loaded/quiet of each, and the host's load
average before and after. Expected: every loaded run flagged, no quiet one, and the CPU-time
ratio within 15% of 1 while the wall-time ratio grows. On a machine that others are using the
"quiet" side is not quiet: its own flags say so.

``--fizzbuzz``: FizzBuzz SGD (learning rate 2.56, batch 64, ``target_loss=0.1``) on numpy and
TensorFlow, one thread each, alone and beside ``--load`` CPU-burning processes (default 10):
the verdict's winner and clock, and each entry's wall and CPU time-to-target. Expected: the
same winner on both sides (the ranking reads the CPU time of each run's own threads).

A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time
import warnings
from typing import Any

import optcmp
from optcmp.environment import machine_stamp, stamp_text
from optcmp.problems import LinearRegression
from optcmp.timing import load_average


def _spin(stop: mp.synchronize.Event) -> None:  # type: ignore[name-defined]
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def _sweep(p: LinearRegression) -> optcmp.Comparison:
    specs = [optcmp.lbfgs(), optcmp.diag_newton(), optcmp.gd(), optcmp.adadelta()]
    return optcmp.compare(p, specs, max_iter=2000, threads=1, progress=False)


def _loaded(p: LinearRegression, n: int, sweep: Any = _sweep) -> optcmp.Comparison:
    stop = mp.Event()
    procs = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(n)]
    for q in procs:
        q.start()
    time.sleep(1.0)  # let the load take the cores
    try:
        return sweep(p)
    finally:
        stop.set()
        for q in procs:
            q.join(5)


def _fizzbuzz(p: Any) -> optcmp.Comparison:
    return optcmp.compare(p, [optcmp.sgd(learning_rate=2.56, batch_size=64)],
                          backends=["numpy", "tensorflow"], threads=1, progress=False)


def fizzbuzz(load: int) -> None:
    """The FizzBuzz SGD winner alone and beside ``load`` CPU-burning processes."""
    import torch  # noqa: F401 - torch before TensorFlow in one process

    from optcmp.problems import FizzBuzzMLP
    p = FizzBuzzMLP(target_loss=0.1)
    print("machine: " + stamp_text(machine_stamp(threads=1)))
    for side, load_n in (("quiet", 0), (f"{load} loads", load)):
        comp = _fizzbuzz(p) if not load_n else _loaded(p, load_n, _fizzbuzz)
        head, _, rest = comp.verdict().partition("\n")
        ranked = next(ln for ln in rest.splitlines() if ln.startswith("ranked by:"))
        print(f"{side}: load average {load_average()}\n  {head.split(', ')[0]}\n  {ranked}")
        for r in comp:
            print(f"  {r.backend:10s} {r.status:9s} iters {r.nit_to_target}  wall "
                  f"{r.time_to_target or float('nan'):.3f}s  cpu "
                  f"{r.cpu_time_to_target or float('nan'):.3f}s  contended {r.timing.contended}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--load", type=int, default=None,
                    help="CPU-bound processes of the loaded side (default: one per core; "
                         "10 with --fizzbuzz)")
    ap.add_argument("--quick", action="store_true",
                    help="20,000 rows, one round, 8 load processes")
    ap.add_argument("--fizzbuzz", action="store_true",
                    help="FizzBuzz SGD on numpy and TensorFlow, quiet and loaded (--load 10)")
    args = ap.parse_args()
    if args.fizzbuzz:
        os.environ.pop("OPTCMP_CONTENTION_MARGIN", None)
        warnings.simplefilter("ignore", UserWarning)
        fizzbuzz(args.load or 10)
        return
    args.load = args.load or os.cpu_count() or 2
    if args.quick:
        args.rows, args.rounds, args.load = 20_000, 1, 8
    print("machine: " + stamp_text(machine_stamp(threads=1)))  # what the figures below belong to
    os.environ.pop("OPTCMP_CONTENTION_MARGIN", None)
    warnings.simplefilter("ignore", UserWarning)  # the flags are counted below
    p = LinearRegression(n_samples=args.rows)
    p.optimum()
    _sweep(p)  # warm-up: imports, caches
    print("machine: " + stamp_text(machine_stamp(threads=1)))
    print(f"cores {os.cpu_count()}, load processes {args.load}, rows {args.rows}, "
          f"load average before {load_average()}")
    sides: dict[str, list[optcmp.Comparison]] = {"quiet": [], "loaded": []}
    for k in range(args.rounds):
        order = ("quiet", "loaded") if k % 2 == 0 else ("loaded", "quiet")
        for side in order:
            comp = _sweep(p) if side == "quiet" else _loaded(p, args.load)
            sides[side].append(comp)
            loads = [x for r in comp for x in (r.timing.load_start, r.timing.load_end) if x is not None]
            print(f"round {k} {side:6s}: contended {sum(r.timing.contended for r in comp)}/{len(comp)}"
                  f", load average {min(loads):.2f}-{max(loads):.2f}")
    work = {s: {(r.label, r.status, r.nit) for c in cs for r in c} for s, cs in sides.items()}
    print(f"same statuses and iterations on both sides: {work['quiet'] == work['loaded']}")
    for side in ("quiet", "loaded"):
        print(f"  {side:6s}: " + ", ".join(f"{lab} {st} {nit}" for lab, st, nit in
                                           sorted(work[side])))
    print(f"{'entry':14s} {'wall quiet':>11s} {'wall loaded':>12s} {'ratio':>6s}   "
          f"{'cpu quiet':>10s} {'cpu loaded':>11s} {'ratio':>6s}")
    for label in [r.label for r in sides["quiet"][0]]:
        med = {s: (statistics.median(r.time for c in cs for r in c if r.label == label),
                   statistics.median(r.cpu_time or 0.0 for c in cs for r in c
                                     if r.label == label)) for s, cs in sides.items()}
        (wq, cq), (wl, cl) = med["quiet"], med["loaded"]
        print(f"{label:14s} {wq:10.3f}s {wl:11.3f}s {wl / wq:6.2f}   {cq:9.3f}s {cl:10.3f}s "
              f"{cl / cq:6.2f}")
    flagged = {s: sum(r.timing.contended for c in cs for r in c) for s, cs in sides.items()}
    total = sum(len(c) for c in sides["quiet"])
    print(f"flagged contended: quiet {flagged['quiet']}/{total}, loaded "
          f"{flagged['loaded']}/{total}; load average after {load_average()}")


if __name__ == "__main__":
    main()
