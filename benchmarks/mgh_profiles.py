"""The MGH suite with lbfgs (scipy L-BFGS-B) and gd: how many problems each solves, and the
Moré-Wild profiles over the 35 problems. numpy, float64, one thread.

Run: ``python benchmarks/mgh_profiles.py``. Prints the load average before and after, the wall
and process CPU time of the sweep, converged counts (relative suboptimality 1e-6 against the
paper's f*), the data profile (budget in simplex gradients, tau = 1e-3) and the performance
profile (function evaluations, tau = 1e-3) at a few abscissae, and the time of the logistic
regression's reference solve. Evaluation counts do not depend on the machine; times do.
"""

from __future__ import annotations

import os
import time
import warnings

import optcmp


def main() -> None:
    """Run the sweep and print the figures."""
    warnings.simplefilter("ignore")
    from optcmp.environment import machine_stamp, stamp_text

    print("machine: " + stamp_text(machine_stamp(threads=1)))  # what the figures below belong to
    print("load average:", tuple(round(v, 2) for v in os.getloadavg()))
    t0, c0 = time.perf_counter(), time.process_time()
    comp = optcmp.compare(optcmp.suites.mgh(),
                          [optcmp.lbfgs(impl="scipy"), optcmp.gd(learning_rate=1e-4)],
                          progress=False, max_iter=2000, max_time=10, threads=1)
    print(f"wall {time.perf_counter() - t0:.1f} s, cpu {time.process_time() - c0:.1f} s, "
          f"runs {len(comp)}")
    conv = {lab: sum(r.status == "converged" for r in comp.runs if r.label == lab)
            for lab in ("lbfgs", "gd")}
    print("converged to rel.subopt 1e-6 (of 35):", conv)
    d = comp.data_profile(metric="nfev", per_dimension=True, tau=1e-3, warn=False)
    for a in (10, 100, 1000):
        print(f"data profile tau=1e-3 at {a} simplex gradients:",
              {k: round(v, 3) for k, v in d.at(a).items()})
    p = comp.performance_profile(metric="nfev", tau=1e-3, warn=False)
    for t in (1, 4, 16):
        print(f"performance profile (nfev, tau=1e-3) at ratio {t}:",
              {k: round(v, 3) for k, v in p.at(t).items()})
    lr = optcmp.problems.LogisticRegression()
    t = time.perf_counter()
    o = lr.optimum()
    print(f"LogisticRegression() f* = {o.fun:.12g} in {time.perf_counter() - t:.2f} s: {o.method}")
    print("load average:", tuple(round(v, 2) for v in os.getloadavg()))


if __name__ == "__main__":
    main()
