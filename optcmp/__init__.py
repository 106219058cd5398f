"""optcmp: fair, convergence-based comparison of numerical optimizers across frameworks.

Importing optcmp loads no torch, TensorFlow or Keras, and no scipy submodule; a backend's
framework is imported when a run needs it. Every optimizer's spec factory is an attribute
(``optcmp.gd``, ``optcmp.adadelta``, ...): see :data:`optcmp.optimizers.FACTORIES`.
"""

from typing import Any

from optcmp import problems, stopping, store, suites
from optcmp._version import __version__
from optcmp.comparison import Comparison
from optcmp.engine import RunConfig, make_stopping, run
from optcmp.equivalence import EquivalenceResult, ModelEquivalence, check_equivalence
from optcmp.frameworks import available_backends, get_backend
from optcmp.optimizers import FACTORIES as _FACTORIES
from optcmp.optimizers import OptimizerSpec, get_optimizer, optimizer_names
from optcmp.optimizers import factories as _factories
from optcmp.problems.gradcheck import GradientCheck, GradientError, check_gradient
from optcmp.results import RunResult, Trace
from optcmp.stopping import (
    AbsoluteSuboptimality,
    AccuracyTarget,
    CombinedTarget,
    Divergence,
    GradientNorm,
    LossTarget,
    MaxEvals,
    MaxIter,
    MaxTime,
    MetricTarget,
    RelativeChange,
    RelativeSuboptimality,
    Stalled,
)
from optcmp.sweep import compare
from optcmp.tune_result import TuneResult
from optcmp.tuning import tune

globals().update(_FACTORIES)


def __getattr__(name: str) -> Any:
    """The spec factory of an optimizer registered after import (``optcmp.<name>``)."""
    factory = _factories().get(name)
    if factory is None:
        raise AttributeError(f"module 'optcmp' has no attribute {name!r}")
    return factory


def __dir__() -> list[str]:
    """The module's names and every registered optimizer's factory."""
    return sorted({*globals(), *_factories()})


__all__ = [
    "AbsoluteSuboptimality", "AccuracyTarget", "CombinedTarget", "Comparison", "Divergence",
    "EquivalenceResult", "ModelEquivalence", "GradientCheck", "GradientError", "GradientNorm", "LossTarget", "MaxEvals",
    "MaxIter", "MaxTime", "MetricTarget", "OptimizerSpec", "RelativeChange",
    "RelativeSuboptimality", "RunConfig", "RunResult", "Stalled", "Trace", "TuneResult",
    "__version__", "available_backends", "check_equivalence", "check_gradient", "compare",
    "get_backend", "get_optimizer", "make_stopping", "optimizer_names", "problems", "run",
    "stopping", "store", "suites", "tune", *_FACTORIES,
]
