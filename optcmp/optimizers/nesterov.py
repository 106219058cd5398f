r"""Nesterov's accelerated gradient in the momentum form of the frameworks, full batch or
minibatch.

.. math::

    \text{lr\_outside (torch):}\quad b_k &= \mu b_{k-1} + g_k, \qquad
        x_{k+1} = x_k - \eta_k (g_k + \mu b_k) \\
    \text{lr\_inside (Keras):}\quad v_k &= \mu v_{k-1} - \eta_k g_k, \qquad
        x_{k+1} = x_k + \mu v_k - \eta_k g_k

The gradient is taken at the iterate itself (Sutskever et al.'s reformulation of Nesterov's
look-ahead). As for :mod:`optcmp.optimizers.momentum`, the two conventions agree for a constant
learning rate and part under a schedule (90 vs 98 iterations to :math:`10^{-6}` on the
least-squares problem and schedule described there).

References
----------
Y. Nesterov, "A method for solving the convex programming problem with convergence rate
O(1/k^2)", Soviet Math. Dokl. 27, 1983. I. Sutskever, J. Martens, G. Dahl and G. Hinton, "On the
importance of initialization and momentum in deep learning", ICML 2013.
"""

from __future__ import annotations

from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, get_optimizer, register_optimizer
from optcmp.optimizers.momentum import (
    MomentumRule,
    momentum_params,
    momentum_requires,
    optax_sgd_options,
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
        As for :func:`optcmp.momentum`: ``torch.optim.SGD(nesterov=True)`` or
        ``keras.optimizers.SGD(nesterov=True)``.
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
    batch_size : int, optional
        Rows per minibatch; ``None`` (the default) is full batch. With a size, one iteration is
        one minibatch, in the order optcmp draws from the run's seed
        (:class:`optcmp.batching.BatchOrder`: the same rows on every backend and for the
        natives), the full objective is evaluated off the clock once per epoch, and a
        ``unit="epoch"`` schedule converts with the minibatches per epoch.
    shuffle : bool, default True
        Reshuffle the rows every epoch (minibatches only).
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec

    Raises
    ------
    ValueError
        A value outside its range (``momentum`` must be > 0) or an unknown convention.

    References
    ----------
    Y. Nesterov, Soviet Math. Dokl. 27, 1983. I. Sutskever et al., ICML 2013.
    """
    return get_optimizer("nesterov", impl=impl, label=label, learning_rate=learning_rate,
                         momentum=momentum, convention=convention, schedule=schedule,
                         clip_norm=clip_norm,
                         batch_size=batch_size, shuffle=shuffle)


_torch_options, _keras_options = sgd_options(True)

register_optimizer(OptimizerInfo(
    name="nesterov",
    aliases=("nag", "nesterov_momentum"),
    params=momentum_params(0.9, False),
    summary="Nesterov momentum, full or minibatch; convention lr_outside (torch) or lr_inside (Keras)",
    reference="Nesterov (1983); Sutskever et al. (2013)",
    rule=MomentumRule(True),
    stochastic=True,
    natives=(TorchOptimizer("SGD", _torch_options,
                            requires=momentum_requires("torch.optim.SGD", "lr_outside")),
             KerasOptimizer("SGD", _keras_options,
                            requires=momentum_requires("keras.optimizers.SGD", "lr_inside")),
             OptaxOptimizer("sgd", optax_sgd_options(True),
                            requires=momentum_requires("optax.sgd", "lr_outside"))),
), nesterov)
