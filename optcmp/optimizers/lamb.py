r"""LAMB (You et al. 2020): Adam's direction, weight decay added, scaled by a trust ratio.

.. math::

    u_t = \frac{\hat m_t}{\sqrt{\hat v_t}+\epsilon} + \lambda x_{t-1}, \qquad
    x_t = x_{t-1} - \eta\,\frac{\lVert x_{t-1}\rVert}{\lVert u_t\rVert}\,u_t

(ratio 1 where either norm is 0). ``weight_decay_mode="inside_ratio"`` adds the decay to the
direction inside the trust ratio, as the paper and optax's ``lamb``; ``"outside_ratio"`` decays
the weights first, :math:`x(1-\eta\lambda)`, and takes the ratio of their norm to the Adam
direction's, as Keras' ``Lamb``. The ratio is per named parameter (layer-wise, as both frameworks take
it), each native given the named arrays.

References
----------
Y. You et al., "Large Batch Optimization for Deep Learning: Training BERT in 76 minutes",
ICLR 2020, arXiv:1904.00962.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import common_params, f64, keras_common, minibatch_params, spec_from
from optcmp.optimizers._hyperparams import HyperParam, by_name, one_of
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer
from optcmp.optimizers._moments import moment_params
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule
from optcmp.optimizers.transforms import (
    TransformRule,
    add_decayed_weights,
    chain,
    scale_by_adam,
    scale_by_lr,
    scale_by_trust_ratio,
    when,
)

#: Where LAMB's weight decay goes: into the direction the trust ratio scales, or before it.
WEIGHT_DECAY_MODES = ("inside_ratio", "outside_ratio")


def _decay_in(mode: str, framework: str) -> Any:
    """``requires``: decay in ``mode`` (any mode without decay)."""
    def check(h: Mapping[str, Any]) -> str | None:
        if h["weight_decay"] and h["weight_decay_mode"] != mode:
            return (f"{framework} applies weight_decay_mode={mode!r}, not "
                    f"{h['weight_decay_mode']!r}; the reference rule (impl='reference') runs "
                    "either on every backend")
        return None
    return check


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.Lamb`` arguments (floats as ``numpy.float64``)."""
    return {"learning_rate": float(h["learning_rate"]), "beta_1": f64(h["beta1"]),
            "beta_2": f64(h["beta2"]), "epsilon": f64(h["eps"]),
            "weight_decay": f64(h["weight_decay"]) if h["weight_decay"] else None,
            **keras_common(h)}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.lamb`` arguments."""
    return {"learning_rate": float(h["learning_rate"]), "b1": float(h["beta1"]),
            "b2": float(h["beta2"]), "eps": float(h["eps"]), "eps_root": 0.0,
            "weight_decay": float(h["weight_decay"]), "mask": None}


def lamb(learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
         eps: float = 1e-6, weight_decay: float = 0.0, weight_decay_mode: str = "inside_ratio",
         schedule: str | Schedule | None = "constant", clip_norm: float | None = None,
         batch_size: int | None = None, shuffle: bool = True, *, impl: str = "auto",
         label: str = "") -> OptimizerSpec:
    """LAMB (You et al. 2020), full batch or minibatch.

    Parameters
    ----------
    learning_rate : float, default 1e-3
    beta1, beta2 : float, default 0.9, 0.999
    eps : float, default 1e-6
        optax's default, added to the bias-corrected root (Keras' default is 1e-7).
    weight_decay : float, default 0.0
    weight_decay_mode : {"inside_ratio", "outside_ratio"}, default "inside_ratio"
        Added to the direction the trust ratio scales (the paper, optax), or the weights decayed
        before the step and outside the ratio (Keras).
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
    return spec_from("lamb", locals())


register_optimizer(OptimizerInfo(
    name="lamb",
    params=by_name(moment_params(1e-3, 1e-6, weight_decay_mode=None),
                   HyperParam("weight_decay_mode", "inside_ratio",
                              one_of("weight_decay_mode", WEIGHT_DECAY_MODES),
                              "decay inside the trust ratio (paper, optax) or before it (Keras)"),
                   common_params(), minibatch_params()),
    summary="LAMB (Adam with a trust ratio), full or minibatch; weight decay inside (optax) or "
            "outside (Keras) the ratio",
    reference="You et al. (2020), arXiv:1904.00962",
    rule=TransformRule(chain(
        scale_by_adam(placement="bias_corrected"),
        when(lambda h: h["weight_decay_mode"] == "inside_ratio", chain(
            add_decayed_weights(), scale_by_trust_ratio(shapes="param_layout"), scale_by_lr())),
        when(lambda h: h["weight_decay_mode"] == "outside_ratio", chain(
            scale_by_trust_ratio(shapes="param_layout", decayed_by="weight_decay"),
            scale_by_lr(),
            add_decayed_weights(scaled_by_lr=True)))), "lamb"),
    stochastic=True,
    natives=(KerasOptimizer("Lamb", _keras_options, named=True,
                            requires=_decay_in("outside_ratio", "keras.optimizers.Lamb")),
             OptaxOptimizer("lamb", _optax_options, tree=lambda h, layout, optax: {},
                            requires=_decay_in("inside_ratio", "optax.lamb"))),
), lamb)
