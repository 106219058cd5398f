r"""Gradient descent scaled by the inverse Hessian diagonal (diagonal Newton, Jacobi scaling).

.. math:: x_{k+1} = x_k - \frac{\eta}{p} \, \frac{\nabla f(x_k)}{\operatorname{diag}(H)}

with :math:`p` the number of parameters: the Jacobi-scaled Hessian :math:`D^{-1/2} H D^{-1/2}`
has unit diagonal and so eigenvalues at most :math:`p`, which makes the step safe. Problems
without an exact diagonal supply a positive estimate (docs/optimizers.md, 'diag_newton').

References
----------
S. Becker and Y. LeCun, "Improving the convergence of back-propagation learning with second
order methods", Proc. 1988 Connectionist Models Summer School, 1989.
J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer, 2006, Sec. 3.3
(scaling).
"""

from __future__ import annotations

from typing import Any

from optcmp.optimizers._common import spec_from
from optcmp.optimizers._hyperparams import HyperParam, positive_float
from optcmp.optimizers._implementations import UpdateRule
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer


class DiagNewtonRule(UpdateRule):
    """``x - learning_rate * (g / h) / p`` with ``h`` the positive curvature diagonal."""

    needs_curvature = True

    def update(self, ops: Any, x: Any, g: Any, state: tuple[Any, ...], hp: dict[str, Any],
               curvature: Any) -> tuple[Any, tuple[Any, ...]]:
        p = x.shape[0]
        return x - (hp["learning_rate"] / p) * (g / curvature), state


def diag_newton(learning_rate: float = 1.0, *, impl: str = "auto",
                label: str = "") -> OptimizerSpec:
    r"""Gradient descent scaled by the inverse Hessian diagonal and divided by :math:`p`.

    Parameters
    ----------
    learning_rate : float, default 1.0
    impl : {"auto", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("diag_newton", locals())


register_optimizer(OptimizerInfo(
    name="diag_newton",
    aliases=("diagnewton", "diagonal_newton", "jacobi", "diag-newton-gd"),
    params={"learning_rate": HyperParam("learning_rate", 1.0, positive_float("learning_rate"),
                                        "multiplier of the scaled step")},
    summary="gradient descent scaled by the inverse Hessian diagonal, divided by p",
    reference="Becker & LeCun (1989); Nocedal & Wright (2006), Sec. 3.3",
    rule=DiagNewtonRule(),
), diag_newton)
