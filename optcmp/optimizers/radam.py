r"""RAdam (Liu et al. 2020): Adam whose adaptive step is switched on and rectified by the
variance of its own estimate, under the epsilon placements the frameworks implement.

.. math::

    \rho_t = \rho_\infty - \frac{2t\beta_2^t}{1-\beta_2^t}, \quad
    x_t = x_{t-1} - \eta\,\begin{cases} r_t\,\hat m_t / D_t & \rho_t > 5 \\
    \hat m_t & \text{otherwise} \end{cases}

:math:`D_t` per ``eps_placement`` (:func:`optcmp.optimizers.transforms.bias_corrected_denominator`):
torch adds epsilon to the raw root :math:`\sqrt{v_t}` (``"raw"``), optax to the bias-corrected
one (``"bias_corrected"``, or inside the root with its ``eps_root``, ``"inside_sqrt"``). The
placements agree at epsilon 1e-8 and part at 1e-3 (docs/same-name-different-meaning.md); no
constant converts one into the other, since torch's effective epsilon is
:math:`\epsilon/\sqrt{1-\beta_2^t}`. Keras has no RAdam.

References
----------
L. Liu et al., "On the Variance of the Adaptive Learning Rate and Beyond", ICLR 2020,
arXiv:1908.03265.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import common_params, minibatch_params, spec_from
from optcmp.optimizers._hyperparams import HyperParam, by_name, one_of
from optcmp.optimizers._implementations import OptaxOptimizer, TorchOptimizer
from optcmp.optimizers._moments import (
    decayed,
    moment_params,
    optax_l2,
    optax_no_decoupled,
    torch_adam_options,
)
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule
from optcmp.optimizers.transforms import EPS_PLACEMENTS, TransformRule, scale_by_radam


def _torch_requires(h: Mapping[str, Any]) -> str | None:
    """torch's RAdam adds epsilon to the raw root."""
    if h["eps_placement"] != "raw":
        return (f"torch.optim.RAdam adds eps to the raw root sqrt(v_t) (eps_placement='raw'), "
                f"not eps_placement={h['eps_placement']!r} (optax's); the reference rule "
                "(impl='reference') runs it on every backend")
    return None


def _optax_requires(h: Mapping[str, Any]) -> str | None:
    """optax's RAdam: epsilon on the corrected root or inside it, no decoupled decay."""
    if h["eps_placement"] == "raw":
        return ("optax.radam adds eps to the bias-corrected root (eps_placement="
                "'bias_corrected', or 'inside_sqrt' as its eps_root), not to the raw root as "
                "torch (eps_placement='raw'); the reference rule (impl='reference') runs 'raw'")
    return optax_no_decoupled("radam")(h)


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.radam`` arguments: epsilon as ``eps`` or as ``eps_root`` by the placement."""
    inside = h["eps_placement"] == "inside_sqrt"
    return {"learning_rate": float(h["learning_rate"]), "b1": float(h["beta1"]),
            "b2": float(h["beta2"]), "eps": 0.0 if inside else float(h["eps"]),
            "eps_root": float(h["eps"]) if inside else 0.0, "threshold": 5.0, "nesterov": False}


def radam(learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
          eps: float = 1e-8, weight_decay: float = 0.0, weight_decay_mode: str = "l2",
          eps_placement: str = "raw", schedule: str | Schedule | None = "constant",
          clip_norm: float | None = None, batch_size: int | None = None, shuffle: bool = True,
          *, impl: str = "auto", label: str = "") -> OptimizerSpec:
    """RAdam (Liu et al. 2020), full batch or minibatch, epsilon placement named.

    Parameters
    ----------
    learning_rate : float, default 1e-3
    beta1, beta2 : float, default 0.9, 0.999
    eps : float, default 1e-8
    weight_decay : float, default 0.0
    weight_decay_mode : {"l2", "decoupled"}, default "l2"
    eps_placement : {"raw", "bias_corrected", "inside_sqrt"}, default "raw"
        On the raw root (torch), the bias-corrected root or inside it (optax ``eps``,
        ``eps_root``).
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
    batch_size : int, optional
        Rows per minibatch (None: full batch).
    shuffle : bool, default True
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("radam", locals())


register_optimizer(OptimizerInfo(
    name="radam",
    params=by_name(moment_params(1e-3, 1e-8),
                   HyperParam("eps_placement", "raw", one_of("eps_placement", EPS_PLACEMENTS),
                              "eps on the raw root (torch), the bias-corrected root or inside "
                              "it (optax)"),
                   common_params(), minibatch_params()),
    summary="RAdam, full or minibatch; eps placement raw (torch) or bias_corrected (optax)",
    reference="Liu et al. (2020), arXiv:1908.03265",
    rule=TransformRule(decayed(scale_by_radam()), "radam"),
    stochastic=True,
    natives=(TorchOptimizer("RAdam", torch_adam_options, requires=_torch_requires),
             OptaxOptimizer("radam", _optax_options, requires=_optax_requires, l2=optax_l2)),
), radam)
