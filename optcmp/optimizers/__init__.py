"""Optimizers, one module each: spec factory, hyperparameters, reference rule and natives.

Every module of this package other than ``base`` is imported here and registers its optimizer;
its spec factory becomes ``optcmp.optimizers.<name>`` and ``optcmp.<name>``. Adding an optimizer
is adding one module (``docs/adding-an-optimizer.md``): nothing else lists the optimizers. The
building blocks of a declaration are public here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from optcmp.optimizers import schedule
from optcmp.optimizers._common import ScheduledRule, clip_global_norm, common_params
from optcmp.optimizers._hyperparams import (
    HyperParam,
    boolean,
    one_of,
    optional_positive_float,
    optional_positive_int,
    positive_float,
    positive_int,
)
from optcmp.optimizers._implementations import (
    KerasOptimizer,
    Native,
    OptaxOptimizer,
    ScipyMinimize,
    TorchOptimizer,
    UpdateRule,
)
from optcmp.optimizers.base import (
    IMPLS,
    Conversion,
    NotApplicable,
    OptimizerInfo,
    OptimizerSpec,
    as_spec,
    canonical_optimizer,
    factories,
    get_optimizer,
    optimizer_info,
    optimizer_names,
    register_optimizer,
    resolve_impl,
    unregister_optimizer,
)


def _discover() -> dict[str, Callable[..., OptimizerSpec]]:
    """Import every optimizer module of this package; their factories by name."""
    for mod in pkgutil.iter_modules(__path__):
        if mod.name != "base" and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    return factories()


#: Spec factory of every optimizer in this package, by canonical name.
FACTORIES: dict[str, Callable[..., OptimizerSpec]] = _discover()
globals().update(FACTORIES)


def __getattr__(name: str) -> Any:
    """The spec factory of an optimizer registered after import (e.g. by a test)."""
    factory = factories().get(name)
    if factory is None:
        raise AttributeError(f"module 'optcmp.optimizers' has no attribute {name!r}")
    return factory


__all__ = [
    "FACTORIES", "IMPLS", "Conversion", "HyperParam", "KerasOptimizer", "Native", "NotApplicable",
    "OptaxOptimizer", "OptimizerInfo", "OptimizerSpec", "ScheduledRule", "ScipyMinimize",
    "TorchOptimizer", "UpdateRule", "as_spec", "boolean", "canonical_optimizer",
    "clip_global_norm", "common_params", "factories", "get_optimizer", "one_of", "optimizer_info",
    "optimizer_names", "optional_positive_float", "optional_positive_int", "positive_float",
    "positive_int", "register_optimizer", "resolve_impl", "schedule", "unregister_optimizer",
    *FACTORIES,
]
