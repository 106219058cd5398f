r"""Adam (Kingma and Ba 2015), under the two epsilon conventions the frameworks implement.

.. math::

    m_t &= \beta_1 m_{t-1} + (1-\beta_1) g_t, \qquad
    v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2 \\
    \text{bias\_corrected\_eps (torch):}\quad
    x_t &= x_{t-1} - \frac{\eta}{1-\beta_1^t}\,
           \frac{m_t}{\sqrt{v_t}/\sqrt{1-\beta_2^t} + \epsilon} \\
    \text{eps\_hat (Keras):}\quad
    x_t &= x_{t-1} - \eta\,\frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t}\,
           \frac{m_t}{\sqrt{v_t} + \hat\epsilon}

The paper's Algorithm 1 and its Sec. 2 "more efficient order" with :math:`\hat\epsilon` on the
*uncorrected* root: no constant epsilon makes them agree. AMSGrad (``amsgrad=True``) keeps
:math:`\max(v^{\max}_{t-1}, v_t)` (``amsgrad_max="raw"``: torch, Keras) or
:math:`\max(\hat v^{\max}_{t-1}, v_t/(1-\beta_2^t))` (``"bias_corrected"``: optax).
``weight_decay_mode="l2"`` adds ``weight_decay * x`` to the gradient, ``"decoupled"`` multiplies
``x`` by ``1 - lr * weight_decay`` first. The reference rule runs every variant, each native its
own. Why: see docs/same-name-different-meaning.md.

References
----------
D. P. Kingma and J. Ba, "Adam: A Method for Stochastic Optimization", ICLR 2015,
arXiv:1412.6980. S. J. Reddi, S. Kale and S. Kumar, "On the Convergence of Adam and Beyond",
ICLR 2018. I. Loshchilov and F. Hutter, "Decoupled Weight Decay Regularization",
ICLR 2019, arXiv:1711.05101.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import (
    ScheduledRule,
    both,
    common_params,
    f64,
    keras_common,
    minibatch_params,
    requires,
    spec_from,
    torch_common,
)
from optcmp.optimizers._hyperparams import HyperParam, boolean, by_name, one_of, positive_float
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule

#: Adam's epsilon conventions: torch's (paper Algorithm 1) and Keras' ("epsilon hat").
CONVENTIONS = ("bias_corrected_eps", "eps_hat")
#: Of what AMSGrad takes the running maximum: torch/Keras' raw second moment, optax' corrected one.
AMSGRAD_MAXIMA = ("raw", "bias_corrected")
#: Kinds of weight decay.
WEIGHT_DECAY_MODES = ("l2", "decoupled")


class AdamRule(ScheduledRule):
    """Adam under ``hp["convention"]``, in torch's or Keras' arithmetic order (no
    ``weight_decay_mode``: decoupled); the third buffer is AMSGrad's maximum."""

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x), ops.zeros_like(x), ops.zeros_like(x))

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        b1, b2, eps, wd = hp["beta1"], hp["beta2"], hp["eps"], hp["weight_decay"]
        torch_form = hp["convention"] == "bias_corrected_eps"
        m, v, vmax = buf
        if wd != 0.0:
            if hp.get("weight_decay_mode", "decoupled") == "l2":
                g = g + wd * x
            elif torch_form:
                x = x * (1.0 - lr * wd)
            else:
                x = x - x * wd * lr
        ams = hp.get("amsgrad", False)
        corrected_max = ams and hp.get("amsgrad_max", "raw") != "raw"
        if torch_form:
            m = m + (1.0 - b1) * (g - m)
            v = v * b2 + (1.0 - b2) * (g * g)
        else:
            m = m + (g - m) * (1.0 - b1)
            v = v + (g * g - v) * (1.0 - b2)
        if ams:
            vmax = ops.maximum(vmax, v / (1.0 - b2 ** t) if corrected_max else v)
        vhat = vmax if ams else v  # bias-corrected already when corrected_max
        if torch_form:
            if corrected_max:
                denom = ops.sqrt(vhat) + eps
            else:
                denom = ops.sqrt(vhat) / ops.sqrt(1.0 - b2 ** t) + eps
            return x - (lr / (1.0 - b1 ** t)) * (m / denom), (m, v, vmax)
        alpha = lr * ops.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t)
        root = ops.sqrt(vhat * (1.0 - b2 ** t)) if corrected_max else ops.sqrt(vhat)
        return x - (m * alpha) / (root + eps), (m, v, vmax)


