"""The hyperparameters, weight decay and native arguments the Adam-family optimizers built from
transforms share (NAdam, RAdam, LAMB)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import torch_common
from optcmp.optimizers._hyperparams import HyperParam, by_name, one_of, positive_float
from optcmp.optimizers.adam import WEIGHT_DECAY_MODES
from optcmp.optimizers.transforms import Transform, add_decayed_weights, chain, scale_by_lr, when


def moment_params(lr: float, eps: float, weight_decay_mode: str | None = "l2"
                  ) -> dict[str, HyperParam]:
    """``learning_rate``, ``beta1``, ``beta2``, ``eps``, ``weight_decay`` and (unless None)
    ``weight_decay_mode``: the hyperparameters of the Adam family."""
    out = by_name(
        HyperParam("learning_rate", lr, positive_float("learning_rate"), "step size"),
        HyperParam("beta1", 0.9, positive_float("beta1", upper=1.0, allow_zero=True),
                   "decay of the first moment, in [0, 1)"),
        HyperParam("beta2", 0.999, positive_float("beta2", upper=1.0, allow_zero=True),
                   "decay of the second moment, in [0, 1)"),
        HyperParam("eps", eps, positive_float("eps"), "added to the denominator"),
        HyperParam("weight_decay", 0.0, positive_float("weight_decay", allow_zero=True),
                   "weight decay coefficient, >= 0"))
    if weight_decay_mode is not None:
        out.update(by_name(HyperParam(
            "weight_decay_mode", weight_decay_mode,
            one_of("weight_decay_mode", WEIGHT_DECAY_MODES),
            "l2 (into the gradient) or decoupled (x(1 - lr wd))")))
    return out


def decayed(direction: Transform) -> Transform:
    """``direction`` with weight decay as ``weight_decay_mode`` says, then the learning rate."""
    return chain(when(lambda h: h["weight_decay_mode"] == "l2", add_decayed_weights()),
                 direction,
                 when(lambda h: h["weight_decay_mode"] == "decoupled", add_decayed_weights()),
                 scale_by_lr())


def torch_adam_options(h: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """The arguments torch's NAdam and RAdam share, every one explicit."""
    return {"lr": float(h["learning_rate"]), "betas": (float(h["beta1"]), float(h["beta2"])),
            "eps": float(h["eps"]), "weight_decay": float(h["weight_decay"]),
            "decoupled_weight_decay": h["weight_decay_mode"] == "decoupled",
            "capturable": False, **extra, **torch_common()}


def optax_l2(h: Mapping[str, Any]) -> float:
    """optax's L2 term (``weight_decay_mode='l2'``) added to the gradient first."""
    return float(h["weight_decay"]) if h["weight_decay_mode"] == "l2" else 0.0


def optax_no_decoupled(name: str) -> Any:
    """``requires`` of an optax alias with no decoupled decay of its own."""
    def check(h: Mapping[str, Any]) -> str | None:
        if h["weight_decay"] and h["weight_decay_mode"] == "decoupled":
            return (f"optax.{name} has no decoupled weight decay; weight_decay_mode='l2' runs "
                    "there, and the reference rule (impl='reference') runs 'decoupled'")
        return None
    return check
