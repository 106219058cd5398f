"""optcmp: fair, convergence-based comparison of numerical optimizers across frameworks.

Every backend gets the same problem, data, initial point, minibatch order and hyperparameter
meaning; runs stop on convergence and are judged by time-to-target, timed honestly.

>>> import optcmp
>>> problem = optcmp.problems.LinearRegression(n_samples=10_000)
>>> result = optcmp.compare(problem, [optcmp.gd, optcmp.lbfgs], progress=False)
>>> print(result.table())  # doctest: +SKIP

Importing optcmp loads no torch, TensorFlow or Keras; a backend's framework is imported when a
run needs it.
"""

from optcmp import problems, stopping, store
from optcmp._version import __version__
from optcmp.backends import available_backends, get_backend
from optcmp.compare import compare, make_stopping, run_one
from optcmp.equivalence import EquivalenceResult, check_equivalence
from optcmp.optimizers import (
    OptimizerSpec,
    adadelta,
    diag_newton,
    gd,
    get_optimizer,
    lbfgs,
    optimizer_names,
    sgd,
)
from optcmp.results import Comparison, RunResult, Trace
from optcmp.stopping import (
    AbsoluteSuboptimality,
    AccuracyTarget,
    Divergence,
    GradientNorm,
    LossTarget,
    MaxEvals,
    MaxIter,
    MaxTime,
    MetricTarget,
    RelativeChange,
    RelativeSuboptimality,
)
from optcmp.tuning import TuneResult, tune

__all__ = [
    "AbsoluteSuboptimality", "AccuracyTarget", "Comparison", "Divergence", "EquivalenceResult",
    "GradientNorm",
    "LossTarget", "MaxEvals", "MaxIter", "MaxTime", "MetricTarget", "OptimizerSpec",
    "RelativeChange", "RelativeSuboptimality", "RunResult", "Trace", "__version__", "adadelta",
    "available_backends", "check_equivalence", "compare", "diag_newton", "gd", "get_backend",
    "get_optimizer", "lbfgs", "make_stopping", "optimizer_names", "problems", "run_one", "sgd",
    "stopping", "store", "TuneResult", "tune",
]
