"""Schedule-Free's rule and declarations, shared by ``schedule_free_adamw`` and
``schedule_free_sgd`` (the method: :mod:`optcmp.optimizers.schedule_free_adamw`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import ScheduledRule, common_params, minibatch_params
from optcmp.optimizers._hyperparams import HyperParam, by_name, one_of, positive_float
from optcmp.optimizers._implementations import OptaxOptimizer

#: The sequences a run can judge.
EVAL_AT = ("x", "y")


class ScheduleFreeRule(ScheduledRule):
    """Schedule-Free over SGD or AdamW (``adam``); the iterate is ``y``, the buffers ``z``,
    AdamW's second moment, the sum of weights and the largest learning rate so far."""

    def __init__(self, adam: bool) -> None:
        self.adam = adam

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        zero = ops.sum(ops.zeros_like(x))
        return (x + 0.0, ops.zeros_like(x), zero, zero)

    def evaluated(self, ops: Any, x: Any, state: tuple[Any, ...], hp: dict[str, Any]) -> Any:
        if hp["eval_at"] == "y":
            return x
        b1 = hp["beta1"]
        return (x - (1.0 - b1) * state[1]) / b1

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        z, v, wsum, lr_max = buf
        b1, wd = hp["beta1"], hp["weight_decay"]
        lr_max = ops.maximum(lr_max, lr)
        weight = lr_max ** hp["weight_lr_power"]
        wsum = wsum + weight
        ck = weight / ops.where(wsum > 0, wsum, ops.ones_like(wsum))
        d = g
        if self.adam:
            b2 = hp["beta2"]
            v = (1.0 - b2) * (g * g) + b2 * v
            d = g / (ops.sqrt(v / (1.0 - b2 ** t)) + hp["eps"])
        z_new = z - lr * (d + wd * x if wd else d)
        x_prev = (x - (1.0 - b1) * z) / b1
        avg = (1.0 - ck) * x_prev + ck * z_new
        return b1 * avg + (1.0 - b1) * z_new, (z_new, v, wsum, lr_max)


def _params(learning_rate: float, adam: bool) -> dict[str, HyperParam]:
    """The hyperparameters of either variant (AdamW adds ``beta2`` and ``eps``)."""
    return by_name(
        HyperParam("learning_rate", learning_rate, positive_float("learning_rate"),
                   "step size of z"),
        HyperParam("beta1", 0.9, positive_float("beta1", upper=1.0),
                   "interpolation y = beta1 x + (1 - beta1) z, in (0, 1)"),
        *([HyperParam("beta2", 0.999, positive_float("beta2", upper=1.0, allow_zero=True),
                      "decay of the second moment, in [0, 1)"),
           HyperParam("eps", 1e-8, positive_float("eps"),
                      "added to the bias-corrected root")] if adam else []),
        HyperParam("weight_decay", 0.0, positive_float("weight_decay", allow_zero=True),
                   "decay lr * weight_decay * y added to z's step"),
        HyperParam("weight_lr_power", 2.0, positive_float("weight_lr_power", allow_zero=True),
                   "averaging weight = (largest lr so far) ** weight_lr_power"),
        HyperParam("eval_at", "x", one_of("eval_at", EVAL_AT),
                   "the judged sequence: x (the average) or y (the gradient's point)"),
        common_params(), minibatch_params())


def _optax_requires(name: str) -> Any:
    """``requires`` of optax's Schedule-Free: a constant learning rate (optax counts the
    weights' steps from 1 and the base step's from 0)."""

    def check(h: Mapping[str, Any]) -> str | None:
        if h.get("schedule", "constant") == "constant":
            return None
        return (f"optax.contrib.{name} evaluates a schedule at two step counts (from 1 for the "
                "averaging weights, from 0 for the base step), not learning_rate * s(k) for "
                "both; the reference rule (impl='reference') runs schedules on every backend")

    return check


def _optax_options(adam: bool) -> Any:
    """``optax.contrib.schedule_free_adamw`` or ``_sgd`` arguments, every one explicit."""

    def options(h: Mapping[str, Any]) -> dict[str, Any]:
        out = {"learning_rate": float(h["learning_rate"]), "warmup_steps": None,
               "b1": float(h["beta1"]), "weight_decay": float(h["weight_decay"]),
               "weight_lr_power": float(h["weight_lr_power"]), "state_dtype": None}
        if adam:
            out.update(b2=float(h["beta2"]), eps=float(h["eps"]))
        return out

    return options


def schedule_free_fields(name: str, adam: bool, learning_rate: float) -> dict[str, Any]:
    """The :class:`OptimizerInfo` fields of Schedule-Free AdamW (``adam``) or SGD."""
    return {"name": name, "params": _params(learning_rate, adam),
            "summary": f"Schedule-Free {'AdamW' if adam else 'SGD'}, full or minibatch; the "
                       "judged sequence named (eval_at x or y)",
            "reference": "Defazio et al. (2024), arXiv:2405.15682",
            "rule": ScheduleFreeRule(adam), "stochastic": True,
            "natives": (OptaxOptimizer(f"contrib.{name}", _optax_options(adam),
                                       requires=_optax_requires(name),
                                       eval_params="contrib.schedule_free_eval_params"),)}