def adam_params(weight_decay: float) -> dict[str, HyperParam]:
    """Hyperparameters shared by Adam and AdamW (``weight_decay`` default differs)."""
    return by_name(
        HyperParam("learning_rate", 1e-3, positive_float("learning_rate"), "step size"),
        HyperParam("beta1", 0.9, positive_float("beta1", upper=1.0, allow_zero=True),
                   "decay of the first moment, in [0, 1)"),
        HyperParam("beta2", 0.999, positive_float("beta2", upper=1.0, allow_zero=True),
                   "decay of the second moment, in [0, 1)"),
        HyperParam("eps", 1e-8, positive_float("eps"), "added to the denominator"),
        HyperParam("weight_decay", weight_decay, positive_float("weight_decay", allow_zero=True),
                   "weight decay coefficient, >= 0"),
        HyperParam("convention", "bias_corrected_eps", one_of("convention", CONVENTIONS),
                   "where epsilon is added: bias_corrected_eps (torch) or eps_hat (Keras)"),
        HyperParam("amsgrad", False, boolean("amsgrad"),
                   "AMSGrad: divide by a running maximum of the second moment",
                   omit_at_default=True),
        HyperParam("amsgrad_max", "raw", one_of("amsgrad_max", AMSGRAD_MAXIMA),
                   "AMSGrad's maximum over raw (torch, Keras) or bias-corrected (optax) second "
                   "moments",
                   omit_at_default=True),
    )


def check_amsgrad(hp: Mapping[str, Any]) -> None:
    """Cross-check of a spec: ``amsgrad_max`` other than its default needs ``amsgrad=True``."""
    if "amsgrad_max" in hp and not hp.get("amsgrad", False):
        raise ValueError(f"amsgrad_max={hp['amsgrad_max']!r} applies only with amsgrad=True; "
                         "pass amsgrad=True or leave amsgrad_max at 'raw'")


def amsgrad_requires(framework: str, convention: str) -> Any:
    """``requires`` of a torch or Keras Adam: its epsilon convention, and AMSGrad only over raw
    second moments."""

    def check(h: Mapping[str, Any]) -> str | None:
        if h.get("amsgrad", False) and h.get("amsgrad_max", "raw") != "raw":
            return (f"{framework}(amsgrad=True) takes the maximum over raw second moments "
                    "(amsgrad_max='raw'), not over bias-corrected ones as optax; the reference "
                    "rule (impl='reference') runs amsgrad_max='bias_corrected' on every backend")
        return None

    return both(requires("convention", convention, framework), check)


def no_amsgrad(framework: str) -> Any:
    """``requires`` of a native without AMSGrad."""

    def check(h: Mapping[str, Any]) -> str | None:
        if h.get("amsgrad", False):
            return (f"{framework} has no AMSGrad; the reference rule (impl='reference') runs "
                    "amsgrad=True with either amsgrad_max on every backend")
        return None

    return check


