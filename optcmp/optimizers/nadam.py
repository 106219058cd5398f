r"""NAdam (Dozat 2016): Adam with Nesterov momentum, under the momentum schedules the
frameworks implement.

.. math::

    \mu_t = \beta_1\big(1 - \tfrac12\,0.96^{t\psi}\big)\ (\text{"dozat"}) \quad\text{or}\quad
    \mu_t = \beta_1\ (\text{"constant"}), \qquad
    x_t = x_{t-1} - \eta\,\frac{\frac{(1-\mu_t)\,g_t}{1-\prod_{i\le t}\mu_i}
    + \frac{\mu_{t+1}\,m_t}{1-\prod_{i\le t+1}\mu_i}}{\sqrt{\hat v_t}+\epsilon}

torch's ``NAdam`` runs the Dozat schedule with :math:`\psi` = ``momentum_decay`` (0.004),
Keras' ``Nadam`` the same formula with :math:`\psi = 1` (its :math:`\mu_t` reaches
:math:`\beta_1` within a few dozen steps, torch's over thousands), optax's ``nadam`` the constant
:math:`\mu_t = \beta_1`. All three add epsilon to the bias-corrected root.

References
----------
T. Dozat, "Incorporating Nesterov Momentum into Adam", ICLR 2016 workshop.
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
from optcmp.optimizers._hyperparams import HyperParam, by_name, one_of, positive_float
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers._moments import (
    decayed,
    moment_params,
    optax_l2,
    optax_no_decoupled,
    torch_adam_options,
)
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule
from optcmp.optimizers.transforms import TransformRule, scale_by_nadam

#: NAdam's momentum schedules: Dozat's (torch, Keras) and a constant beta1 (optax).
MOMENTUM_SCHEDULES = ("dozat", "constant")
#: How the schedule is rounded: float64 throughout, torch's float32 product, Keras' float32 0.96.
MU_ROUNDINGS = ("exact", "float32_product", "float32_decay")


def _keras_requires(h: Mapping[str, Any]) -> str | None:
    """Keras' Nadam: the Dozat schedule with psi = 1, decoupled decay."""
    if (h["momentum_schedule"], h["momentum_decay"], h["mu_rounding"]) != (
            "dozat", 1.0, "float32_decay"):
        return ("keras.optimizers.Nadam runs momentum_schedule='dozat' with momentum_decay=1.0 "
                "and mu_rounding='float32_decay' (mu_t = beta1 (1 - 0.5 * 0.96**t), 0.96 cast "
                f"to float32), not momentum_schedule={h['momentum_schedule']!r}, "
                f"momentum_decay={h['momentum_decay']!r}, mu_rounding={h['mu_rounding']!r}; "
                "the reference rule (impl='reference') runs these on every backend")
    if h["weight_decay"] and h["weight_decay_mode"] != "decoupled":
        return ("keras.optimizers.Nadam's weight_decay is decoupled, not weight_decay_mode='l2'; "
                "the reference rule (impl='reference') runs 'l2' on every backend")
    return None


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.Nadam`` arguments (floats as ``numpy.float64``)."""
    wd = float(h["weight_decay"])
    return {"learning_rate": float(h["learning_rate"]), "beta_1": f64(h["beta1"]),
            "beta_2": f64(h["beta2"]), "epsilon": f64(h["eps"]),
            "weight_decay": f64(wd) if wd else None, **keras_common(h)}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.nadam`` arguments: the constant schedule, epsilon outside the root."""
    return {"learning_rate": float(h["learning_rate"]), "b1": float(h["beta1"]),
            "b2": float(h["beta2"]), "eps": float(h["eps"]), "eps_root": 0.0, "mu_dtype": None,
            "nesterov": True}


def nadam(learning_rate: float = 2e-3, beta1: float = 0.9, beta2: float = 0.999,
          eps: float = 1e-8, weight_decay: float = 0.0, weight_decay_mode: str = "l2",
          momentum_schedule: str = "dozat", momentum_decay: float = 0.004,
          mu_rounding: str = "float32_product", schedule: str | Schedule | None = "constant", clip_norm: float | None = None,
          batch_size: int | None = None, shuffle: bool = True, *, impl: str = "auto",
          label: str = "") -> OptimizerSpec:
    """NAdam (Dozat 2016), full batch or minibatch, the momentum schedule named.

    Parameters
    ----------
    learning_rate : float, default 2e-3
        torch's default (Keras' is 1e-3).
    beta1, beta2 : float, default 0.9, 0.999
    eps : float, default 1e-8
        Added to the bias-corrected root (Keras' default is 1e-7).
    weight_decay : float, default 0.0
    weight_decay_mode : {"l2", "decoupled"}, default "l2"
    momentum_schedule : {"dozat", "constant"}, default "dozat"
        Dozat's warming momentum (torch, Keras) or a constant ``beta1`` (optax).
    momentum_decay : float, default 0.004
        psi of the Dozat schedule: torch's 0.004; Keras' Nadam is 1.0.
    mu_rounding : {"exact", "float32_product", "float32_decay"}, default "float32_product"
        float64 throughout; the momentum product kept in float32 (torch); 0.96 cast to float32
        in mu_t (Keras). They part by about 1e-9 to 1e-8 in 20 steps.
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
    return spec_from("nadam", locals())


register_optimizer(OptimizerInfo(
    name="nadam",
    params=by_name(
        moment_params(2e-3, 1e-8),
        HyperParam("momentum_schedule", "dozat", one_of("momentum_schedule", MOMENTUM_SCHEDULES),
                   "dozat (torch, Keras) or constant beta1 (optax)"),
        HyperParam("momentum_decay", 0.004, positive_float("momentum_decay"),
                   "psi of the dozat schedule: torch 0.004, Keras 1.0"),
        HyperParam("mu_rounding", "float32_product", one_of("mu_rounding", MU_ROUNDINGS),
                   "exact, float32_product (torch) or float32_decay (Keras)"),
        common_params(), minibatch_params()),
    summary="NAdam, full or minibatch; momentum schedule dozat (torch psi 0.004, Keras psi 1) "
            "or constant (optax)",
    reference="Dozat (2016), ICLR workshop",
    rule=TransformRule(decayed(scale_by_nadam()), "nadam"),
    stochastic=True,
    natives=(TorchOptimizer("NAdam", lambda h: torch_adam_options(
                 h, momentum_decay=float(h["momentum_decay"])),
                 requires=both(requires("momentum_schedule", "dozat", "torch.optim.NAdam"),
                               requires("mu_rounding", "float32_product",
                                        "torch.optim.NAdam"))),
             KerasOptimizer("Nadam", _keras_options, requires=_keras_requires),
             OptaxOptimizer("nadam", _optax_options, l2=optax_l2,
                            requires=both(requires("momentum_schedule", "constant",
                                                   "optax.nadam"),
                                          optax_no_decoupled("nadam")))),
), nadam)
