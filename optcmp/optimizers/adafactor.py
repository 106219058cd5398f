r"""Adafactor (Shazeer and Stern 2018): a second moment that decays as :math:`1 - t^{-c}`,
update clipping, a step relative to the parameters' scale; its epsilon form and relative step
named as the frameworks implement them.

.. math::

    v_t &= v_{t-1} + t^{-c}\,(g_t^2 [+\epsilon_1] - v_{t-1}), \qquad
    u_t = g_t / \sqrt{v_t\ [\vee\,\epsilon_1^2]} \\
    x_t &= x_{t-1}(1 - \eta\lambda) - \rho_t \max(\epsilon_2, \mathrm{RMS}(x_{t-1}))\,
           \frac{u_t}{\max(1, \mathrm{RMS}(u_t)/d)}

with :math:`\rho_t = \min(\eta, 1/\sqrt t)` (``relative_step``, torch and Keras always) or
:math:`\eta` (optax). ``eps_form="add"`` puts :math:`\epsilon_1` inside the average (Keras,
optax; 1e-30), ``"clamp"`` clamps :math:`v_t` below at :math:`\epsilon_1^2` (torch; its
default :math:`\epsilon_1` is the dtype's machine epsilon). Weight decay: torch as above
(``weight_decay_mode="decoupled"``), Keras with the RMS of the decayed weights
(``"decoupled_first"``), optax as :math:`\lambda x` added to the step, not scaled by
:math:`\eta` (``"unscaled"``). Each named parameter is a block: its second moment, clipping and
parameter scale are its own, and a matrix whose dimensions reach ``min_dim_size_to_factor``
(every matrix in torch and Keras, 1; optax's default 128) keeps only row and column means
(:func:`optcmp.optimizers.transforms.scale_by_factored_rms`).

References
----------
N. Shazeer and M. Stern, "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost",
ICML 2018, arXiv:1804.04235.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from optcmp.optimizers._common import (
    both,
    common_params,
    f64,
    keras_common,
    minibatch_params,
    spec_from,
)
from optcmp.optimizers._hyperparams import (
    HyperParam,
    boolean,
    by_name,
    one_of,
    positive_float,
    positive_int,
)
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule
from optcmp.optimizers.transforms import (
    TransformRule,
    add_decayed_weights,
    chain,
    clip_by_block_rms,
    scale_by_factored_rms,
    scale_by_lr,
    scale_by_param_rms,
    when,
)

#: Where Adafactor's epsilon_1 goes: added to the squared gradient, or a floor on v (squared).
EPS_FORMS = ("add", "clamp")
#: The second moment's decay computed in float64 or, as optax, in float32.
DECAY_ROUNDINGS = ("exact", "float32")
#: Weight decay: x(1 - lr wd) with the scale of the undecayed weights (torch), of the decayed
#: ones (Keras), or wd x added to the step unscaled by the learning rate (optax).
WEIGHT_DECAY_MODES = ("decoupled", "decoupled_first", "unscaled")
#: The blocks the rule's second moments, clipping and parameter scale act on.
BLOCKS = "param_layout"


def _needs(framework: str, **want: Any) -> Any:
    """``requires``: the hyperparameters ``want`` names have those values in ``framework``."""
    def check(h: Mapping[str, Any]) -> str | None:
        bad = {k: v for k, v in want.items() if h[k] != v}
        if not bad:
            return None
        return (f"{framework} implements " + ", ".join(f"{k}={v!r}" for k, v in bad.items())
                + ", not " + ", ".join(f"{k}={h[k]!r}" for k in bad) + "; the reference rule "
                "(impl='reference') runs these on every backend")
    return check


def _decay(mode: str, framework: str) -> Any:
    """``requires``: weight decay in ``mode`` (any mode without decay)."""
    def check(h: Mapping[str, Any]) -> str | None:
        if h["weight_decay"] and h["weight_decay_mode"] != mode:
            return _needs(framework, weight_decay_mode=mode)(h)
        return None
    return check


def _factors_every_matrix(framework: str) -> Any:
    """``requires``: ``min_dim_size_to_factor`` at most 2 (``framework`` factors every matrix)."""
    def check(h: Mapping[str, Any]) -> str | None:
        if h["min_dim_size_to_factor"] <= 2:
            return None
        return (f"{framework} factors every matrix (min_dim_size_to_factor=1), not "
                f"min_dim_size_to_factor={h['min_dim_size_to_factor']!r}; the reference rule "
                "(impl='reference') runs it on every backend")
    return check


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.Adafactor`` arguments, every one explicit."""
    return {"lr": float(h["learning_rate"]), "beta2_decay": -float(h["decay_rate"]),
            "eps": (float(h["eps1"]), float(h["eps2"])), "d": float(h["clip_threshold"]),
            "weight_decay": float(h["weight_decay"]), "foreach": False, "maximize": False}


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.Adafactor`` arguments (floats as ``numpy.float64``)."""
    return {"learning_rate": float(h["learning_rate"]), "beta_2_decay": f64(-h["decay_rate"]),
            "epsilon_1": f64(h["eps1"]), "epsilon_2": f64(h["eps2"]),
            "clip_threshold": f64(h["clip_threshold"]), "relative_step": True,
            "weight_decay": f64(h["weight_decay"]) if h["weight_decay"] else None,
            **keras_common(h)}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.adafactor`` arguments."""
    return {"learning_rate": float(h["learning_rate"]),
            "min_dim_size_to_factor": int(h["min_dim_size_to_factor"]),
            "decay_rate": float(h["decay_rate"]), "decay_offset": 0,
            "multiply_by_parameter_scale": True, "clipping_threshold": float(h["clip_threshold"]),
            "momentum": None, "dtype_momentum": np.float64,
            "weight_decay_rate": float(h["weight_decay"]) or None,
            "eps": float(h["eps1"]), "factored": True, "weight_decay_mask": None}