def torch_options(h: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """``torch.optim.Adam`` or ``AdamW`` arguments, every one explicit."""
    return {"lr": float(h["learning_rate"]), "betas": (float(h["beta1"]), float(h["beta2"])),
            "eps": float(h["eps"]), "weight_decay": float(h["weight_decay"]),
            "amsgrad": bool(h.get("amsgrad", False)), "capturable": False, "fused": None,
            **extra, **torch_common()}


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.Adam`` arguments, the decay's kind from the spec."""
    return torch_options(h, decoupled_weight_decay=h["weight_decay_mode"] == "decoupled")


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.Adam`` arguments (floats as ``numpy.float64``, see ``f64``)."""
    wd = float(h["weight_decay"])
    return {"learning_rate": float(h["learning_rate"]), "beta_1": f64(h["beta1"]),
            "beta_2": f64(h["beta2"]), "epsilon": f64(h["eps"]),
            "amsgrad": bool(h.get("amsgrad", False)),
            "weight_decay": f64(wd) if wd else None, **keras_common(h)}


def _keras_requires(h: Mapping[str, Any]) -> str | None:
    """Keras' Adam: its convention, decoupled decay only, AMSGrad over raw moments."""
    if h["weight_decay"] and h["weight_decay_mode"] != "decoupled" and h["convention"] == "eps_hat":
        return ("keras.optimizers.Adam's weight_decay is decoupled, not weight_decay_mode='l2'; "
                "the reference rule (impl='reference') runs 'l2' on every backend")
    return amsgrad_requires("keras.optimizers.Adam", "eps_hat")(h)


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.adam`` arguments: epsilon added to the bias-corrected root (torch's form)."""
    return {"learning_rate": float(h["learning_rate"]), "b1": float(h["beta1"]),
            "b2": float(h["beta2"]), "eps": float(h["eps"]), "eps_root": 0.0, "mu_dtype": None,
            "nesterov": False}


def _optax_requires(h: Mapping[str, Any]) -> str | None:
    """optax's Adam: torch's convention, L2 decay only, no AMSGrad."""
    why = requires("convention", "bias_corrected_eps", "optax.adam")(h)
    if why is None and h["weight_decay"] and h["weight_decay_mode"] != "l2":
        why = ("optax.adam has no weight decay of its own; decoupled decay is optax.adamw "
               "(optcmp.adamw); the reference rule (impl='reference') runs it here")
    return why or no_amsgrad("optax.adam")(h)


def _optax_l2(h: Mapping[str, Any]) -> float:
    """The L2 term ``weight_decay * x`` added to the gradient (``weight_decay_mode='l2'``)."""
    return float(h["weight_decay"]) if h["weight_decay_mode"] == "l2" else 0.0


def adam(learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
         eps: float = 1e-8, weight_decay: float = 0.0, convention: str = "bias_corrected_eps",
         weight_decay_mode: str = "l2", schedule: str | Schedule | None = "constant",
         clip_norm: float | None = None,
         batch_size: int | None = None, shuffle: bool = True, amsgrad: bool = False,
         amsgrad_max: str = "raw", *, impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""Adam (Kingma and Ba 2015), full batch or minibatch, under a named epsilon convention.

    Parameters
    ----------
    learning_rate : float, default 1e-3
    beta1, beta2 : float, default 0.9, 0.999
        Decay rates in [0, 1) of the first and second moment.
    eps : float, default 1e-8
        Placed as ``convention`` says (Keras' 1e-7 means something else).
    weight_decay : float, default 0.0
    convention : {"bias_corrected_eps", "eps_hat"}, default "bias_corrected_eps"
    weight_decay_mode : {"l2", "decoupled"}, default "l2"
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
        Clip the gradient to this global norm (None: off).
    batch_size : int, optional
        Rows per minibatch (None: full batch).
    shuffle : bool, default True
    amsgrad : bool, default False
    amsgrad_max : {"raw", "bias_corrected"}, default "raw"
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("adam", locals())


register_optimizer(OptimizerInfo(
    name="adam",
    params=by_name(adam_params(0.0),
            HyperParam("weight_decay_mode", "l2", one_of("weight_decay_mode", WEIGHT_DECAY_MODES),
                       "l2 (into the gradient) or decoupled"),
            common_params(), minibatch_params()),
    summary="Adam, full or minibatch; convention bias_corrected_eps (torch) or eps_hat (Keras)",
    reference="Kingma & Ba (2015), arXiv:1412.6980",
    check=check_amsgrad,
    rule=AdamRule(),
    stochastic=True,
    natives=(TorchOptimizer("Adam", _torch_options,
                            requires=amsgrad_requires("torch.optim.Adam", "bias_corrected_eps")),
             KerasOptimizer("Adam", _keras_options, requires=_keras_requires),
             OptaxOptimizer("adam", _optax_options, requires=_optax_requires, l2=_optax_l2)),
), adam)
