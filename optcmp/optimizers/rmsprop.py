r"""RMSprop (Tieleman and Hinton 2012), under the two conventions the frameworks implement.

.. math::

    v_k &= \rho v_{k-1} + (1-\rho) g_k^2 \\
    \text{eps\_outside\_sqrt (torch):}\quad
        b_k &= \mu b_{k-1} + \frac{g_k}{\sqrt{v_k} + \epsilon}, \qquad x_{k+1} = x_k - \eta_k b_k \\
    \text{eps\_inside\_sqrt (Keras):}\quad
        u_k &= \mu u_{k-1} + \frac{\eta_k g_k}{\sqrt{v_k + \epsilon}}, \qquad x_{k+1} = x_k - u_k

``centered=True`` subtracts :math:`\bar g_k^2` (:math:`\bar g_k = \rho \bar g_{k-1} +
(1-\rho) g_k`) from :math:`v_k` under the root. The two differ for every :math:`\epsilon`; the
reference rule runs both, each native its own.

References
----------
T. Tieleman and G. Hinton, Lecture 6.5 "rmsprop: Divide the gradient by a running average of its
recent magnitude", COURSERA: Neural Networks for Machine Learning, 2012. A. Graves, "Generating
Sequences With Recurrent Neural Networks", arXiv:1308.0850, 2013 (centered form).
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
from optcmp.optimizers._hyperparams import HyperParam, boolean, by_name, one_of, positive_float
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule

#: RMSprop's conventions: torch's and Keras'.
CONVENTIONS = ("eps_outside_sqrt", "eps_inside_sqrt")


class RMSpropRule(ScheduledRule):
    """RMSprop under ``hp["convention"]``, in each framework's arithmetic order."""

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x), ops.zeros_like(x), ops.zeros_like(x))

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        rho, eps, mu = hp["rho"], hp["eps"], hp["momentum"]
        v, gbar, b = buf
        v = v * rho + (1.0 - rho) * (g * g)
        if hp["convention"] == "eps_outside_sqrt":
            if hp["centered"]:
                gbar = gbar + (1.0 - rho) * (g - gbar)
                denom = ops.sqrt(v - gbar * gbar) + eps
            else:
                denom = ops.sqrt(v) + eps
            if mu > 0.0:
                b = b * mu + g / denom
                return x - lr * b, (v, gbar, b)
            return x - lr * (g / denom), (v, gbar, b)
        if hp["centered"]:
            gbar = rho * gbar + (1.0 - rho) * g
            inc = lr * g / ops.sqrt(v - gbar * gbar + eps)
        else:
            inc = lr * g / ops.sqrt(v + eps)
        if mu > 0.0:
            b = mu * b + inc
            return x - b, (v, gbar, b)
        return x - inc, (v, gbar, b)


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.RMSprop`` arguments (``alpha`` is optcmp's ``rho``), no weight decay."""
    return {"lr": float(h["learning_rate"]), "alpha": float(h["rho"]), "eps": float(h["eps"]),
            "weight_decay": 0.0, "momentum": float(h["momentum"]),
            "centered": bool(h["centered"]), "capturable": False, **torch_common()}


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.RMSprop`` arguments (floats as ``numpy.float64``), no weight decay."""
    return {"learning_rate": float(h["learning_rate"]), "rho": f64(h["rho"]),
            "momentum": f64(h["momentum"]), "epsilon": f64(h["eps"]),
            "centered": bool(h["centered"]), "weight_decay": None, **keras_common(h)}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.rmsprop`` arguments: ``eps_in_sqrt`` from the convention, no bias correction."""
    mu = float(h["momentum"])
    return {"learning_rate": float(h["learning_rate"]), "decay": float(h["rho"]),
            "eps": float(h["eps"]), "initial_scale": 0.0,
            "eps_in_sqrt": h["convention"] == "eps_inside_sqrt", "centered": bool(h["centered"]),
            "momentum": mu or None, "nesterov": False, "bias_correction": False}


def _optax_requires(h: Mapping[str, Any]) -> str | None:
    """optax keeps the learning rate inside the momentum buffer (Keras' place) for both epsilon
    placements: ``eps_in_sqrt=False`` is torch's algorithm only without momentum or schedule."""
    if h["convention"] == "eps_inside_sqrt" or h["momentum"] == 0.0 or \
            h.get("schedule", "constant") == "constant":
        return None
    return ("optax.rmsprop(eps_in_sqrt=False) puts the learning rate inside the momentum "
            "buffer, torch outside: with momentum under schedule="
            f"{h['schedule']!r} it matches neither convention; the reference rule "
            "(impl='reference') runs 'eps_outside_sqrt' on every backend")


def rmsprop(learning_rate: float = 1e-3, rho: float = 0.9, eps: float = 1e-8,
            momentum: float = 0.0, centered: bool = False,
            convention: str = "eps_outside_sqrt", schedule: str | Schedule | None = "constant",
            clip_norm: float | None = None,
            batch_size: int | None = None, shuffle: bool = True, *, impl: str = "auto",
            label: str = "") -> OptimizerSpec:
    r"""RMSprop, full batch or minibatch, under a named convention.

    Parameters
    ----------
    learning_rate : float, default 1e-3
    rho : float, default 0.9
        Decay of the mean square in [0, 1) (torch's ``alpha``).
    eps : float, default 1e-8
    momentum : float, default 0.0
    centered : bool, default False
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
    return spec_from("rmsprop", locals())


register_optimizer(OptimizerInfo(
    name="rmsprop",
    aliases=("rms_prop",),
    params=by_name(
        HyperParam("learning_rate", 1e-3, positive_float("learning_rate"), "step size"),
        HyperParam("rho", 0.9, positive_float("rho", upper=1.0, allow_zero=True),
                   "decay of the mean square, in [0, 1)"),
        HyperParam("eps", 1e-8, positive_float("eps"), "added to the denominator"),
        HyperParam("momentum", 0.0, positive_float("momentum", upper=1.0, allow_zero=True),
                   "momentum in [0, 1)"),
        HyperParam("centered", False, boolean("centered"), "centered second moment"),
        HyperParam("convention", "eps_outside_sqrt", one_of("convention", CONVENTIONS),
                   "eps_outside_sqrt (torch) or eps_inside_sqrt (Keras)"),
        common_params(),
        minibatch_params(),
    ),
    summary="RMSprop, full or minibatch; convention eps_outside_sqrt (torch) or "
            "eps_inside_sqrt (Keras)",
    reference="Tieleman & Hinton (2012), Lecture 6.5",
    rule=RMSpropRule(),
    stochastic=True,
    natives=(TorchOptimizer("RMSprop", _torch_options,
                            requires=requires("convention", "eps_outside_sqrt",
                                              "torch.optim.RMSprop")),
             KerasOptimizer("RMSprop", _keras_options,
                            requires=requires("convention", "eps_inside_sqrt",
                                              "keras.optimizers.RMSprop")),
             OptaxOptimizer("rmsprop", _optax_options, requires=_optax_requires)),
), rmsprop)