def adafactor(learning_rate: float = 1e-2, decay_rate: float = 0.8, eps1: float = 1e-30,
              eps2: float = 1e-3, eps_form: str = "add", clip_threshold: float = 1.0,
              relative_step: bool = True, weight_decay: float = 0.0,
              weight_decay_mode: str = "decoupled", decay_rounding: str = "exact",
              min_dim_size_to_factor: int = 1,
              schedule: str | Schedule | None = "constant", clip_norm: float | None = None,
              batch_size: int | None = None, shuffle: bool = True, *, impl: str = "auto",
              label: str = "") -> OptimizerSpec:
    """Adafactor (Shazeer and Stern 2018), full batch or minibatch, its conventions named.

    Parameters
    ----------
    learning_rate : float, default 1e-2
        torch's default (Keras' is 1e-3; optax has none).
    decay_rate : float, default 0.8
        c in the second moment's weight :math:`t^{-c}` (torch and Keras pass -c).
    eps1 : float, default 1e-30
        Keras' and optax's; torch's default is the machine epsilon, with ``eps_form="clamp"``.
    eps2 : float, default 1e-3
        Floor of the parameters' RMS in the step.
    eps_form : {"add", "clamp"}, default "add"
        epsilon_1 added to the squared gradient (Keras, optax) or a floor of v at eps1**2 (torch).
    clip_threshold : float, default 1.0
        d in the update clipping :math:`u/\\max(1, \\mathrm{RMS}(u)/d)`.
    relative_step : bool, default True
        Step :math:`\\min(\\eta, 1/\\sqrt t)` (torch, Keras) instead of :math:`\\eta` (optax).
    weight_decay : float, default 0.0
    weight_decay_mode : {"decoupled", "decoupled_first", "unscaled"}, default "decoupled"
        ``x (1 - lr * weight_decay)`` with the parameter scale of the weights before it (torch)
        or after it (Keras), or ``weight_decay * x`` added to the step (optax).
    decay_rounding : {"exact", "float32"}, default "exact"
        optax computes the decay :math:`1 - t^{-c}` in float32 even for float64 parameters.
    min_dim_size_to_factor : int, default 1
        A matrix parameter keeps row and column means of its second moment when both its
        dimensions reach this (torch and Keras factor every matrix; optax's default is 128).
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
    return spec_from("adafactor", locals())


register_optimizer(OptimizerInfo(
    name="adafactor",
    params=by_name(
        HyperParam("learning_rate", 1e-2, positive_float("learning_rate"), "step size"),
        HyperParam("decay_rate", 0.8, positive_float("decay_rate"),
                   "c in the second moment's weight t**-c"),
        HyperParam("eps1", 1e-30, positive_float("eps1"), "regularizes the second moment"),
        HyperParam("eps2", 1e-3, positive_float("eps2", allow_zero=True),
                   "floor of the parameters' RMS in the step"),
        HyperParam("eps_form", "add", one_of("eps_form", EPS_FORMS),
                   "eps1 added to g**2 (Keras, optax) or a floor of v at eps1**2 (torch)"),
        HyperParam("clip_threshold", 1.0, positive_float("clip_threshold"),
                   "update clipping threshold d"),
        HyperParam("relative_step", True, boolean("relative_step"),
                   "step min(lr, 1/sqrt(t)) (torch, Keras) or lr (optax)"),
        HyperParam("weight_decay", 0.0, positive_float("weight_decay", allow_zero=True),
                   "weight decay coefficient, >= 0"),
        HyperParam("weight_decay_mode", "decoupled",
                   one_of("weight_decay_mode", WEIGHT_DECAY_MODES),
                   "decoupled (torch), decoupled_first (Keras) or unscaled (optax)"),
        HyperParam("decay_rounding", "exact", one_of("decay_rounding", DECAY_ROUNDINGS),
                   "the decay 1 - t**-c in float64, or in float32 (optax)"),
        HyperParam("min_dim_size_to_factor", 1, positive_int("min_dim_size_to_factor"),
                   "factor a matrix whose dimensions reach this (torch, Keras 1; optax 128)"),
        common_params(), minibatch_params()),
    summary="Adafactor, full or minibatch; eps form add (Keras, optax) or clamp (torch), "
            "relative step named",
    reference="Shazeer & Stern (2018), arXiv:1804.04235",
    rule=TransformRule(chain(
        scale_by_factored_rms(shapes=BLOCKS, min_dim_size_to_factor="min_dim_size_to_factor"),
        clip_by_block_rms(shapes=BLOCKS),
        when(lambda h: h["weight_decay_mode"] != "decoupled_first",
             scale_by_param_rms(shapes=BLOCKS)),
        when(lambda h: h["weight_decay_mode"] == "decoupled_first",
             scale_by_param_rms(shapes=BLOCKS, decayed_by="weight_decay")),
        scale_by_lr("relative_step"),
        when(lambda h: h["weight_decay_mode"] != "unscaled",
             add_decayed_weights(scaled_by_lr=True)),
        when(lambda h: h["weight_decay_mode"] == "unscaled", add_decayed_weights())),
        "adafactor"),
    stochastic=True,
    natives=(TorchOptimizer("Adafactor", _torch_options, named=True,
                            requires=both(_needs("torch.optim.Adafactor", eps_form="clamp",
                                                 relative_step=True, decay_rounding="exact"),
                                          _decay("decoupled", "torch.optim.Adafactor"),
                                          _factors_every_matrix("torch.optim.Adafactor"))),
             KerasOptimizer("Adafactor", _keras_options, named=True,
                            requires=both(_needs("keras.optimizers.Adafactor", eps_form="add",
                                                 relative_step=True, decay_rounding="exact"),
                                          _decay("decoupled_first",
                                                 "keras.optimizers.Adafactor"),
                                          _factors_every_matrix("keras.optimizers.Adafactor"))),
             OptaxOptimizer("adafactor", _optax_options, tree=lambda h, layout, optax: {},
                            requires=both(_needs("optax.adafactor", eps_form="add",
                                                 relative_step=False, decay_rounding="float32"),
                                          _decay("unscaled", "optax.adafactor")))),
), adafactor)
