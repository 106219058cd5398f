"""The optimizer database: one row per (optimizer, problem), in the manner of torch's OptimizerInfo.

Each row gives, for every (backend, impl) the optimizer has, the iterations (and evaluations)
to the target with ``threads=1``, and, per impl, how closely the backends must agree step by
step (:func:`optcmp.check_equivalence`). ``tests/test_optimizer_db.py`` turns the rows into
tests, and checks that every registered optimizer has a row and every implementation a count:
adding an optimizer is its module plus one row here.

The counts were measured on the code before the redesign (issue 10) and are unchanged by it.
A (backend, impl) pair missing from ``nit`` must be one the optimizer does not implement
(``resolve_adapter`` refuses it with the available impls), unless ``skip`` says why not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from conftest import lr_a, lr_b

import optcmp
from optcmp.optimizers.base import OptimizerSpec
from optcmp.problems import FizzBuzzMLP, Problem

#: Backend x impl pairs, keyed as ``"backend/impl"``.
Key = str


@dataclass(frozen=True)
class Row:
    """One optimizer on one problem.

    Attributes
    ----------
    id : str
        Test id.
    optimizer : str
        Canonical optimizer name.
    spec : callable
        ``spec(impl) -> OptimizerSpec`` with every hyperparameter of the row.
    problem : callable
        Builds the problem (``conftest`` recipes, FizzBuzz).
    tol : float or None
        Relative-suboptimality target (None: the problem's default target).
    nit : dict
        ``"backend/impl" -> nit_to_target`` (threads=1).
    nfev : dict
        ``"backend/impl" -> nfev_to_target`` where it differs from ``nit + 1``.
    equivalence : dict
        ``impl -> tolerance`` of the largest relative difference between backends over
        ``steps`` iterations, or ``"different"`` where they are known to part.
    steps : int
        Iterations of the equivalence check.
    skip : dict
        ``"backend/impl" -> reason`` for implemented pairs deliberately not run.
    """

    id: str
    optimizer: str
    spec: Callable[[str], OptimizerSpec]
    problem: Callable[[], Problem]
    tol: float | None
    nit: dict[Key, int]
    nfev: dict[Key, int] = field(default_factory=dict)
    equivalence: dict[str, float | str] = field(default_factory=dict)
    steps: int = 50
    skip: dict[Key, str] = field(default_factory=dict)
    max_iter: int = 60_000


def _all(impls: dict[str, tuple[str, ...]], n: int) -> dict[Key, int]:
    return {f"{b}/{i}": n for b, ims in impls.items() for i in ims}


REFERENCE = {"numpy": ("reference",), "torch": ("reference",), "tensorflow": ("reference",)}
NATIVE_TOO = {"numpy": ("reference",), "torch": ("reference", "native"),
              "tensorflow": ("reference", "native")}

ROWS: list[Row] = [
    Row("gd-LR-A", "gd", lambda i: optcmp.gd(0.1, impl=i), lr_a, 1e-8,
        nit=_all(REFERENCE, 46), equivalence={"reference": 1e-13}),
    Row("diag_newton-LR-B", "diag_newton", lambda i: optcmp.diag_newton(impl=i), lr_b, 1e-6,
        nit=_all(REFERENCE, 24), equivalence={"reference": 1e-13}),
    Row("adadelta-LR-A", "adadelta", lambda i: optcmp.adadelta(rho=0.9, impl=i), lr_a, 1e-3,
        nit=_all(NATIVE_TOO, 546), equivalence={"reference": 1e-13, "native": 1e-13}),
    Row("sgd-momentum-LR-A", "sgd",
        lambda i: optcmp.sgd(0.05, batch_size=100, momentum=0.9, impl=i), lr_a, 1e-3,
        nit=_all(NATIVE_TOO, 70), nfev=_all(NATIVE_TOO, 70),
        equivalence={"reference": 1e-13, "native": 1e-13}),
    Row("lbfgs-LR-A", "lbfgs", lambda i: optcmp.lbfgs(impl=i), lr_a, 1e-10,
        nit={"numpy/scipy": 5, "torch/native": 5, "torch/scipy": 5, "tensorflow/scipy": 5},
        nfev={"numpy/scipy": 6, "torch/native": 12, "torch/scipy": 6, "tensorflow/scipy": 6},
        equivalence={"scipy": 1e-9}),
    # condition number ~1e8: the float64 rounding of an autodiff gradient moves scipy's path
    Row("lbfgs-LR-B", "lbfgs", lambda i: optcmp.lbfgs(impl=i), lr_b, 1e-10,
        nit={"numpy/scipy": 26, "torch/native": 36, "torch/scipy": 24, "tensorflow/scipy": 26},
        nfev={"numpy/scipy": 39, "torch/native": 82, "torch/scipy": 36, "tensorflow/scipy": 39},
        equivalence={"scipy": "different"}, steps=20),
    # FizzBuzz: a non-convex loss; the backends' L-BFGS paths part after a few dozen steps, and
    # the path depends on the reduction order (with 2 threads: torch/scipy 216, tensorflow 216)
    Row("lbfgs-FizzBuzz", "lbfgs", lambda i: optcmp.lbfgs(impl=i), FizzBuzzMLP, None,
        nit={"numpy/scipy": 228, "torch/native": 310, "torch/scipy": 214},
        nfev={"numpy/scipy": 260, "torch/native": 714, "torch/scipy": 242},
        skip={"tensorflow/scipy": "TensorFlow fixes its thread pools when it starts (threads=1 "
                                  "cannot be set after another test used it), and this path "
                                  "depends on the reduction order: 229 with 1 thread, 216 "
                                  "with 2"},
        max_iter=3000),
]
