"""Pieces shared by the optimizer modules: the scheduled, clipped rule, the common
hyperparameters, and the arguments every torch or Keras native passes. Clipping is by the
global norm (Keras' ``global_clipnorm``), never Keras' per-variable ``clipnorm``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

from optcmp.optimizers._hyperparams import (
    HyperParam,
    boolean,
    by_name,
    optional_positive_float,
    optional_positive_int,
)
from optcmp.optimizers._implementations import UpdateRule
from optcmp.optimizers.base import OptimizerSpec, get_optimizer
from optcmp.optimizers.schedule import backend_namespace, check_schedule, parse


def clip_global_norm(ops: Any, g: Any, clip_norm: float | None) -> Any:
    r"""``g`` rescaled to global norm at most ``clip_norm`` (:math:`c`).

    :math:`g \cdot c \min(1/\lVert g\rVert, 1/c)`: Keras' formula (torch's ``clip_grad_norm_``
    divides by ``norm + 1e-6``; optcmp's torch adapter applies this one).

    Parameters
    ----------
    ops : namespace
    g : array, shape (n_params,)
    clip_norm : float or None
        ``None``: no clipping.

    Returns
    -------
    array, shape (n_params,)
    """
    if clip_norm is None:
        return g
    n = ops.norm(g)
    c = float(clip_norm)
    return g * (c * ops.minimum(1.0 / n, ops.zeros_like(n) + 1.0 / c))


class ScheduledRule(UpdateRule):
    """An update rule with a step counter, a learning-rate schedule and global-norm clipping.

    The state is ``(k, *buffers)``; step ``k`` calls :meth:`apply` with ``lr = learning_rate *
    s(k)`` and the gradient clipped to ``clip_norm``.
    """

    def init_state(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.sum(ops.zeros_like(x)), *self.buffers(ops, x))

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        """The optimizer's own state arrays (default: none)."""
        return ()

    def update(self, ops: Any, x: Any, g: Any, state: tuple[Any, ...], hp: dict[str, Any],
               curvature: Any) -> tuple[Any, tuple[Any, ...]]:
        k, *buf = state
        g = clip_global_norm(ops, g, hp.get("clip_norm"))
        x_new, new_buf = self.apply(ops, x, g, tuple(buf), hp, self.scheduled(ops, k, hp),
                                    k + 1.0)
        return x_new, (k + 1.0, *new_buf)

    @staticmethod
    def scheduled(ops: Any, k: Any, hp: dict[str, Any]) -> Any:
        """The learning rate of step ``k + 1``: ``learning_rate * s(k)``."""
        sch = parse(hp.get("schedule", "constant"))
        lr: Any = hp["learning_rate"]
        return lr if sch.is_constant else lr * sch.factor(k, backend_namespace(ops))

    @abstractmethod
    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        """``(x_new, buffers_new)`` of step ``t`` (1 for the first), learning rate ``lr``."""


def common_params() -> dict[str, HyperParam]:
    """The ``schedule`` and ``clip_norm`` hyperparameters (appended to an optimizer's own).

    Returns
    -------
    dict of str to HyperParam
    """
    return by_name(
        HyperParam("schedule", "constant", check_schedule,
                   "learning-rate schedule, unit = optimizer step"),
        HyperParam("clip_norm", None, optional_positive_float("clip_norm"),
                   "clip the gradient to this global norm (None: off)"),
    )


def minibatch_params() -> dict[str, HyperParam]:
    """The ``batch_size`` (default ``None``: full batch) and ``shuffle`` hyperparameters."""
    return by_name(
        HyperParam("batch_size", None, optional_positive_int("batch_size"),
                   "rows per minibatch (None: full batch)"),
        HyperParam("shuffle", True, boolean("shuffle", choice=False),
                   "reshuffle the rows every epoch (minibatches only)"),
    )


def spec_from(name: str, arguments: dict[str, Any]) -> OptimizerSpec:
    """The spec a factory's arguments describe: ``return spec_from("adam", locals())``."""
    hp = dict(arguments)
    return get_optimizer(name, impl=hp.pop("impl"), label=hp.pop("label"), **hp)


def f64(v: Any) -> np.float64:
    """A hyperparameter as ``numpy.float64``, which Keras keeps (a Python float it casts
    through float32: ``ops.cast(0.9, "float64")`` is 0.8999999761581421)."""
    return np.float64(v)


def keras_common(h: Mapping[str, Any]) -> dict[str, Any]:
    """The Keras base-optimizer arguments: global-norm clipping, no EMA, no accumulation."""
    c = h.get("clip_norm")
    return {"clipnorm": None, "clipvalue": None,
            "global_clipnorm": None if c is None else f64(c), "use_ema": False,
            "loss_scale_factor": None, "gradient_accumulation_steps": None}


def torch_common() -> dict[str, Any]:
    """torch arguments every new optimizer passes: minimize, the single-tensor path."""
    return {"maximize": False, "foreach": False, "differentiable": False}


def both(*checks: Any) -> Any:
    """The first reason any of ``checks`` gives (a combined ``requires``)."""

    def check(h: Mapping[str, Any]) -> str | None:
        for c in checks:
            why = c(h)
            if why is not None:
                return str(why)
        return None

    return check


def requires(param: str, value: str, framework: str) -> Any:
    """A :attr:`~optcmp.optimizers.Native.requires` check: ``hp[param] == value``."""

    def check(h: Mapping[str, Any]) -> str | None:
        if h.get(param) == value:
            return None
        return (f"{framework} implements {param}={value!r}, not {h.get(param)!r}; the reference "
                f"rule (impl='reference') runs {h.get(param)!r} on every backend")

    return check
