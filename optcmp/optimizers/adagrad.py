r"""Adagrad (Duchi, Hazan and Singer 2011), under the two conventions the frameworks implement.

.. math::

    G_k &= G_{k-1} + g_k^2, \qquad G_0 = \text{initial\_accumulator\_value} \\
    \text{eps\_outside\_sqrt (torch, the paper's } \delta\text{):}\quad
        x_{k+1} &= x_k - \eta_k \frac{g_k}{\sqrt{G_k} + \epsilon} \\
    \text{eps\_inside\_sqrt (Keras):}\quad
        x_{k+1} &= x_k - \eta_k \frac{g_k}{\sqrt{G_k + \epsilon}}

The defaults differ too (docs/same-name-different-meaning.md); optcmp passes both explicitly.

References
----------
J. Duchi, E. Hazan and Y. Singer, "Adaptive Subgradient Methods for Online Learning and
Stochastic Optimization", JMLR 12, 2011.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import (
    ScheduledRule,
    common_params,
    f64,
    keras_common,
    minibatch_params,
    requires,
    spec_from,
    torch_common,
)
from optcmp.optimizers._hyperparams import HyperParam, by_name, one_of, positive_float
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule

#: Adagrad's conventions: torch's (the paper's delta) and Keras'.
CONVENTIONS = ("eps_outside_sqrt", "eps_inside_sqrt")


class AdagradRule(ScheduledRule):
    """Adagrad under ``hp["convention"]``, accumulator started at ``initial_accumulator_value``."""

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x),)

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        (acc,) = buf
        # the initial value is added to the zero buffer on the first step (t == 1) only; not
        # ops.full_like: TensorFlow's casts a Python float through float32 (0.1 -> 0.10000000149)
        first = ops.where(t <= 1.0, ops.zeros_like(acc) + hp["initial_accumulator_value"],
                          ops.zeros_like(acc))
        acc = (acc + first) + g * g
        if hp["convention"] == "eps_outside_sqrt":
            return x - lr * (g / (ops.sqrt(acc) + hp["eps"])), (acc,)
        return x - (lr * g) / ops.sqrt(acc + hp["eps"]), (acc,)


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.Adagrad`` arguments: no ``lr_decay``, no weight decay."""
    return {"lr": float(h["learning_rate"]), "lr_decay": 0.0, "weight_decay": 0.0,
            "initial_accumulator_value": float(h["initial_accumulator_value"]),
            "eps": float(h["eps"]), "fused": None, **torch_common()}


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.Adagrad`` arguments (floats as ``numpy.float64``)."""
    return {"learning_rate": float(h["learning_rate"]),
            "initial_accumulator_value": f64(h["initial_accumulator_value"]),
            "epsilon": f64(h["eps"]), "weight_decay": None, **keras_common(h)}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.adagrad`` arguments (epsilon inside the square root, optax's only form)."""
    return {"learning_rate": float(h["learning_rate"]),
            "initial_accumulator_value": float(h["initial_accumulator_value"]),
            "eps": float(h["eps"])}


def adagrad(learning_rate: float = 0.01, eps: float = 1e-10,
            initial_accumulator_value: float = 0.0, convention: str = "eps_outside_sqrt",
            schedule: str | Schedule | None = "constant", clip_norm: float | None = None,
            batch_size: int | None = None, shuffle: bool = True, *,
            impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""Adagrad, full batch or minibatch, under a named convention.

    Parameters
    ----------
    learning_rate : float, default 0.01
    eps : float, default 1e-10
    initial_accumulator_value : float, default 0.0
        :math:`G_0 \ge 0`.
    convention : {"eps_outside_sqrt", "eps_inside_sqrt"}, default "eps_outside_sqrt"
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
    batch_size : int, optional
    shuffle : bool, default True
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("adagrad", locals())


register_optimizer(OptimizerInfo(
    name="adagrad",
    params=by_name(
        HyperParam("learning_rate", 0.01, positive_float("learning_rate"), "step size"),
        HyperParam("eps", 1e-10, positive_float("eps"), "added to the denominator"),
        HyperParam("initial_accumulator_value", 0.0,
                   positive_float("initial_accumulator_value", allow_zero=True),
                   "start of the sum of squared gradients, >= 0"),
        HyperParam("convention", "eps_outside_sqrt", one_of("convention", CONVENTIONS),
                   "eps_outside_sqrt (torch) or eps_inside_sqrt (Keras)"),
        common_params(),
        minibatch_params(),
    ),
    summary="Adagrad, full or minibatch; convention eps_outside_sqrt (torch) or "
            "eps_inside_sqrt (Keras)",
    reference="Duchi, Hazan & Singer (2011), JMLR 12",
    rule=AdagradRule(),
    stochastic=True,
    natives=(TorchOptimizer("Adagrad", _torch_options,
                            requires=requires("convention", "eps_outside_sqrt",
                                              "torch.optim.Adagrad")),
             OptaxOptimizer("adagrad", _optax_options,
                            requires=requires("convention", "eps_inside_sqrt", "optax.adagrad")),
             KerasOptimizer("Adagrad", _keras_options,
                            requires=requires("convention", "eps_inside_sqrt",
                                              "keras.optimizers.Adagrad"))),
), adagrad)
