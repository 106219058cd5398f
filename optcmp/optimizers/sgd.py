r"""Minibatch stochastic gradient descent, optionally with (Nesterov) momentum.

.. math::

    b_k &= \mu b_{k-1} + g_k, \qquad
    d_k = \begin{cases} g_k + \mu b_k & \text{Nesterov} \\ b_k & \text{otherwise}\end{cases} \\
    x_{k+1} &= x_k - \eta d_k

with :math:`g_k` the gradient of the loss on minibatch :math:`k` (mean over its rows). This is
PyTorch's formulation (no dampening); Keras' velocity form is the same sequence of iterates for a
constant learning rate. The minibatch order is drawn by optcmp from the run's seed
(:class:`optcmp.batching.BatchOrder`) and is the same on every backend.

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

from optcmp.optimizers.base import (
    HyperParam,
    KerasOptimizer,
    OptimizerInfo,
    OptimizerSpec,
    TorchOptimizer,
    UpdateRule,
    boolean,
    get_optimizer,
    positive_float,
    positive_int,
    register_optimizer,
)


class SGDRule(UpdateRule):
    """PyTorch-form SGD with momentum buffer ``b``."""

    def init_state(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x),)

    def update(self, ops: Any, x: Any, g: Any, state: tuple[Any, ...], hp: dict[str, Any],
               curvature: Any) -> tuple[Any, tuple[Any, ...]]:
        mu = hp["momentum"]
        if mu == 0.0:
            return x - hp["learning_rate"] * g, state
        (buf,) = state
        buf = mu * buf + g
        d = g + mu * buf if hp["nesterov"] else buf
        return x - hp["learning_rate"] * d, (buf,)


def _check_sgd(hp: dict[str, Any]) -> None:
    if hp["nesterov"] and hp["momentum"] == 0.0:
        raise ValueError("nesterov=True needs momentum > 0 (got momentum=0.0)")


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.SGD`` arguments: optcmp's values, no dampening or weight decay."""
    return {"lr": float(h["learning_rate"]), "momentum": float(h["momentum"]),
            "dampening": 0.0, "weight_decay": 0.0, "nesterov": bool(h["nesterov"]),
            "maximize": False}


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.SGD`` arguments, ``momentum`` as a ``numpy.float64``.

    Keras' velocity form (``v = mu v - lr g; x += v``) gives the same iterates as PyTorch's
    buffer form used by the reference rule for a constant learning rate. Keras SGD casts a
    Python float ``momentum`` with ``ops.cast(momentum, variable.dtype)``, which goes through a
    float32 tensor first: 0.9 became 0.8999999761581421 in float64 runs (a 5e-7 relative drift
    from the reference rule after 20 steps). ``numpy.float64`` is a ``float`` subclass that
    Keras accepts and converts without that detour.
    """
    return {"learning_rate": float(h["learning_rate"]), "momentum": np.float64(h["momentum"]),
            "nesterov": bool(h["nesterov"]), "weight_decay": None, "clipnorm": None,
            "clipvalue": None, "global_clipnorm": None, "use_ema": False}


def sgd(learning_rate: float | str = "auto", batch_size: int = 64, momentum: float = 0.0,
        nesterov: bool = False, shuffle: bool = True, *, impl: str = "auto",
        label: str = "") -> OptimizerSpec:
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
    off the clock once per epoch (``eval_every`` in :func:`optcmp.run_one` changes that).

    References
    ----------
    H. Robbins and S. Monro, "A stochastic approximation method", 1951.
    I. Sutskever et al., "On the importance of initialization and momentum in deep learning",
    ICML 2013.
    """
    return get_optimizer("sgd", impl=impl, label=label, learning_rate=learning_rate,
                         batch_size=batch_size, momentum=momentum, nesterov=nesterov,
                         shuffle=shuffle)


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
    },
    summary="minibatch SGD with optional (Nesterov) momentum",
    reference="Robbins & Monro (1951); Sutskever et al. (2013)",
    check=_check_sgd,
    rule=SGDRule(),
    stochastic=True,
    # the frameworks' own SGD on optcmp's minibatch sequence: "auto" prefers them
    natives=(TorchOptimizer("SGD", _torch_options), KerasOptimizer("SGD", _keras_options)),
), sgd)


