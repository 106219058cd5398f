r"""scipy adapter: an optimizer's :class:`~optcmp.optimizers.ScipyMinimize`, on any backend.

``scipy.optimize.minimize(method=..., jac=True)`` gets the backend's objective and gradient
through a float64 bridge: the iterate is converted to the backend (and its device) and the
gradient back to float64 on every evaluation, and that transfer is timed, because it is part of
what running scipy on that backend costs. optcmp's stopping rule is checked in scipy's
``callback`` after every iteration and stops the run with ``StopIteration``; the declaration
switches scipy's own convergence tests off, so that scipy's ``success`` never counts as reaching
the target (it is recorded in the message). Methods that take Hessian-vector products
(``hessp``: Newton-CG, trust-ncg, trust-krylov) get them from the backend's autodiff
(:func:`hvp_function`, counted in ``njev``); methods that need the full Hessian (trust-exact,
dogleg) get it built from ``n_params`` such products; derivative-free methods (Nelder-Mead,
Powell) get the objective alone. optcmp's iteration and evaluation budgets are passed to scipy as the options the
declaration names (``maxiter`` and ``maxfun`` for L-BFGS-B); ``nfev`` and ``njev`` are the
evaluations actually spent, which can exceed ``maxfun`` because scipy finishes the current
iteration before it checks that limit (scipy/scipy#14818).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optcmp._scipy import optimize
from optcmp.frameworks.numpy.ops import norm2
from optcmp.frameworks.stepper import LoopAdapter
from optcmp.implementation import Implementation
from optcmp.optimizers import ScipyMinimize
from optcmp.optimizers.base import NotApplicable

#: Stand-in for "no limit" in scipy's integer options.
_UNLIMITED = 2**31 - 1
#: Largest problem whose full Hessian is built from Hessian-vector products (methods taking
#: ``hess``: one product per parameter and iteration).
MAX_HESSIAN_PARAMS = 2000


def hvp_function(backend: Any, problem: Any, data: Any, method: str) -> Any:
    """``hvp(x, v) -> H(x) v`` (float64 numpy) from the backend's autodiff."""
    hvp = backend.hessian_vector_product(problem, data)
    if hvp is not None:
        return hvp
    raise NotApplicable(
        f"scipy method {method!r} needs Hessian-vector products, which optcmp computes by "
        f"autodiff; backend {backend.name!r} has none: run it on torch or tensorflow")


