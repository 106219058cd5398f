r"""Limited-memory BFGS: scipy's L-BFGS-B on any backend, and ``torch.optim.LBFGS`` on torch.

scipy's ``minimize(method="L-BFGS-B", jac=True)`` gets the backend's objective and gradient
through a float64 bridge whose transfers are timed (:mod:`optcmp.adapters.scipy_`). optcmp's
stopping rule is checked in scipy's ``callback`` after every iteration; scipy's own convergence
tests are switched off (``ftol = gtol = 0``) so that scipy's ``success`` never counts as
reaching the target, and optcmp's iteration and evaluation budgets become ``maxiter`` and
``maxfun``. ``torch.optim.LBFGS`` runs one optcmp iteration per ``step()`` with a strong-Wolfe
line search (:func:`_torch_options`).

References
----------
D. C. Liu and J. Nocedal, "On the limited memory BFGS method for large scale optimization",
Math. Programming 45, 1989.
R. H. Byrd, P. Lu, J. Nocedal and C. Zhu, "A limited memory algorithm for bound constrained
optimization", SIAM J. Sci. Comput. 16(5), 1995.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers.base import (
    HyperParam,
    OptimizerInfo,
    OptimizerSpec,
    ScipyMinimize,
    TorchOptimizer,
    get_optimizer,
    positive_int,
    register_optimizer,
)


def _scipy_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """L-BFGS-B options: history and line-search caps; scipy's own stopping tests off."""
    return {"maxcor": int(h["history_size"]), "maxls": int(h["max_linesearch"]),
            "ftol": 0.0, "gtol": 0.0}


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.LBFGS`` with a strong-Wolfe line search, one L-BFGS iteration per step.

    Options passed: ``lr=1``, ``max_iter=1`` (one optcmp iteration is one L-BFGS iteration),
    ``max_eval=1 + max_linesearch`` (torch caps the line search at ``max_eval`` minus the
    evaluation already spent in the step, so the line search gets ``max_linesearch``
    evaluations, like scipy's ``maxls``), ``history_size`` from the spec,
    ``line_search_fn="strong_wolfe"``, and ``tolerance_grad = tolerance_change = 0`` so that
    torch never stops on its own and optcmp's stopping rule decides.

    Cost of one step: ``1 + m`` closure calls (objective and gradient), where the first one
    re-evaluates the incoming iterate (torch starts every ``step()`` with it; after the first
    step this point was already evaluated at the end of the previous line search) and ``m >= 1``
    are the line-search evaluations. All are counted in ``nfev`` and ``njev``. torch reads the
    loss and a few scalars (``float(loss)``, the curvature test ``y's > 1e-10``) on the host
    inside ``step()``: on CUDA every step synchronizes several times by design of
    ``torch.optim.LBFGS``.
    """
    return {"lr": 1.0, "max_iter": 1, "max_eval": 1 + int(h["max_linesearch"]),
            "tolerance_grad": 0.0, "tolerance_change": 0.0,
            "history_size": int(h["history_size"]), "line_search_fn": "strong_wolfe"}


def lbfgs(history_size: int = 10, max_linesearch: int = 20, *, impl: str = "auto",
          label: str = "") -> OptimizerSpec:
    r"""Limited-memory BFGS.

    Parameters
    ----------
    history_size : int, default 10
        Number of correction pairs kept (scipy ``maxcor``, torch ``history_size``).
    max_linesearch : int, default 20
        Most function evaluations in one line search (scipy ``maxls``; torch's strong-Wolfe
        search gets the same cap through ``max_eval``).
    impl : {"auto", "scipy", "native"}
        ``"scipy"``: scipy's L-BFGS-B with the backend's objective and gradient (float64
        bridge, transfer timed). ``"native"``: ``torch.optim.LBFGS`` with a strong-Wolfe line
        search, one optcmp iteration per L-BFGS iteration (torch backend only; each iteration
        costs ``1 + m`` evaluations, ``m`` those of the line search, see
        :func:`optcmp.optimizers.lbfgs._torch_options`). ``"auto"``: native on torch,
        scipy elsewhere.
    label : str, optional

    Returns
    -------
    OptimizerSpec

    Raises
    ------
    ValueError
        A non-positive ``history_size`` or ``max_linesearch``.

    Notes
    -----
    Iterations, ``nfev`` and ``njev`` are counted by optcmp (every objective-and-gradient call);
    scipy's ``success`` is never taken as reaching the target.

    References
    ----------
    D. C. Liu and J. Nocedal, "On the limited memory BFGS method for large scale optimization",
    Math. Programming 45, 1989. R. H. Byrd, P. Lu, J. Nocedal and C. Zhu, "A limited memory
    algorithm for bound constrained optimization", SIAM J. Sci. Comput. 16(5), 1995.
    """
    return get_optimizer("lbfgs", impl=impl, label=label, history_size=history_size,
                         max_linesearch=max_linesearch)


register_optimizer(OptimizerInfo(
    name="lbfgs",
    aliases=("l-bfgs", "l-bfgs-b", "lbfgsb", "limited_memory_bfgs"),
    params={
        "history_size": HyperParam("history_size", 10, positive_int("history_size"),
                                   "number of stored correction pairs (scipy maxcor)"),
        "max_linesearch": HyperParam("max_linesearch", 20, positive_int("max_linesearch"),
                                     "line-search evaluations per iteration (scipy maxls)"),
    },
    summary="limited-memory BFGS (scipy L-BFGS-B; torch.optim.LBFGS natively on torch)",
    reference="Liu & Nocedal (1989); Byrd, Lu, Nocedal & Zhu (1995)",
    # torch.optim.LBFGS where the backend is torch ("auto" prefers it), scipy everywhere
    natives=(TorchOptimizer("LBFGS", _torch_options, closure=True),
             ScipyMinimize("L-BFGS-B", _scipy_options)),
), lbfgs)
