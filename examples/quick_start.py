"""Quick start: five optimizers race to the same target on a linear regression.

Builds the default least-squares problem of optcmp's first story (1,000,000 rows, 4
count-valued features on very different scales; 20,000 rows with ``OPTCMP_QUICK=1``), runs
gradient descent, diagonal-Newton-scaled GD, Adadelta, minibatch SGD and L-BFGS on numpy until
the relative suboptimality reaches 1e-6 (or a 10-second budget, 1 s in quick mode), and prints
the time-to-target table.

Expected output: the table, converged runs first (typically L-BFGS and diag_newton reach the
target; plain GD, Adadelta and SGD run out of budget on these badly scaled features), then a
line such as::

    fastest to target: lbfgs in 0.085 s (12 iterations, 16 gradient evaluations)
"""

from __future__ import annotations

import os

import optcmp

QUICK = os.environ.get("OPTCMP_QUICK") == "1"


def main() -> None:
    problem = optcmp.problems.LinearRegression(n_samples=20_000 if QUICK else 1_000_000)
    optimizers = [optcmp.gd, optcmp.diag_newton, optcmp.adadelta, optcmp.sgd, optcmp.lbfgs]
    cmp = optcmp.compare(problem, optimizers, backends="numpy",
                         max_time=1.0 if QUICK else 10.0, progress=False)
    print(cmp.table())
    best = cmp.best()
    if best is None:
        print("no optimizer reached the target within its budget")
    else:
        print(f"fastest to target: {best.label} in {best.time_to_target:.3f} s "
              f"({best.nit_to_target} iterations, {best.njev_to_target} gradient evaluations)")


if __name__ == "__main__":
    main()