class ScipyAdapter(LoopAdapter):
    """``scipy.optimize.minimize(method=<name>)`` on any backend through a float64 bridge.

    Built like :class:`~optcmp.frameworks.stepper.Adapter`; the spec's optimizer must declare a
    :class:`~optcmp.optimizers.ScipyMinimize`. The data stay row-major: scipy's line-search
    paths follow the last bit of every product, and the bridge's round trips dominate a step.
    """

    reads_transposed = False

    framework = "scipy"
    describes = "scipy.optimize.minimize(method='{name}')"
    decl: ScipyMinimize

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        method = self.decl.planned(self.hyper)["method"]  # one declaration runs many methods
        self.implementation = self.describes.format(name=method)
        self.implemented_by = Implementation("scipy", "minimize", method)

    def setup(self) -> None:
        super().setup()
        self._minimize = optimize().minimize  # imported here: never inside the timed run
        plan = self.decl.planned(self.hyper)
        self._method: str = plan["method"]
        self._deriv: str = plan["derivatives"]
        self._budget_names = (plan["max_iter_option"], plan["max_evals_option"])
        self.implementation = f"scipy.optimize.minimize(method={self._method!r})"
        self.implemented_by = Implementation("scipy", "minimize", self._method)
        self._vg = self.backend.make_value_and_grad(self.problem, self.gradient, self.data)
        self._hvp = None
        if self._deriv in ("hessp", "hess"):
            self._hvp = hvp_function(self.backend, self.problem, self.data, self._method)
            if self._deriv == "hess" and self.problem.n_params > MAX_HESSIAN_PARAMS:
                raise NotApplicable(
                    f"scipy method {self._method!r} needs the full Hessian; optcmp builds it "
                    f"from {self.problem.n_params} Hessian-vector products only up to "
                    f"{MAX_HESSIAN_PARAMS} parameters: use 'trust-ncg' or 'trust-krylov', "
                    "which take Hessian-vector products")
        self._x = self.x0.copy()
        self.nfev = 0
        self.njev = 0
        self._last: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
        self._last_f: tuple[np.ndarray | None, float] = (None, float("nan"))

    def _fun(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        b = self.backend
        f, g = self._vg(b.asarray(x), self.data)
        g64 = np.asarray(b.to_numpy(g), dtype=np.float64).reshape(-1)
        self.nfev += 1
        self.njev += 1
        self._last = (x, g64)
        self._last_f = (x, float(f))
        return float(f), g64

    def _f(self, x: np.ndarray) -> float:
        """The objective alone (derivative-free methods: no gradient is computed)."""
        b = self.backend
        f = float(np.asarray(b.to_numpy(self.problem.objective(b.ops, b.asarray(x),
                                                                self.data))))
        self.nfev += 1
        self._last_f = (np.array(x, copy=True), f)
        return f

    def _hessp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessian-vector product from autodiff (counted in ``njev``: one more reverse pass)."""
        assert self._hvp is not None
        self.njev += 1
        return self._hvp(x, v)

    def _hess(self, x: np.ndarray) -> np.ndarray:
        """The full Hessian, column by column from Hessian-vector products."""
        n = x.shape[0]
        eye = np.eye(n)
        H = np.column_stack([self._hessp(x, eye[:, i]) for i in range(n)])
        return 0.5 * (H + H.T)

    def warmup(self) -> float:
        t0 = time.perf_counter()
        f, g = self._vg(self.backend.asarray(self.x0), self.data)
        self.backend.to_numpy(g)
        self.backend.sync()
        return time.perf_counter() - t0

    def _run_options(self, monitor: Any) -> dict[str, Any]:
        """The declaration's options plus optcmp's budgets (scipy enforces them where the
        method has the option; optcmp's monitor enforces them in every case)."""
        budgets = monitor.delegate_budgets()
        opts = self._options()
        it_name, ev_name = self._budget_names
        if it_name is not None:
            opts[it_name] = int(budgets.get("max_iter") or _UNLIMITED)
        if ev_name is not None:
            opts[ev_name] = int(budgets.get("max_evals") or _UNLIMITED)
        return opts

    def _fun_at(self, x: np.ndarray) -> float:
        """f at an iterate scipy reports without its value (TNC's callback passes only x)."""
        lx, lf = self._last_f
        if lx is not None and np.array_equal(lx, x):
            return lf
        return self._f(x)

    def minimize(self, monitor: Any) -> dict[str, Any]:
        options = self._run_options(monitor)
        self._last = (None, None)
        self._nit_seen = 0

        def callback(intermediate_result: Any) -> None:
            if isinstance(intermediate_result, np.ndarray):  # TNC: x only
                x = intermediate_result
                fun = self._fun_at(np.asarray(x, dtype=np.float64))
            else:
                x, fun = intermediate_result.x, float(intermediate_result.fun)
            self._x = np.array(x, dtype=np.float64, copy=True)
            self._nit_seen += 1
            lx, lg = self._last
            gnorm = (norm2(lg)
                     if lx is not None and lg is not None and np.array_equal(lx, x) else None)
            if monitor.on_iteration(fun=fun, grad_norm=gnorm, nfev=self.nfev, njev=self.njev,
                                    x=self._x):
                raise StopIteration

        kw: dict[str, Any] = {}
        if self._deriv == "hessp":
            kw["hessp"] = self._hessp
        elif self._deriv == "hess":
            kw["hess"] = self._hess
        fun, jac = (self._f, None) if self._deriv == "none" else (self._fun, True)
        try:
            res = self._minimize(fun, self.x0.copy(), jac=jac, method=self._method,
                                 callback=callback, options=options, **kw)
        except StopIteration:  # methods with an x-only callback (TNC) do not catch it
            return {"status": None, "message": f"scipy: stopped by optcmp ({self._method})",
                    "nit": self._nit_seen, "nfev": self.nfev, "njev": self.njev}
        self._x = np.asarray(res.x, dtype=np.float64).copy()
        msg = str(res.message)
        # scipy's own verdict is recorded, never taken as reaching optcmp's target
        return {"status": None if monitor.stopped else _status(msg),
                "message": f"scipy: {msg} (scipy success={bool(res.success)})",
                "nit": int(getattr(res, "nit", self._nit_seen)), "nfev": self.nfev,
                "njev": self.njev}

    def x_numpy(self) -> np.ndarray:
        return self._x.copy()


def _status(message: str) -> str:
    """optcmp's status for a scipy run that stopped by itself (budget or no progress)."""
    msg = message.upper()
    if any(t in msg for t in ("ITERATIONS REACHED LIMIT", "NUMBER OF ITERATIONS HAS BEEN",
                              "ITERATION LIMIT REACHED")):
        return "max_iter"
    if any(t in msg for t in ("EVALUATIONS EXCEEDS LIMIT", "FUNCTION EVALUATIONS HAS BEEN",
                              "NUMBER OF FUNCTION EVALUATIONS REACHED")):
        return "max_evals"
    return "stalled"
