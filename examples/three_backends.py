"""Three backends: the same optimizers on numpy, PyTorch and TensorFlow, checked and timed.

First checks that SGD with momentum (torch.optim.SGD and Keras SGD on their backends) computes
the same iterates as numpy's reference rule (float64, same data, same start, same minibatches:
``optcmp.check_equivalence``, 20 steps), then runs gradient descent, Adadelta and L-BFGS on
every installed backend to the same target (relative suboptimality 1e-6) on a 200,000-row
regression (20,000 rows with ``OPTCMP_QUICK=1``; at most 20,000 iterations per run, runs 10x
slower than the fastest censored) and prints the time-to-target table. Backends that are not installed are
listed as ``skipped``; torch runs before TensorFlow.

Expected output: the equivalence report, whose first line ends with the verdict, e.g.::

    sgd(learning_rate=0.01, ...) on linear_regression, float64, 20 steps: equivalent (max
    relative difference 7.96e-15, tolerance 1e-10; ...)

(``inconclusive`` when only numpy is installed) followed by the implementation each backend
ran (``torch.optim.SGD(...)``, ``keras.optimizers.SGD(...)``), then the table with one row per
optimizer and backend, and finally::

    backends run: numpy, torch, tensorflow
"""

from __future__ import annotations

import os

import optcmp

QUICK = os.environ.get("OPTCMP_QUICK") == "1"


def main() -> None:
    problem = optcmp.problems.LinearRegression(n_samples=20_000 if QUICK else 200_000)
    backends = optcmp.available_backends()

    eq = optcmp.check_equivalence(problem, optcmp.sgd(learning_rate=0.01, batch_size=256, momentum=0.9),
                                  backends=backends, steps=20)
    print(eq)

    cmp = optcmp.compare(problem, [optcmp.gd, optcmp.adadelta, optcmp.lbfgs], backends=backends,
                         max_iter=20_000, progress=False)
    print(cmp.table())
    ran = [b for b in backends if any(r.backend == b and r.status != "skipped" for r in cmp)]
    print("backends run: " + ", ".join(ran))


if __name__ == "__main__":
    main()
