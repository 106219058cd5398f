r"""Minibatch stochastic gradient descent, optionally with (Nesterov) momentum.

.. math::

    b_k &= \mu b_{k-1} + g_k, \qquad
    d_k = \begin{cases} g_k + \mu b_k & \text{Nesterov} \\ b_k & \text{otherwise}\end{cases} \\
    x_{k+1} &= x_k - \eta d_k

with :math:`g_k` the gradient of the loss on minibatch :math:`k` (mean over its rows). This is
PyTorch's formulation (no dampening), ``convention="lr_outside"``; Keras' velocity form
(``convention="lr_inside"``, :math:`v_k = \mu v_{k-1} - \eta_k g_k`, :math:`x_{k+1} = x_k + v_k`)
is the same sequence of iterates for a constant learning rate and a different one under a
``schedule`` (:mod:`optcmp.optimizers.momentum`). The minibatch order is drawn
by optcmp from the run's seed (:class:`optcmp.batching.BatchOrder`) and is the same on every
backend; a ``unit="epoch"`` schedule advances once per pass over the data.

References
----------
H. Robbins and S. Monro, "A stochastic approximation method", Ann. Math. Statist. 22, 1951.
I. Sutskever, J. Martens, G. Dahl and G. Hinton, "On the importance of initialization and
momentum in deep learning", ICML 2013.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from optcmp.optimizers._common import ScheduledRule, common_params
from optcmp.optimizers._hyperparams import HyperParam, boolean, one_of, positive_float, positive_int
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, get_optimizer, register_optimizer
from optcmp.optimizers.momentum import CONVENTIONS, momentum_requires, optax_sgd_options
from optcmp.optimizers.schedule import Schedule


class SGDRule(ScheduledRule):
    """SGD with momentum buffer ``b`` in ``hp["convention"]``'s form (PyTorch's by default)."""

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x),)

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        mu = hp["momentum"]
        if mu == 0.0:
            return x - lr * g, buf
        (b,) = buf
        if hp.get("convention", "lr_outside") == "lr_outside":
            b = mu * b + g
            d = g + mu * b if hp["nesterov"] else b
            return x - lr * d, (b,)
        b = b * mu - g * lr
        return (x + (b * mu - g * lr) if hp["nesterov"] else x + b), (b,)


def _check_sgd(hp: dict[str, Any]) -> None:
    if hp["nesterov"] and hp["momentum"] == 0.0:
        raise ValueError("nesterov=True needs momentum > 0 (got momentum=0.0)")


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.SGD`` arguments: optcmp's values, no dampening or weight decay."""
    return {"lr": float(h["learning_rate"]), "momentum": float(h["momentum"]),
            "dampening": 0.0, "weight_decay": 0.0, "nesterov": bool(h["nesterov"]),
            "maximize": False, "foreach": False}


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.SGD`` arguments, ``momentum`` as a ``numpy.float64``.

    Keras' velocity form (``v = mu v - lr g; x += v``) gives the same iterates as PyTorch's
    buffer form used by the reference rule for a constant learning rate. Keras SGD casts a
    Python float ``momentum`` with ``ops.cast(momentum, variable.dtype)``, which goes through a
    float32 tensor first: 0.9 became 0.8999999761581421 in float64 runs (a 5e-7 relative drift
    from the reference rule after 20 steps). ``numpy.float64`` is a ``float`` subclass that
    Keras accepts and converts without that detour.
    """
    c = h.get("clip_norm")
    return {"learning_rate": float(h["learning_rate"]), "momentum": np.float64(h["momentum"]),
            "nesterov": bool(h["nesterov"]), "weight_decay": None, "clipnorm": None,
            "clipvalue": None, "global_clipnorm": None if c is None else np.float64(c),
            "use_ema": False}


def sgd(learning_rate: float | str = "auto", batch_size: int = 64, momentum: float = 0.0,
        nesterov: bool = False, shuffle: bool = True, convention: str = "lr_outside",
        schedule: str | Schedule | None = "constant", clip_norm: float | None = None, *,
        impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""Minibatch stochastic gradient descent.

    Parameters
    ----------
    learning_rate : float or "auto", default "auto"
        Step size :math:`\eta > 0`; ``"auto"`` uses :math:`1/L` of the full objective (the
        problem must know :math:`L`). A constant step converges to a neighbourhood of the optimum
        whose size grows with :math:`\eta` and the gradient noise.
    batch_size : int, default 64
        Rows per minibatch; the last minibatch of an epoch may be shorter.
    momentum : float, default 0.0
        Momentum :math:`\mu \in [0, 1)`.
    nesterov : bool, default False
        Nesterov momentum (needs ``momentum > 0``).
    shuffle : bool, default True
        Reshuffle the rows every epoch, from the run's seed (same order on every backend).
    convention : {"lr_outside", "lr_inside"}, default "lr_outside"
        Where the learning rate sits in the momentum buffer: outside (``torch.optim.SGD``) or
        inside (``keras.optimizers.SGD``). One algorithm for a constant learning rate (both
        natives run it); under a schedule with momentum only the matching native runs, the
        other is recorded as ``skipped``.
    schedule : str or Schedule, default "constant"
        Learning-rate schedule (:mod:`optcmp.optimizers.schedule`), unit = one minibatch step;
        ``unit="epoch"`` converts with the run's minibatches per epoch.
    clip_norm : float, optional
        Clip each minibatch gradient to this global norm.
    impl : {"auto", "native", "reference"}
        ``"native"`` runs ``torch.optim.SGD`` or Keras ``SGD`` where available, on the same
        minibatch sequence; ``"auto"`` prefers them on torch and TensorFlow.
    label : str, optional

    Returns
    -------
    OptimizerSpec

    Raises
    ------
    ValueError
        A value outside its range, or ``nesterov`` without momentum.

    Notes
    -----
    One iteration is one minibatch; results also report epochs. The full objective is evaluated
    off the clock once per epoch (``eval_every`` in :func:`optcmp.run` changes that).

    References
    ----------
    H. Robbins and S. Monro, "A stochastic approximation method", 1951.
    I. Sutskever et al., "On the importance of initialization and momentum in deep learning",
    ICML 2013.
    """
    return get_optimizer("sgd", impl=impl, label=label, learning_rate=learning_rate,
                         batch_size=batch_size, momentum=momentum, nesterov=nesterov,
                         shuffle=shuffle, convention=convention, schedule=schedule,
                         clip_norm=clip_norm)


