"""What optcmp's bookkeeping costs on the 1,000,000-row default, measured side by side.

Run from the repository root::

    python benchmarks/core_overhead.py            # the 1,000,000-row default
    python benchmarks/core_overhead.py --rows 100000 --rounds 3

Prints three comparisons, each measured in this one process with the two sides interleaved
(bare, optcmp, optcmp, bare, ...) so that machine load hits both alike; the median over rounds
is the figure, the min is shown too. Every side runs with one thread (``--threads``; numpy's BLAS
through threadpoolctl, optcmp's runs with ``threads=``), and the load average is printed before
and after, next to the figures. Comparison (1) also reports process CPU time per iteration
(steadier than wall time on a busy machine): the bare loop's against the whole ``run``'s,
monitoring included.

1. Per-iteration cost of full-batch GD: optcmp's timed seconds per iteration (``time / nit``
   of a ``run``) against a bare numpy loop doing the same math (residual, objective,
   gradient, gradient norm, update). Target: ratio <= 1.05.
2. Whole ``compare()`` wall time for GD + L-BFGS (setup, warm-up, monitoring, float64
   re-evaluation, table bookkeeping included) against the bare time-to-target of the same two
   loops: a numpy GD loop that checks the target after every objective value, and
   ``scipy.optimize.minimize(method="L-BFGS-B")`` stopped from its callback. Both use a
   relative-suboptimality tolerance of 1e-3 (``--tol2``; GD with 1/L needs tens of thousands of
   iterations for 1e-6 on this ill-conditioned data, about 140 for 1e-3), and f* is computed
   once beforehand for both (``compare()`` finds it cached).
   Target: ratio <= 2.
3. L-BFGS time-to-target at the default tolerance 1e-6 against the direct-solve floor
   (``numpy.linalg.lstsq`` on the same data).

This is a benchmark, not a test: it asserts nothing and prints ratios.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

import optcmp
from optcmp import MaxIter, RelativeSuboptimality
from optcmp.problems import LinearRegression


def bare_gd(A: np.ndarray, y: np.ndarray, lr: float, n_iter: int) -> float:
    """Seconds for ``n_iter`` GD steps written by hand (the same math as optcmp's step)."""
    x = np.zeros(A.shape[1])
    m = y.size
    t0 = time.perf_counter()
    for _ in range(n_iter):
        r = A @ x
        r -= y
        f = float(np.vdot(r, r)) / m
        g = A.T @ r
        g *= 2.0 / m
        gn = math.sqrt(float(np.vdot(g, g)))
        x = x - lr * g
    elapsed = time.perf_counter() - t0
    assert math.isfinite(f) and math.isfinite(gn)
    return elapsed


def bare_gd_to_target(A: np.ndarray, y: np.ndarray, lr: float, f0: float, fstar: float,
                      tol: float) -> tuple[float, int]:
    """Seconds and iterations of a bare GD loop until ``(f - f*) <= tol (f0 - f*)``."""
    x = np.zeros(A.shape[1])
    m = y.size
    thr = fstar + tol * (f0 - fstar)
    k = 0
    t0 = time.perf_counter()
    while True:
        r = A @ x
        r -= y
        f = float(np.vdot(r, r)) / m
        if f <= thr:
            return time.perf_counter() - t0, k
        g = A.T @ r
        g *= 2.0 / m
        x = x - lr * g
        k += 1


def bare_lbfgs_to_target(A: np.ndarray, y: np.ndarray, f0: float, fstar: float,
                         tol: float) -> tuple[float, int]:
    """Seconds and iterations of scipy's L-BFGS-B until the target (checked in its callback)."""
    m = y.size
    thr = fstar + tol * (f0 - fstar)

    def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
        r = A @ x
        r -= y
        g = A.T @ r
        g *= 2.0 / m
        return float(np.vdot(r, r)) / m, g

    def cb(intermediate_result) -> None:  # type: ignore[no-untyped-def]
        if intermediate_result.fun <= thr:
            raise StopIteration

    t0 = time.perf_counter()
    res = minimize(fg, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B", callback=cb,
                   options={"maxcor": 10, "maxls": 20, "ftol": 0.0, "gtol": 0.0})
    return time.perf_counter() - t0, int(res.nit)


def med_min(xs: list[float]) -> str:
    return f"median {statistics.median(xs) * 1e3:9.3f} ms  (min {min(xs) * 1e3:9.3f} ms)"


def load() -> str:
    try:
        import os

        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - no getloadavg
        return "load average unknown"


def interleaved(rounds: int, a, b) -> tuple[list, list]:  # type: ignore[no-untyped-def]
    """``rounds`` results of ``a()`` and ``b()`` in the order a b b a a b b a ..."""
    ra, rb = [], []
    for i in range(rounds):
        if i % 2 == 0:
            ra.append(a())
            rb.append(b())
        else:
            rb.append(b())
            ra.append(a())
    return ra, rb


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--iters", type=int, default=100, help="GD steps per measurement in (1)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved repetitions")
    ap.add_argument("--tol2", type=float, default=1e-3, help="tolerance of comparison (2)")
    ap.add_argument("--threads", type=int, default=1, help="threads of every side")
    args = ap.parse_args(argv)
    from optcmp.environment import machine_stamp, stamp_text

    print("machine: " + stamp_text(machine_stamp(threads=args.threads)))  # what the figures below belong to
    with threadpool_limits(limits=args.threads):
        return _main(args)


def _main(args: argparse.Namespace) -> int:

    t0 = time.perf_counter()
    p = LinearRegression(n_samples=args.rows, seed=0)
    t_data = time.perf_counter() - t0
    opt = p.optimum()
    A, y = p.train_data["A"], p.train_data["y"]
    lr = 1.0 / p.lipschitz()
    f0 = p.fun64(p.init_params(0))
    print(f"problem: LinearRegression(n_samples={args.rows:,}), 5 parameters; data "
          f"{t_data:.2f}s; f0 = {f0:.6g}, f* = {opt.fun:.6g}")
    print(f"numpy {np.__version__}, optcmp {optcmp.__version__}, python {sys.version.split()[0]}"
          f"; threads {args.threads}; {load()}")

    # (1) per-iteration cost of GD ----------------------------------------------------------
    bare_gd(A, y, lr, 3)  # warm the caches for both sides

    def bare_side() -> tuple[float, float]:
        c0 = time.process_time()
        wall = bare_gd(A, y, lr, args.iters)
        return wall / args.iters, (time.process_time() - c0) / args.iters

    def optcmp_side() -> tuple[float, float]:
        c0 = time.process_time()
        r = optcmp.run(p, optcmp.gd(), stopping=RelativeSuboptimality(1e-300)
                           | MaxIter(args.iters), threads=args.threads)
        assert r.nit == args.iters, r.message
        return r.time / r.nit, (time.process_time() - c0) / r.nit

    b1, o1 = interleaved(args.rounds, bare_side, optcmp_side)
    bare, ours = [w for w, _ in b1], [w for w, _ in o1]
    bare_cpu, ours_cpu = [c for _, c in b1], [c for _, c in o1]
    ratio1 = statistics.median(ours) / statistics.median(bare)
    print(f"\n(1) GD per iteration, {args.iters} steps x {args.rounds} rounds")
    print(f"    bare numpy loop : {med_min(bare)}   CPU {med_min(bare_cpu)}")
    print(f"    optcmp timed    : {med_min(ours)}   CPU of the whole run {med_min(ours_cpu)}")
    print(f"    ratio optcmp/bare = {ratio1:.3f}   (target <= 1.05); CPU ratio (whole run) "
          f"{statistics.median(ours_cpu) / statistics.median(bare_cpu):.3f}")

    # (2) whole compare() vs bare time-to-target ---------------------------------------------
    bare2, ours2, its = [], [], None
    for _ in range(args.rounds):
        tg, kg = bare_gd_to_target(A, y, lr, f0, opt.fun, args.tol2)
        tl, kl = bare_lbfgs_to_target(A, y, f0, opt.fun, args.tol2)
        bare2.append(tg + tl)
        t0 = time.perf_counter()
        comp = optcmp.compare(p, [optcmp.gd, optcmp.lbfgs], tol=args.tol2, max_time=None,
                              max_iter=1_000_000, progress=False, threads=args.threads)
        ours2.append(time.perf_counter() - t0)
        assert all(r.status == "converged" for r in comp), [r.message for r in comp]
        its = (kg, kl, comp[0].nit_to_target, comp[1].nit_to_target)
    ratio2 = statistics.median(ours2) / statistics.median(bare2)
    print(f"\n(2) compare([gd, lbfgs], tol={args.tol2:g}) wall time vs bare time-to-target")
    print(f"    iterations to target: bare GD {its[0]}, bare L-BFGS {its[1]}; "
          f"optcmp GD {its[2]}, optcmp L-BFGS {its[3]}")
    print(f"    bare GD + L-BFGS: {med_min(bare2)}")
    print(f"    optcmp compare(): {med_min(ours2)}")
    print(f"    ratio compare/bare = {ratio2:.3f}   (target <= 2)")

    # (3) L-BFGS time-to-target vs the lstsq floor --------------------------------------------
    ls, lb = [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        np.linalg.lstsq(A, y, rcond=None)
        ls.append(time.perf_counter() - t0)
        r = optcmp.run(p, optcmp.lbfgs(), tol=1e-6, threads=args.threads)
        assert r.status == "converged", r.message
        lb.append(r.time_to_target)
    print(f"\n(3) L-BFGS time-to-target (tol 1e-6, {r.nit_to_target} iterations, "
          f"{r.nfev_to_target} evaluations) vs the direct solve")
    print(f"    numpy.linalg.lstsq: {med_min(ls)}")
    print(f"    L-BFGS to target  : {med_min(lb)}")
    print(f"    ratio L-BFGS/lstsq = {statistics.median(lb) / statistics.median(ls):.2f}")
    print(f"\n{load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
