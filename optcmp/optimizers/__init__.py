"""Optimizer specs and adapters: gd, diag_newton, adadelta, sgd, lbfgs."""

from optcmp.optimizers.adadelta import adadelta
from optcmp.optimizers.base import (
    IMPLS,
    Adapter,
    LoopAdapter,
    NotApplicable,
    OptimizerInfo,
    OptimizerSpec,
    ReferenceAdapter,
    StepOutput,
    UpdateRule,
    as_spec,
    canonical_optimizer,
    get_optimizer,
    optimizer_info,
    optimizer_names,
    register_adapter,
    register_optimizer,
    resolve_adapter,
)
from optcmp.optimizers.diag_newton import diag_newton
from optcmp.optimizers.gd import gd
from optcmp.optimizers.lbfgs import lbfgs
from optcmp.optimizers.sgd import sgd

__all__ = [
    "IMPLS", "Adapter", "LoopAdapter", "NotApplicable", "OptimizerInfo", "OptimizerSpec", "ReferenceAdapter",
    "StepOutput", "UpdateRule", "adadelta", "as_spec", "canonical_optimizer", "diag_newton", "gd",
    "get_optimizer", "lbfgs", "optimizer_info", "optimizer_names", "register_adapter",
    "register_optimizer", "resolve_adapter", "sgd",
]
