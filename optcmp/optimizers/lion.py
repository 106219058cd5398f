r"""Lion (Chen et al. 2023): the sign of an interpolated momentum, decoupled weight decay.

.. math::

    x_t = x_{t-1}(1 - \eta\lambda) - \eta\,\operatorname{sign}\big(\beta_1 m_{t-1}
    + (1-\beta_1) g_t\big), \qquad m_t = \beta_2 m_{t-1} + (1-\beta_2) g_t

optax's ``lion``, Keras' ``Lion`` and lion-pytorch implement this rule; what differs is the
weight decay a user gets without asking: optax 1e-3, Keras none, lion-pytorch 0. optcmp's
default is 0 and every result records the value used. torch has no Lion.

References
----------
X. Chen et al., "Symbolic Discovery of Optimization Algorithms", NeurIPS 2023,
arXiv:2302.06675.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import common_params, f64, keras_common, minibatch_params, spec_from
from optcmp.optimizers._hyperparams import HyperParam, by_name, positive_float
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule
from optcmp.optimizers.transforms import (
    TransformRule,
    add_decayed_weights,
    chain,
    scale_by_lion,
    scale_by_lr,
)


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.Lion`` arguments (floats as ``numpy.float64``)."""
    wd = float(h["weight_decay"])
    return {"learning_rate": float(h["learning_rate"]), "beta_1": f64(h["beta1"]),
            "beta_2": f64(h["beta2"]), "weight_decay": f64(wd) if wd else None,
            **keras_common(h)}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.lion`` arguments, the weight decay always explicit (optax's default is 1e-3)."""
    return {"learning_rate": float(h["learning_rate"]), "b1": float(h["beta1"]),
            "b2": float(h["beta2"]), "mu_dtype": None, "weight_decay": float(h["weight_decay"]),
            "mask": None}


def lion(learning_rate: float = 1e-4, beta1: float = 0.9, beta2: float = 0.99,
         weight_decay: float = 0.0, schedule: str | Schedule | None = "constant",
         clip_norm: float | None = None, batch_size: int | None = None, shuffle: bool = True,
         *, impl: str = "auto", label: str = "") -> OptimizerSpec:
    """Lion (Chen et al. 2023), full batch or minibatch.

    Parameters
    ----------
    learning_rate : float, default 1e-4
        The paper's; Keras' default is 1e-3 (optax has none).
    beta1, beta2 : float, default 0.9, 0.99
    weight_decay : float, default 0.0
        Decoupled, ``x (1 - lr * weight_decay)``; optax's default is 1e-3, Keras' none.
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
    return spec_from("lion", locals())


register_optimizer(OptimizerInfo(
    name="lion",
    params=by_name(
        HyperParam("learning_rate", 1e-4, positive_float("learning_rate"), "step size"),
        HyperParam("beta1", 0.9, positive_float("beta1", upper=1.0, allow_zero=True),
                   "interpolation of momentum and gradient inside the sign, in [0, 1)"),
        HyperParam("beta2", 0.99, positive_float("beta2", upper=1.0, allow_zero=True),
                   "decay of the momentum, in [0, 1)"),
        HyperParam("weight_decay", 0.0, positive_float("weight_decay", allow_zero=True),
                   "decoupled weight decay (optax's default 1e-3, Keras' none)"),
        common_params(), minibatch_params()),
    summary="Lion (sign of momentum), full or minibatch; weight decay explicit",
    reference="Chen et al. (2023), arXiv:2302.06675",
    rule=TransformRule(chain(scale_by_lion(), add_decayed_weights(), scale_by_lr()), "lion"),
    stochastic=True,
    natives=(KerasOptimizer("Lion", _keras_options),
             OptaxOptimizer("lion", _optax_options)),
), lion)
