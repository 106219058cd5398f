r"""Prodigy (Mishchenko and Defazio 2024): AdamW whose step size :math:`d` estimates the distance
to the solution.

.. math::

    \eta'_t &= d_t\, \eta_t\, c_t, \quad
    c_t = \frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t} \text{ (bias\_correction) or } 1 \\
    m_t &= \beta_1 m_{t-1} + (1-\beta_1) d_t g_t, \quad
    v_t = \beta_2 v_{t-1} + (1-\beta_2) d_t^2 g_t^2 \\
    r_t &= \beta_3 r_{t-1} + \frac{d_t}{d_0}\, \eta'_t\, \langle g_t, x_0 - x_{t-1}\rangle, \quad
    s_t = \beta_3 s_{t-1} + \frac{\eta'_t}{d_0} d_t g_t
    \ (\text{safeguard\_warmup}: d_t\, d_t g_t / d_0) \\
    d_{t+1} &= \max\!\left(d_t, \kappa\, r_t / \lVert s_t\rVert_1\right), \quad
    x_t = x_{t-1} - \lambda \eta'_t x_{t-1} - \eta'_t\, m_t / (\sqrt{v_t} + d_{t+1}\epsilon)

with :math:`\beta_3 = \sqrt{\beta_2}` unless given, :math:`\kappa` = ``d_coef``. The authors'
package (``prodigyopt``) leaves the bias correction off by default; ``optax.contrib.prodigy``
always applies it.

References
----------
K. Mishchenko and A. Defazio, "Prodigy: An Expeditiously Adaptive Parameter-Free Learner",
ICML 2024, arXiv:2306.06101.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import ScheduledRule, common_params, minibatch_params, spec_from
from optcmp.optimizers._hyperparams import (
    HyperParam,
    boolean,
    by_name,
    optional_positive_float,
    positive_float,
)
from optcmp.optimizers._implementations import OptaxOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule


class ProdigyRule(ScheduledRule):
    """Prodigy; buffers ``m``, ``v``, ``s``, ``x0`` and the scalars ``d`` and ``r``."""

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        zero = ops.sum(ops.zeros_like(x))
        return (ops.zeros_like(x), ops.zeros_like(x), ops.zeros_like(x), x + 0.0, zero, zero)

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        xs, bufs = self.apply_all(ops, [x], [g], [buf], hp, lr, t)
        return xs[0], bufs[0]

    def update_all(self, ops: Any, xs: list[Any], gs: list[Any], states: list[tuple[Any, ...]],
                   hp: dict[str, Any]) -> tuple[list[Any], list[tuple[Any, ...]]]:
        """A native model's tensors together (``clip_norm`` is the caller's): ``d`` from sums
        over all of them, the same ``d`` and ``r`` kept in each tensor's buffers."""
        k = states[0][0]
        xs, bufs = self.apply_all(ops, xs, gs, [tuple(s[1:]) for s in states], hp,
                                  self.scheduled(ops, k, hp), k + 1.0)
        return xs, [(k + 1.0, *b) for b in bufs]

    def apply_all(self, ops: Any, xs: list[Any], gs: list[Any], bufs: list[tuple[Any, ...]],
                  hp: dict[str, Any], lr: Any, t: Any) -> tuple[list[Any], list[tuple[Any, ...]]]:
        """Step ``t`` of the flat tensors ``xs``; ``d`` and ``r`` are the first buffers'."""
        d, r = bufs[0][4], bufs[0][5]
        b1, b2, d0 = hp["beta1"], hp["beta2"], hp["d0"]
        b3 = b2 ** 0.5 if hp["beta3"] is None else hp["beta3"]
        d = ops.maximum(d, d0)  # d_1 = d0 (the buffer starts at 0; d never falls below d0)
        dlr = d * lr * (ops.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t) if hp["bias_correction"]
                        else 1.0)
        kept = []
        for g, (m, v, s, x0, _, _) in zip(gs, bufs):
            dg = d * g
            kept.append((b1 * m + (1.0 - b1) * dg, b2 * v + (1.0 - b2) * dg * dg,
                         b3 * s + ((d if hp["safeguard_warmup"] else dlr) / d0) * dg, x0))
        r = b3 * r + (d / d0) * dlr * sum(ops.sum(g * (b[3] - x)) for x, g, b in zip(xs, gs, kept))
        d = ops.maximum(d, hp["d_coef"] * r / sum(ops.sum(ops.abs(b[2])) for b in kept))
        wd, out = hp["weight_decay"], []
        for x, (m, v, _, _) in zip(xs, kept):
            step = dlr * m / (ops.sqrt(v) + d * hp["eps"])
            out.append(x - (wd * dlr * x + step if wd else step))
        return out, [(*b, d, r) for b in kept]


