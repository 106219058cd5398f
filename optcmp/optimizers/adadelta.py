r"""Adadelta (Zeiler 2012).

.. math::

    E[g^2]_k &= \rho E[g^2]_{k-1} + (1-\rho) g_k^2 \\
    \Delta x_k &= \frac{\sqrt{E[\Delta x^2]_{k-1} + \epsilon}}{\sqrt{E[g^2]_k + \epsilon}} g_k \\
    E[\Delta x^2]_k &= \rho E[\Delta x^2]_{k-1} + (1-\rho) \Delta x_k^2 \\
    x_{k+1} &= x_k - \eta \Delta x_k

optcmp's defaults are the paper's (:math:`\rho = 0.95`, :math:`\epsilon = 10^{-6}`,
:math:`\eta = 1`), passed to every framework; with them matched the update rules are identical.

References
----------
M. D. Zeiler, "ADADELTA: An Adaptive Learning Rate Method", arXiv:1212.5701, 2012.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import minibatch_params, spec_from
from optcmp.optimizers._hyperparams import HyperParam, by_name, positive_float
from optcmp.optimizers._implementations import (
    KerasOptimizer,
    OptaxOptimizer,
    TorchOptimizer,
    UpdateRule,
)
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer


class AdadeltaRule(UpdateRule):
    """Zeiler's Adadelta with a learning-rate multiplier (torch/Keras form)."""

    def init_state(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x), ops.zeros_like(x))

    def update(self, ops: Any, x: Any, g: Any, state: tuple[Any, ...], hp: dict[str, Any],
               curvature: Any) -> tuple[Any, tuple[Any, ...]]:
        rho, eps = hp["rho"], hp["eps"]
        eg2, edx2 = state
        eg2 = rho * eg2 + (1.0 - rho) * (g * g)
        dx = ops.sqrt(edx2 + eps) / ops.sqrt(eg2 + eps) * g
        edx2 = rho * edx2 + (1.0 - rho) * (dx * dx)
        return x - hp["learning_rate"] * dx, (eg2, edx2)


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.Adadelta`` arguments: optcmp's three values, no weight decay."""
    return {"lr": float(h["learning_rate"]), "rho": float(h["rho"]), "eps": float(h["eps"]),
            "weight_decay": 0.0, "maximize": False, "foreach": False}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.adadelta`` arguments: optcmp's three values, no weight decay."""
    return {"learning_rate": float(h["learning_rate"]), "rho": float(h["rho"]),
            "eps": float(h["eps"]), "weight_decay": 0.0, "weight_decay_mask": None}


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.Adadelta`` arguments: optcmp's three values, no decay or clipping."""
    return {"learning_rate": float(h["learning_rate"]), "rho": float(h["rho"]),
            "epsilon": float(h["eps"]), "weight_decay": None, "clipnorm": None,
            "clipvalue": None, "global_clipnorm": None, "use_ema": False}


def adadelta(learning_rate: float = 1.0, rho: float = 0.95, eps: float = 1e-6,
             batch_size: int | None = None, shuffle: bool = True, *,
             impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""Adadelta (Zeiler 2012), full batch or on minibatches (``batch_size``).

    Parameters
    ----------
    learning_rate : float, default 1.0
    rho : float, default 0.95
        Decay rate in [0, 1) of both running averages.
    eps : float, default 1e-6
    batch_size : int, optional
    shuffle : bool, default True
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("adadelta", locals())


register_optimizer(OptimizerInfo(
    name="adadelta",
    params=by_name(
        HyperParam("learning_rate", 1.0, positive_float("learning_rate"),
                   "multiplier of the Adadelta step"),
        HyperParam("rho", 0.95, positive_float("rho", upper=1.0, allow_zero=True),
                   "decay of the running averages, in [0, 1)"),
        HyperParam("eps", 1e-6, positive_float("eps"), "added inside both square roots"),
        minibatch_params(),
    ),
    summary="Adadelta (Zeiler 2012), full or minibatch",
    reference="Zeiler (2012), arXiv:1212.5701",
    rule=AdadeltaRule(),
    stochastic=True,
    natives=(TorchOptimizer("Adadelta", _torch_options),
             KerasOptimizer("Adadelta", _keras_options),
             OptaxOptimizer("adadelta", _optax_options)),
), adadelta)