register_optimizer(OptimizerInfo(
    name="sgd",
    aliases=("minibatch_sgd", "stochastic_gradient_descent"),
    params={
        "learning_rate": HyperParam("learning_rate", "auto",
                                    positive_float("learning_rate", allow_auto=True),
                                    "step size; 'auto' = 1/L of the full objective"),
        "batch_size": HyperParam("batch_size", 64, positive_int("batch_size"), "rows per minibatch"),
        "momentum": HyperParam("momentum", 0.0,
                               positive_float("momentum", upper=1.0, allow_zero=True),
                               "momentum in [0, 1)"),
        "nesterov": HyperParam("nesterov", False, boolean("nesterov"), "Nesterov momentum"),
        "shuffle": HyperParam("shuffle", True, boolean("shuffle"), "reshuffle every epoch"),
        # the buffer convention, a schedule and clipping (common_params)
        "convention": HyperParam("convention", "lr_outside", one_of("convention", CONVENTIONS),
                                 "lr_outside (torch) or lr_inside (Keras) the buffer"),
        **common_params(),
    },
    summary="minibatch SGD with optional (Nesterov) momentum",
    reference="Robbins & Monro (1951); Sutskever et al. (2013)",
    check=_check_sgd,
    rule=SGDRule(),
    stochastic=True,
    # the frameworks' own SGD on optcmp's minibatch sequence: "auto" prefers them
    natives=(TorchOptimizer("SGD", _torch_options,
                            requires=momentum_requires("torch.optim.SGD", "lr_outside")),
             KerasOptimizer("SGD", _keras_options,
                            requires=momentum_requires("keras.optimizers.SGD", "lr_inside")),
             OptaxOptimizer("sgd", optax_sgd_options(None),
                            requires=momentum_requires("optax.sgd", "lr_outside"))),
), sgd)


