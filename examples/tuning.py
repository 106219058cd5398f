"""Fair tuning: every learning rate gets the same target and the same budget, then compare.

Tunes the learning rate of gradient descent and of Adadelta on a 100,000-row regression
(5,000 rows with ``OPTCMP_QUICK=1``) with ``optcmp.tune``: each configuration of a small grid
runs to relative suboptimality 1e-3, 3 times (2 in quick mode), scored by iterations-to-target
(deterministic, independent of the machine's load); a run that misses the target scores the
whole budget (5,000 iterations). Then the chosen settings run in an ordinary
``optcmp.compare`` next to L-BFGS, to the same target.

Expected output: the tuning table (every configuration, its median iterations to target, how
many repetitions reached it, ``<- best`` on the chosen one of each optimizer, the tuning cost),
one line per chosen setting such as::

    chosen: gd(learning_rate=0.00099353)

and the comparison table of the tuned optimizers and L-BFGS.
"""

from __future__ import annotations

import os

import optcmp

QUICK = os.environ.get("OPTCMP_QUICK") == "1"


def main() -> None:
    problem = optcmp.problems.LinearRegression(n_samples=5_000 if QUICK else 100_000)
    inv_l = 1.0 / problem.lipschitz()
    grid = {
        "gd": {"learning_rate": [round(c * inv_l, 8) for c in (0.25, 0.5, 1.0, 1.9)]},
        "adadelta": {"learning_rate": [0.1, 1.0, 10.0]},
    }
    result = optcmp.tune(problem, [optcmp.gd, optcmp.adadelta], grid, by="iterations",
                         budget=5_000, tol=1e-3, repeats=2 if QUICK else 3)
    print(result.table())
    cmp = optcmp.compare(problem, [*result.specs, optcmp.lbfgs], tol=1e-3, max_iter=5_000,
                         progress=False)
    print(cmp.table())


if __name__ == "__main__":
    main()
