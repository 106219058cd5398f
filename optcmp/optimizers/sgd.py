r"""Minibatch stochastic gradient descent, optionally with (Nesterov) momentum.

.. math::

    b_k &= \mu b_{k-1} + g_k, \qquad
    d_k = \begin{cases} g_k + \mu b_k & \text{Nesterov} \\ b_k & \text{otherwise}\end{cases} \\
    x_{k+1} &= x_k - \eta d_k

with :math:`g_k` the mean gradient on minibatch :math:`k`: PyTorch's form (no dampening),
``convention="lr_outside"``; Keras' (``"lr_inside"``) differs only under a ``schedule``
(:mod:`optcmp.optimizers.momentum`).

References
----------
H. Robbins and S. Monro, "A stochastic approximation method", Ann. Math. Statist. 22, 1951.
I. Sutskever, J. Martens, G. Dahl and G. Hinton, "On the importance of initialization and
momentum in deep learning", ICML 2013.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import common_params, f64, spec_from
from optcmp.optimizers._hyperparams import HyperParam, boolean, one_of, positive_float, positive_int
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.momentum import CONVENTIONS, MomentumRule, optax_sgd_options, sgd_natives
from optcmp.optimizers.schedule import Schedule


class SGDRule(MomentumRule):
    """:class:`MomentumRule` with the spec's ``nesterov``."""

    def __init__(self) -> None:
        super().__init__(nesterov=None)


def _check_sgd(hp: dict[str, Any]) -> None:
    """Nesterov needs momentum."""
    if hp["nesterov"] and hp["momentum"] == 0.0:
        raise ValueError("nesterov=True needs momentum > 0 (got momentum=0.0)")


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.SGD`` arguments: optcmp's values, no dampening or weight decay."""
    return {"lr": float(h["learning_rate"]), "momentum": float(h["momentum"]),
            "dampening": 0.0, "weight_decay": 0.0, "nesterov": bool(h["nesterov"]),
            "maximize": False, "foreach": False}


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.SGD`` arguments, floats as ``numpy.float64`` (``_common.f64``)."""
    c = h.get("clip_norm")
    return {"learning_rate": float(h["learning_rate"]), "momentum": f64(h["momentum"]),
            "nesterov": bool(h["nesterov"]), "weight_decay": None, "clipnorm": None,
            "clipvalue": None, "global_clipnorm": None if c is None else f64(c),
            "use_ema": False}


def sgd(learning_rate: float | str = "auto", batch_size: int = 64, momentum: float = 0.0,
        nesterov: bool = False, shuffle: bool = True, convention: str = "lr_outside",
        schedule: str | Schedule | None = "constant", clip_norm: float | None = None, *,
        impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""Minibatch stochastic gradient descent (one iteration is one minibatch).

    Parameters
    ----------
    learning_rate : float or "auto", default "auto"
        ``"auto"``: :math:`1/L` of the full objective (the problem must know :math:`L`).
    batch_size : int, default 64
        Rows per minibatch; the last one of an epoch may be shorter. One larger than the
        problem's training rows is refused before any run: torch's ``DataLoader`` and Keras'
        ``fit`` would quietly take every row, running full-batch steps under a minibatch
        label, and two such sizes would be told apart as different runs of the same steps.
    momentum : float, default 0.0
    nesterov : bool, default False
        Needs ``momentum > 0``.
    shuffle : bool, default True
    convention : {"lr_outside", "lr_inside"}, default "lr_outside"
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("sgd", locals())


register_optimizer(OptimizerInfo(
    name="sgd",
    aliases=("minibatch_sgd", "stochastic_gradient_descent"),
    params={
        "learning_rate": HyperParam("learning_rate", "auto",
                                    positive_float("learning_rate", allow_auto=True),
                                    "step size; 'auto' = 1/L of the full objective"),
        "batch_size": HyperParam("batch_size", 64, positive_int("batch_size"),
                                 "rows per minibatch"),
        "momentum": HyperParam("momentum", 0.0,
                               positive_float("momentum", upper=1.0, allow_zero=True),
                               "momentum in [0, 1)"),
        "nesterov": HyperParam("nesterov", False, boolean("nesterov"), "Nesterov momentum"),
        "shuffle": HyperParam("shuffle", True, boolean("shuffle", choice=False), "reshuffle every epoch"),
        "convention": HyperParam("convention", "lr_outside", one_of("convention", CONVENTIONS),
                                 "lr_outside (torch) or lr_inside (Keras) the buffer"),
        **common_params(),
    },
    summary="minibatch SGD with optional (Nesterov) momentum",
    reference="Robbins & Monro (1951); Sutskever et al. (2013)",
    check=_check_sgd,
    rule=SGDRule(),
    stochastic=True,
    natives=sgd_natives(_torch_options, _keras_options, optax_sgd_options(None)),
), sgd)