def prodigy(learning_rate: float = 1.0, beta1: float = 0.9, beta2: float = 0.999,
            beta3: float | None = None, eps: float = 1e-8, d0: float = 1e-6,
            d_coef: float = 1.0, weight_decay: float = 0.0, safeguard_warmup: bool = False,
            bias_correction: bool = False, schedule: str | Schedule | None = "constant",
            clip_norm: float | None = None, batch_size: int | None = None,
            shuffle: bool = True, *, impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""Prodigy (Mishchenko and Defazio 2024), full batch or minibatch.

    Parameters
    ----------
    learning_rate : float, default 1.0
        Multiplies the estimated step size ``d`` (a schedule's base value).
    beta1, beta2 : float, default 0.9, 0.999
    beta3 : float, optional
        Decay of the distance estimate's sums (None: ``sqrt(beta2)``).
    eps : float, default 1e-8
        Added to the root of the second moment, times ``d``.
    d0 : float, default 1e-6
        Initial estimate of ``d``.
    d_coef : float, default 1.0
    weight_decay : float, default 0.0
        Decoupled: ``x`` shrinks by ``weight_decay * d * lr`` each step.
    safeguard_warmup : bool, default False
    bias_correction : bool, default False
        Adam's bias correction on the step (``prodigyopt`` off by default, optax always on).
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
    return spec_from("prodigy", locals())


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.contrib.prodigy`` arguments, every one explicit."""
    return {"learning_rate": float(h["learning_rate"]),
            "betas": (float(h["beta1"]), float(h["beta2"])),
            "beta3": None if h["beta3"] is None else float(h["beta3"]), "eps": float(h["eps"]),
            "estim_lr0": float(h["d0"]), "estim_lr_coef": float(h["d_coef"]),
            "weight_decay": float(h["weight_decay"]),
            "safeguard_warmup": bool(h["safeguard_warmup"])}


def _optax_requires(h: Mapping[str, Any]) -> str | None:
    """optax's Prodigy always bias-corrects."""
    if h["bias_correction"]:
        return None
    return ("optax.contrib.prodigy always applies the bias correction (bias_correction=True); "
            "the reference rule (impl='reference') runs bias_correction=False, prodigyopt's "
            "default, on every backend")


register_optimizer(OptimizerInfo(
    name="prodigy",
    params=by_name(
        HyperParam("learning_rate", 1.0, positive_float("learning_rate"),
                   "multiplier of the estimated step size"),
        HyperParam("beta1", 0.9, positive_float("beta1", upper=1.0, allow_zero=True),
                   "decay of the first moment, in [0, 1)"),
        HyperParam("beta2", 0.999, positive_float("beta2", upper=1.0, allow_zero=True),
                   "decay of the second moment, in [0, 1)"),
        HyperParam("beta3", None, optional_positive_float("beta3"),
                   "decay of the distance sums (None: sqrt(beta2))"),
        HyperParam("eps", 1e-8, positive_float("eps"), "added to the root, times d"),
        HyperParam("d0", 1e-6, positive_float("d0"), "initial step-size estimate"),
        HyperParam("d_coef", 1.0, positive_float("d_coef"), "multiplier of the estimate"),
        HyperParam("weight_decay", 0.0, positive_float("weight_decay", allow_zero=True),
                   "decoupled decay, times d * lr"),
        HyperParam("safeguard_warmup", False, boolean("safeguard_warmup"),
                   "leave lr out of the estimate's denominator"),
        HyperParam("bias_correction", False, boolean("bias_correction"),
                   "Adam's bias correction (prodigyopt off, optax on)"),
        common_params(), minibatch_params()),
    summary="Prodigy (distance-adaptive AdamW), full or minibatch; bias correction named",
    reference="Mishchenko & Defazio (2024), arXiv:2306.06101",
    rule=ProdigyRule(),
    stochastic=True,
    natives=(OptaxOptimizer("contrib.prodigy", _optax_options, requires=_optax_requires),),
), prodigy)
