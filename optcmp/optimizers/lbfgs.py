r"""Limited-memory BFGS: scipy's L-BFGS-B on any backend, and ``torch.optim.LBFGS`` on torch.

The scipy adapter calls ``scipy.optimize.minimize(method="L-BFGS-B", jac=True)`` with the
backend's objective and gradient through a float64 bridge: the iterate is converted to the
backend (and its device) and the gradient back to float64 on every evaluation, and that transfer
is timed, because it is part of what running scipy on that backend costs. optcmp's stopping rule
is checked in scipy's ``callback`` after every iteration and stops the run with
``StopIteration``; scipy's own convergence tests are switched off (``ftol = gtol = 0``) so that
scipy's ``success`` never counts as reaching the target. optcmp's iteration and evaluation
budgets are passed to scipy as ``maxiter`` and ``maxfun`` together; ``nfev`` and ``njev`` are
the evaluations actually spent, which can exceed ``maxfun`` because scipy finishes the current
iteration before it checks that limit (scipy/scipy#14818).

References
----------
D. C. Liu and J. Nocedal, "On the limited memory BFGS method for large scale optimization",
Math. Programming 45, 1989.
R. H. Byrd, P. Lu, J. Nocedal and C. Zhu, "A limited memory algorithm for bound constrained
optimization", SIAM J. Sci. Comput. 16(5), 1995.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optcmp.backends.numpy_ import norm2
from optcmp.optimizers.base import (
    HyperParam,
    LoopAdapter,
    OptimizerInfo,
    OptimizerSpec,
    get_optimizer,
    positive_int,
    register_adapter,
    register_optimizer,
)

#: Stand-in for "no limit" in scipy's integer options.
_UNLIMITED = 2**31 - 1


class ScipyLBFGSB(LoopAdapter):
    """``scipy.optimize.minimize(method="L-BFGS-B")`` on any backend through a float64 bridge."""

    implementation = "scipy.optimize.minimize(method='L-BFGS-B')"

    def setup(self) -> None:
        super().setup()
        self._vg = self.backend.make_value_and_grad(self.problem)
        self._x = self.x0.copy()
        self.nfev = 0
        self._last: tuple[np.ndarray | None, np.ndarray | None] = (None, None)

    def _fun(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        b = self.backend
        f, g = self._vg(b.asarray(x), self.data)
        g64 = np.asarray(b.to_numpy(g), dtype=np.float64).reshape(-1)
        self.nfev += 1
        self._last = (x, g64)
        return float(f), g64

    def warmup(self) -> float:
        t0 = time.perf_counter()
        f, g = self._vg(self.backend.asarray(self.x0), self.data)
        self.backend.to_numpy(g)
        self.backend.sync()
        return time.perf_counter() - t0

    def run(self, monitor: Any) -> dict[str, Any]:
        from scipy.optimize import minimize

        budgets = monitor.delegate_budgets()
        maxiter = budgets.get("max_iter") or _UNLIMITED
        maxfun = budgets.get("max_evals") or _UNLIMITED
        self._last = (None, None)

        def callback(intermediate_result: Any) -> None:
            x = intermediate_result.x
            self._x = np.array(x, dtype=np.float64, copy=True)
            lx, lg = self._last
            gnorm = (norm2(lg)
                     if lx is not None and lg is not None and np.array_equal(lx, x) else None)
            if monitor.on_iteration(fun=float(intermediate_result.fun), grad_norm=gnorm,
                                    nfev=self.nfev, njev=self.nfev, x=self._x):
                raise StopIteration

        res = minimize(
            self._fun, self.x0.copy(), jac=True, method="L-BFGS-B", callback=callback,
            options={"maxcor": int(self.hyper["history_size"]), "maxiter": int(maxiter),
                     "maxfun": int(maxfun), "maxls": int(self.hyper["max_linesearch"]),
                     "ftol": 0.0, "gtol": 0.0},
        )
        self._x = np.asarray(res.x, dtype=np.float64).copy()
        msg = str(res.message)
        status: str | None
        if monitor.stopped:
            status = None
        elif "ITERATIONS REACHED LIMIT" in msg.upper():
            status = "max_iter"
        elif "EVALUATIONS EXCEEDS LIMIT" in msg.upper():
            status = "max_evals"
        else:
            status = "stalled"
        return {"status": status, "message": f"scipy: {msg}", "nit": int(res.nit),
                "nfev": self.nfev, "njev": self.nfev}

    def x_numpy(self) -> np.ndarray:
        return self._x.copy()


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
))
for _b in ("numpy", "torch", "tensorflow"):
    register_adapter("lbfgs", _b, "scipy", ScipyLBFGSB)
# torch.optim.LBFGS, imported only when a run needs it; "auto" prefers it on torch
register_adapter("lbfgs", "torch", "native", "optcmp.optimizers.torch_native:TorchLBFGS",
                 prefer=True)


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
        :class:`optcmp.optimizers.torch_native.TorchLBFGS`). ``"auto"``: native on torch,
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


lbfgs._optcmp_optimizer = "lbfgs"  # type: ignore[attr-defined]
