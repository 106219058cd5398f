r"""Limited-memory BFGS: scipy's L-BFGS-B on any backend, and ``torch.optim.LBFGS`` on torch.

scipy's own tests are off by default, so its ``success`` never counts as reaching the target;
optcmp's budgets become ``maxiter`` and ``maxfun``. How: see docs/optimizers.md, 'lbfgs'.

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

from optcmp.optimizers._common import spec_from
from optcmp.optimizers._hyperparams import HyperParam, by_name, positive_float, positive_int
from optcmp.optimizers._implementations import OptaxOptimizer, ScipyMinimize, TorchOptimizer
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, register_optimizer


def _scipy_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """L-BFGS-B options: history and line-search caps, scipy's own tests (off by default)."""
    return {"maxcor": int(h["history_size"]), "maxls": int(h["max_linesearch"]),
            "ftol": float(h["ftol"]), "gtol": float(h["gtol"])}


def _line_search(v: Any) -> Any:
    """Validator of ``line_search_fn``: ``"strong_wolfe"`` or ``None`` (torch's fixed step)."""
    if v is None or (isinstance(v, str) and v.strip().lower() == "none"):
        return None
    if isinstance(v, str) and v.strip().lower().replace("-", "_") == "strong_wolfe":
        return "strong_wolfe"
    raise ValueError(f"line_search_fn must be 'strong_wolfe' or None (torch: a fixed step lr=1 "
                     f"without line search), got {v!r}")


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.LBFGS`` arguments: ``max_eval`` caps a ``step()``'s evaluations, the first
    included, so each line search gets ``max_linesearch`` like scipy's ``maxls``."""
    m = int(h["max_iter_per_step"])
    return {"lr": 1.0, "max_iter": m, "max_eval": 1 + m * int(h["max_linesearch"]),
            "tolerance_grad": float(h["tolerance_grad"]),
            "tolerance_change": float(h["tolerance_change"]),
            "history_size": int(h["history_size"]), "line_search_fn": h["line_search_fn"]}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.lbfgs`` arguments: zoom line search with torch's Wolfe constants, or step 1."""
    ls = None if h["line_search_fn"] is None else {
        "max_linesearch_steps": int(h["max_linesearch"]), "max_learning_rate": None,
        "tol": 0.0, "increase_factor": 2.0, "slope_rtol": 1e-4, "curv_rtol": 0.9,
        "approx_dec_rtol": 1e-6, "stepsize_precision": 1e-5, "initial_guess_strategy": "keep",
        "verbose": False}
    return {"learning_rate": None if ls is not None else 1.0,
            "memory_size": int(h["history_size"]), "scale_init_precond": True, "linesearch": ls}


def _optax_requires(h: Mapping[str, Any]) -> str | None:
    """optax runs one iteration per step."""
    if int(h["max_iter_per_step"]) != 1:
        return (f"optax.lbfgs takes one iteration per step, not max_iter_per_step="
                f"{h['max_iter_per_step']}")
    return None


def lbfgs(history_size: int = 10, max_linesearch: int = 20, ftol: float = 0.0,
          gtol: float = 0.0, tolerance_grad: float = 0.0, tolerance_change: float = 0.0,
          line_search_fn: str | None = "strong_wolfe", max_iter_per_step: int = 1, *,
          impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""Limited-memory BFGS.

    Parameters
    ----------
    history_size : int, default 10
        Correction pairs kept (scipy ``maxcor``).
    max_linesearch : int, default 20
        Most evaluations in one line search (scipy ``maxls``).
    ftol, gtol : float, default 0.0
        scipy L-BFGS-B's own tests (0: off); one that fires ends the run ``stalled``.
    tolerance_grad, tolerance_change : float, default 0.0
        ``torch.optim.LBFGS``'s own tests (0: off).
    line_search_fn : {"strong_wolfe", None}, default "strong_wolfe"
        torch's line search; ``None`` is a fixed step ``lr = 1``.
    max_iter_per_step : int, default 1
        L-BFGS iterations per ``torch.optim.LBFGS.step()``.
    impl : {"auto", "scipy", "native"}
        ``"auto"``: native on torch, scipy elsewhere (``optax.lbfgs`` only when asked).
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("lbfgs", locals())


register_optimizer(OptimizerInfo(
    name="lbfgs",
    aliases=("l-bfgs", "l-bfgs-b", "lbfgsb", "limited_memory_bfgs"),
    params=by_name(
        HyperParam("history_size", 10, positive_int("history_size"),
                   "number of stored correction pairs (scipy maxcor)"),
        HyperParam("max_linesearch", 20, positive_int("max_linesearch"),
                   "line-search evaluations per iteration (scipy maxls)"),
        HyperParam("ftol", 0.0, positive_float("ftol", allow_zero=True),
                   "scipy's relative-decrease test (0: off)"),
        HyperParam("gtol", 0.0, positive_float("gtol", allow_zero=True),
                   "scipy's projected-gradient test (0: off)"),
        HyperParam("tolerance_grad", 0.0, positive_float("tolerance_grad", allow_zero=True),
                   "torch's gradient test (0: off)"),
        HyperParam("tolerance_change", 0.0, positive_float("tolerance_change", allow_zero=True),
                   "torch's change test (0: off)"),
        HyperParam("line_search_fn", "strong_wolfe", _line_search,
                   "torch's line search: strong_wolfe or None"),
        HyperParam("max_iter_per_step", 1, positive_int("max_iter_per_step"),
                   "L-BFGS iterations per torch step()"),
    ),
    summary="limited-memory BFGS (scipy L-BFGS-B; torch.optim.LBFGS natively on torch)",
    reference="Liu & Nocedal (1989); Byrd, Lu, Nocedal & Zhu (1995)",
    natives=(TorchOptimizer("LBFGS", _torch_options, closure=True),
             OptaxOptimizer("lbfgs", _optax_options, requires=_optax_requires, linesearch=True,
                            auto=False),
             ScipyMinimize("L-BFGS-B", _scipy_options)),
), lbfgs)
