r"""Nesterov's accelerated gradient in the momentum form of the frameworks, full batch or
minibatch.

.. math::

    \text{lr\_outside (torch):}\quad b_k &= \mu b_{k-1} + g_k, \qquad
        x_{k+1} = x_k - \eta_k (g_k + \mu b_k) \\
    \text{lr\_inside (Keras):}\quad v_k &= \mu v_{k-1} - \eta_k g_k, \qquad
        x_{k+1} = x_k + \mu v_k - \eta_k g_k

The gradient is taken at the iterate itself (Sutskever et al.'s reformulation of the
look-ahead); the conventions part only under a schedule (:mod:`optcmp.optimizers.momentum`).

References
----------
Y. Nesterov, "A method for solving the convex programming problem with convergence rate
O(1/k^2)", Soviet Math. Dokl. 27, 1983. I. Sutskever, J. Martens, G. Dahl and G. Hinton, "On the
importance of initialization and momentum in deep learning", ICML 2013.
"""

from __future__ import annotations

from optcmp.optimizers._common import spec_from
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.momentum import (
    MomentumRule,
    momentum_params,
    optax_sgd_options,
    sgd_natives,
    sgd_options,
)
from optcmp.optimizers.schedule import Schedule


def nesterov(learning_rate: float = 0.01, momentum: float = 0.9,
             convention: str = "lr_outside", schedule: str | Schedule | None = "constant",
             clip_norm: float | None = None,
             batch_size: int | None = None, shuffle: bool = True, *, impl: str = "auto",
             label: str = "") -> OptimizerSpec:
    r"""Gradient descent with Nesterov momentum, full batch or minibatch.

    Parameters
    ----------
    learning_rate : float, default 0.01
    momentum : float, default 0.9
        :math:`\mu \in (0, 1)`.
    convention : {"lr_outside", "lr_inside"}, default "lr_outside"
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
    return spec_from("nesterov", locals())


register_optimizer(OptimizerInfo(
    name="nesterov",
    aliases=("nag", "nesterov_momentum"),
    params=momentum_params(0.9, False),
    summary="Nesterov momentum, full or minibatch; convention lr_outside (torch) or "
            "lr_inside (Keras)",
    reference="Nesterov (1983); Sutskever et al. (2013)",
    rule=MomentumRule(True),
    stochastic=True,
    natives=sgd_natives(*sgd_options(True), optax_sgd_options(True)),
), nesterov)
