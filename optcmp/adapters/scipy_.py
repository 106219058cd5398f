r"""scipy adapter: an optimizer's :class:`~optcmp.optimizers.base.ScipyMinimize`, on any backend.

``scipy.optimize.minimize(method=..., jac=True)`` gets the backend's objective and gradient
through a float64 bridge: the iterate is converted to the backend (and its device) and the
gradient back to float64 on every evaluation, and that transfer is timed, because it is part of
what running scipy on that backend costs. optcmp's stopping rule is checked in scipy's
``callback`` after every iteration and stops the run with ``StopIteration``; the declaration
switches scipy's own convergence tests off, so that scipy's ``success`` never counts as reaching
the target. optcmp's iteration and evaluation budgets are passed to scipy as the options the
declaration names (``maxiter`` and ``maxfun`` for L-BFGS-B); ``nfev`` and ``njev`` are the
evaluations actually spent, which can exceed ``maxfun`` because scipy finishes the current
iteration before it checks that limit (scipy/scipy#14818).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optcmp._scipy import optimize
from optcmp.adapters.base import LoopAdapter
from optcmp.backends.numpy_ import norm2
from optcmp.optimizers.base import ScipyMinimize

#: Stand-in for "no limit" in scipy's integer options.
_UNLIMITED = 2**31 - 1


class ScipyAdapter(LoopAdapter):
    """``scipy.optimize.minimize(method=<name>)`` on any backend through a float64 bridge.

    Built like :class:`~optcmp.adapters.base.Adapter`; the spec's optimizer must declare a
    :class:`~optcmp.optimizers.base.ScipyMinimize`.
    """

    framework = "scipy"
    describes = "scipy.optimize.minimize(method='{name}')"
    decl: ScipyMinimize

    def setup(self) -> None:
        super().setup()
        self._minimize = optimize().minimize  # imported here: never inside the timed run
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

    def _run_options(self, monitor: Any) -> dict[str, Any]:
        """The declaration's options plus optcmp's budgets (scipy enforces them)."""
        budgets = monitor.delegate_budgets()
        opts = self._options()
        opts[self.decl.max_iter_option] = int(budgets.get("max_iter") or _UNLIMITED)
        opts[self.decl.max_evals_option] = int(budgets.get("max_evals") or _UNLIMITED)
        return opts

    def run(self, monitor: Any) -> dict[str, Any]:
        options = self._run_options(monitor)
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

        res = self._minimize(self._fun, self.x0.copy(), jac=True, method=self.decl.name,
                       callback=callback, options=options)
        self._x = np.asarray(res.x, dtype=np.float64).copy()
        msg = str(res.message)
        # scipy's own verdict is recorded, never taken as reaching optcmp's target
        return {"status": None if monitor.stopped else _status(msg),
                "message": f"scipy: {msg} (scipy success={bool(res.success)})", "nit": int(res.nit), "nfev": self.nfev,
                "njev": self.nfev}

    def x_numpy(self) -> np.ndarray:
        return self._x.copy()


def _status(message: str) -> str:
    """optcmp's status for a scipy run that stopped by itself (budget or no progress)."""
    msg = message.upper()
    if "ITERATIONS REACHED LIMIT" in msg:
        return "max_iter"
    if "EVALUATIONS EXCEEDS LIMIT" in msg:
        return "max_evals"
    return "stalled"
