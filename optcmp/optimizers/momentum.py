r"""Gradient descent with (heavy-ball) momentum, full batch or minibatch, under a named buffer
convention.

.. math::

    \text{lr\_outside (torch):}\quad b_k &= \mu b_{k-1} + g_k, \qquad
        x_{k+1} = x_k - \eta_k b_k \\
    \text{lr\_inside (Keras, Sutskever et al.):}\quad v_k &= \mu v_{k-1} - \eta_k g_k, \qquad
        x_{k+1} = x_k + v_k

For a constant learning rate (or ``momentum=0``) the two give the same iterates
(:math:`v_k = -\eta b_k`) and both natives run either; under a schedule they part (Keras' buffer
keeps the old rates for about :math:`1/(1-\mu)` steps) and each native runs only its own.
Measured: docs/optimizers.md, 'momentum and nesterov'.

References
----------
B. T. Polyak, "Some methods of speeding up the convergence of iteration methods", USSR Comput.
Math. Math. Phys. 4(5), 1964. I. Sutskever, J. Martens, G. Dahl and G. Hinton, "On the importance
of initialization and momentum in deep learning", ICML 2013.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import (
    ScheduledRule,
    common_params,
    f64,
    keras_common,
    minibatch_params,
    spec_from,
    torch_common,
)
from optcmp.optimizers._hyperparams import HyperParam, by_name, one_of, positive_float
from optcmp.optimizers._implementations import (
    KerasOptimizer,
    Native,
    OptaxOptimizer,
    Options,
    TorchOptimizer,
)
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer
from optcmp.optimizers.schedule import Schedule, parse

#: Where the learning rate sits: outside the buffer (torch) or inside it (Keras).
CONVENTIONS = ("lr_outside", "lr_inside")


class MomentumRule(ScheduledRule):
    """Heavy-ball or Nesterov momentum under ``hp["convention"]`` (``nesterov=None``: the
    spec's ``nesterov``)."""

    def __init__(self, nesterov: bool | None = False) -> None:
        self.nesterov = nesterov

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x),)

    def plain_step(self, hp: Mapping[str, Any]) -> float | None:
        """The learning rate without momentum, schedule or clipping (the buffer stays zero)."""
        lr = hp["learning_rate"]
        constant = parse(hp.get("schedule", "constant")).is_constant
        plain = hp["momentum"] == 0.0 and constant and hp.get("clip_norm") is None
        return lr if plain and isinstance(lr, float) else None

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        mu = hp["momentum"]
        nesterov = hp["nesterov"] if self.nesterov is None else self.nesterov
        (b,) = buf
        if mu == 0.0:
            return x - lr * g, (b,)
        if hp.get("convention", "lr_outside") == "lr_outside":
            b = b * mu + g
            d = g + mu * b if nesterov else b
            return x - lr * d, (b,)
        b = b * mu - g * lr
        return (x + (b * mu - g * lr) if nesterov else x + b), (b,)


def momentum_requires(framework: str, value: str) -> Any:
    """``requires`` of a momentum native: its convention, unless the two conventions are one
    algorithm (``momentum == 0``, or a constant learning rate: ``v = -lr b`` step by step)."""

    def check(h: Mapping[str, Any]) -> str | None:
        if (h["convention"] == value or h["momentum"] == 0.0
                or h.get("schedule", "constant") == "constant"):
            return None
        return (f"{framework} implements convention={value!r} (learning rate "
                f"{value.split('_')[1]} the momentum buffer), not {h['convention']!r}, which "
                f"differs under schedule={h['schedule']!r}; the reference rule "
                f"(impl='reference') runs {h['convention']!r} on every backend")

    return check


def sgd_natives(torch_options: Options, keras_options: Options,
                optax_options: Options) -> tuple[Native, ...]:
    """torch's, Keras' and optax' SGD, each running its own momentum convention."""
    return (TorchOptimizer("SGD", torch_options,
                           requires=momentum_requires("torch.optim.SGD", "lr_outside")),
            KerasOptimizer("SGD", keras_options,
                           requires=momentum_requires("keras.optimizers.SGD", "lr_inside")),
            OptaxOptimizer("sgd", optax_options,
                           requires=momentum_requires("optax.sgd", "lr_outside")))


def sgd_options(nesterov: bool) -> tuple[Any, Any]:
    """The ``torch.optim.SGD`` and ``keras.optimizers.SGD`` option builders."""

    def torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
        return {"lr": float(h["learning_rate"]), "momentum": float(h["momentum"]),
                "dampening": 0.0, "weight_decay": 0.0, "nesterov": nesterov, "fused": None,
                **torch_common()}

    def keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
        return {"learning_rate": float(h["learning_rate"]), "momentum": f64(h["momentum"]),
                "nesterov": nesterov, "weight_decay": None, **keras_common(h)}

    return torch_options, keras_options


def optax_sgd_options(nesterov: bool | None) -> Any:
    """The ``optax.sgd`` option builder (``nesterov=None``: the spec's); ``lr_outside``."""

    def optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
        mu = float(h["momentum"])
        nest = bool(h["nesterov"]) if nesterov is None else nesterov
        return {"learning_rate": float(h["learning_rate"]), "momentum": mu or None,
                "nesterov": nest, "accumulator_dtype": None}

    return optax_options


def momentum_params(momentum: float, lower: bool) -> dict[str, HyperParam]:
    """Hyperparameters of ``momentum`` and ``nesterov``."""
    return by_name(
        HyperParam("learning_rate", 0.01, positive_float("learning_rate"), "step size"),
        HyperParam("momentum", momentum, positive_float("momentum", upper=1.0, allow_zero=lower),
                   "momentum in [0, 1)" if lower else "momentum in (0, 1)"),
        HyperParam("convention", "lr_outside", one_of("convention", CONVENTIONS),
                   "lr_outside (torch) or lr_inside (Keras) the buffer"),
        common_params(),
        minibatch_params(),
    )


def momentum(learning_rate: float = 0.01, momentum: float = 0.9,
             convention: str = "lr_outside", schedule: str | Schedule | None = "constant",
             clip_norm: float | None = None,
             batch_size: int | None = None, shuffle: bool = True, *, impl: str = "auto",
             label: str = "") -> OptimizerSpec:
    r"""Gradient descent with heavy-ball momentum, full batch or minibatch.

    Parameters
    ----------
    learning_rate : float, default 0.01
    momentum : float, default 0.9
        :math:`\mu \in [0, 1)`; 0 is plain gradient descent.
    convention : {"lr_outside", "lr_inside"}, default "lr_outside"
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
    return spec_from("momentum", locals())


register_optimizer(OptimizerInfo(
    name="momentum",
    aliases=("momentum_gd",),
    params=momentum_params(0.9, True),
    summary="heavy-ball momentum, full or minibatch; convention lr_outside (torch) or "
            "lr_inside (Keras)",
    reference="Polyak (1964); Sutskever et al. (2013)",
    rule=MomentumRule(False),
    stochastic=True,
    natives=sgd_natives(*sgd_options(False), optax_sgd_options(False)),
), momentum)
