"""The whole ``optcmp.run`` call against its timed steps, CPU time, per backend.

Two runs of an epoch or more: FizzBuzz SGD-64 for 200 epochs (3,000 steps, one observation per
epoch) and SGD-64 over one epoch of 1,000,000 rows of :class:`~optcmp.problems.LinearRegression`
(15,625 steps). For each backend, after a short run that pays the imports and the first
compilations, the script reads the process CPU time around ``optcmp.run`` and the run's own
``cpu_time`` (its timed steps), one thread; the ratio is what setup, warm-up and the
observations add. Rounds alternate the backends' order (A B, B A); the medians of the whole
call, of the steps and of their ratio are printed, with the placement of the data
(``RunResult.conditions.layout``).

Usage::

    PYTHONPATH=. python benchmarks/whole_call.py                    # all backends, 2 rounds
    PYTHONPATH=. python benchmarks/whole_call.py --backends jax --rounds 4

A before/after comparison runs this script with the two checkouts interleaved (A B B A) and
compares ratios measured at the same load.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    """Measure and print the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="numpy,torch,tensorflow,jax")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    import statistics
    import time

    import torch  # noqa: F401 - torch before tensorflow in one process

    import optcmp
    from optcmp.environment import machine_stamp, stamp_text
    from optcmp.problems import FizzBuzzMLP, LinearRegression
    from optcmp.timing import load_average

    print("machine: " + stamp_text(machine_stamp(threads=1)))
    lin = LinearRegression(n_samples=1_000_000)
    work = [("FizzBuzz SGD-64, 200 epochs", FizzBuzzMLP(),
             optcmp.sgd(learning_rate=0.5, batch_size=64), 3000),
            ("1M rows SGD-64, one epoch", lin,
             optcmp.sgd(learning_rate=0.1 / lin.lipschitz(), batch_size=64), 15625)]
    backends = args.backends.split(",")
    for b in backends:  # imports and first compilations, off the measurement
        for _, p, opt, _ in work:
            optcmp.run(p, opt, backend=b, max_iter=50, threads=1)
    seen: dict[tuple[str, str], list[tuple[float, float]]] = {}
    layouts: dict[tuple[str, str], str] = {}
    loads = [load_average()]
    for i in range(args.rounds):
        for b in backends if i % 2 == 0 else backends[::-1]:
            for name, p, opt, n in work:
                c0 = time.process_time()
                r = optcmp.run(p, opt, backend=b, max_iter=n, threads=1, tol=1e-12)
                seen.setdefault((b, name), []).append((time.process_time() - c0,
                                                       r.timing.cpu_time))
                layouts[b, name] = r.conditions.layout
    loads.append(load_average())
    print(f"load average {loads[0]} -> {loads[1]}")
    print(f"{'backend':12s} {'workload':30s} {'whole ms':>9s} {'steps ms':>9s}  whole call / "
          "steps, CPU (median; each round)  layout")
    for (b, name), ws in seen.items():
        rs = [w / t for w, t in ws]
        each = ", ".join(f"{x:.2f}" for x in rs)
        whole, steps = (statistics.median(v) * 1e3 for v in zip(*ws))
        print(f"{b:12s} {name:30s} {whole:9.1f} {steps:9.1f}  {statistics.median(rs):.2f}x "
              f"({each})  {layouts[b, name]}")


if __name__ == "__main__":
    main()
