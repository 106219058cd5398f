r"""AdamW (Loshchilov and Hutter 2019): Adam with decoupled weight decay.

.. math:: x_{t-1} \leftarrow x_{t-1} (1 - \eta_t \lambda), \quad \text{then the Adam step}

with :math:`\eta_t` the scheduled learning rate (as torch and Keras; TF Addons did not). The
Adam step follows ``convention`` (:mod:`optcmp.optimizers.adam`);
``optcmp.adam(weight_decay=w, weight_decay_mode="decoupled")`` is the same algorithm.

References
----------
I. Loshchilov and F. Hutter, "Decoupled Weight Decay Regularization", ICLR 2019,
arXiv:1711.05101.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import (
    both,
    common_params,
    f64,
    keras_common,
    minibatch_params,
    requires,
    spec_from,
)
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers.adam import (
    AdamRule,
    adam_params,
    amsgrad_requires,
    check_amsgrad,
    no_amsgrad,
    torch_options,
)
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.AdamW`` arguments (floats as ``numpy.float64``)."""
    return {"learning_rate": float(h["learning_rate"]), "weight_decay": f64(h["weight_decay"]),
            "beta_1": f64(h["beta1"]), "beta_2": f64(h["beta2"]), "epsilon": f64(h["eps"]),
            "amsgrad": bool(h.get("amsgrad", False)), **keras_common(h)}


def adamw(learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
          eps: float = 1e-8, weight_decay: float = 0.01, convention: str = "bias_corrected_eps",
          schedule: str | Schedule | None = "constant", clip_norm: float | None = None,
          batch_size: int | None = None, shuffle: bool = True, amsgrad: bool = False,
          amsgrad_max: str = "raw", *, impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""AdamW: Adam with decoupled weight decay, full batch or minibatch.

    Parameters
    ----------
    learning_rate : float, default 1e-3
    beta1, beta2 : float, default 0.9, 0.999
    eps : float, default 1e-8
    weight_decay : float, default 0.01
        torch's default; Keras' is 0.004.
    convention : {"bias_corrected_eps", "eps_hat"}, default "bias_corrected_eps"
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
    batch_size : int, optional
    shuffle : bool, default True
    amsgrad : bool, default False
    amsgrad_max : {"raw", "bias_corrected"}, default "raw"
        As for :func:`optcmp.adam`.
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("adamw", locals())


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.adamw`` arguments: decay ``lr * weight_decay * x`` in the update, no mask."""
    return {"learning_rate": float(h["learning_rate"]), "b1": float(h["beta1"]),
            "b2": float(h["beta2"]), "eps": float(h["eps"]), "eps_root": 0.0, "mu_dtype": None,
            "weight_decay": float(h["weight_decay"]), "mask": None, "nesterov": False}


register_optimizer(OptimizerInfo(
    name="adamw",
    params={**adam_params(0.01), **common_params(), **minibatch_params()},
    summary="AdamW (decoupled weight decay), full or minibatch; Adam's epsilon convention named",
    reference="Loshchilov & Hutter (2019), arXiv:1711.05101",
    check=check_amsgrad,
    rule=AdamRule(),
    stochastic=True,
    natives=(TorchOptimizer("AdamW", torch_options,
                            requires=amsgrad_requires("torch.optim.AdamW", "bias_corrected_eps")),
             KerasOptimizer("AdamW", _keras_options,
                            requires=amsgrad_requires("keras.optimizers.AdamW", "eps_hat")),
             OptaxOptimizer("adamw", _optax_options,
                            requires=both(requires("convention", "bias_corrected_eps",
                                                   "optax.adamw"),
                                          no_amsgrad("optax.adamw")))),
), adamw)
