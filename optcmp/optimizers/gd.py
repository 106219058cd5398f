r"""Gradient descent with a constant step.

.. math:: x_{k+1} = x_k - \eta \, \nabla f(x_k)

``learning_rate="auto"``: :math:`\eta = 1/L`, the safe step (:math:`L` the gradient's Lipschitz
constant).

References
----------
Y. Nesterov, *Lectures on Convex Optimization*, 2nd ed., Springer, 2018, Sec. 2.1.5.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import spec_from
from optcmp.optimizers._hyperparams import HyperParam, positive_float
from optcmp.optimizers._implementations import UpdateRule
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer


class GDRule(UpdateRule):
    """``x - learning_rate * g``."""

    def update(self, ops: Any, x: Any, g: Any, state: tuple[Any, ...], hp: dict[str, Any],
               curvature: Any) -> tuple[Any, tuple[Any, ...]]:
        return x - hp["learning_rate"] * g, state

    def plain_step(self, hp: Mapping[str, Any]) -> float | None:
        """The learning rate (a float once resolved)."""
        lr = hp["learning_rate"]
        return lr if isinstance(lr, float) else None


def gd(learning_rate: float | str = "auto", *, impl: str = "auto",
       label: str = "") -> OptimizerSpec:
    r"""Full-batch gradient descent, :math:`x \leftarrow x - \eta \nabla f(x)`.

    Parameters
    ----------
    learning_rate : float or "auto", default "auto"
        ``"auto"``: :math:`1/L`, which the problem must know, recorded in each result.
    impl : {"auto", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("gd", locals())


register_optimizer(OptimizerInfo(
    name="gd",
    aliases=("gradient_descent", "gradientdescent", "steepest_descent"),
    params={"learning_rate": HyperParam("learning_rate", "auto",
                                        positive_float("learning_rate", allow_auto=True),
                                        "step size; 'auto' = 1/L")},
    summary="full-batch gradient descent, constant step",
    reference="Nesterov (2018), Lectures on Convex Optimization, Sec. 2.1.5",
    rule=GDRule(),
), gd)
