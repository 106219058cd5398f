"""A user's objective written once against the ops namespace: :func:`from_function`.

Why numpy needs ``grad`` (never a finite difference): see docs/problems.md, "Your own problem".
Off the clock (gradient norms, ``optimum="estimate"``) a missing ``grad`` comes from autodiff.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from optcmp.frameworks.host import host_value_and_grad
from optcmp.frameworks.numpy.ops import ops as numpy_ops
from optcmp.problems.base import (
    Array,
    Optimum,
    ParamLayout,
    Problem,
    StoredProblem,
    count_rows,
    one_blas_thread,
    read_only,
)
from optcmp.problems.gradcheck import check_gradient

#: Options of the reference solve of ``optimum="estimate"`` (scipy L-BFGS-B, float64).
ESTIMATE_OPTIONS: dict[str, Any] = {"maxcor": 30, "gtol": 1e-10, "ftol": 1e-15,
                                    "maxiter": 100_000, "maxfun": 200_000}


def _check_data(data: Mapping[str, Any] | None, name: str) -> dict[str, np.ndarray]:
    """The training arrays, checked: real numbers, finite floats, one row count."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise TypeError(f"data must be a dict of arrays (rows along axis 0) or None, got "
                        f"{type(data).__name__}")
    out = {}
    for k, v in data.items():
        a = np.asarray(v)
        if not (np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.bool_)) \
                or np.iscomplexobj(a):
            raise ValueError(f"data[{k!r}] must be real numeric, got dtype {a.dtype}")
        if np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer):
            # integers are values (the ops have no indexing op): float64 here and the run's
            # dtype on every backend, so integer data neither fails on torch/TensorFlow (mixed
            # dtypes in one matmul) nor promotes a numpy float32 run to float64
            a = np.array(a, dtype=np.float64, order="C")  # (keeps a 0-d array 0-d)
            if not np.all(np.isfinite(a)):
                raise ValueError(f"data[{k!r}] contains {int((~np.isfinite(a)).sum())} NaN or "
                                 "inf value(s); drop or impute them first")
        out[str(k)] = np.array(a, order="C")
    count_rows(out, name)  # 0-d arrays and mismatched row counts are refused here
    return read_only(out)


def _param_array(what: str, value: Any) -> np.ndarray:
    """``value`` as a float64 array; a ValueError naming ``what`` when it is not numbers."""
    try:
        if np.iscomplexobj(np.asarray(value)):
            raise TypeError("complex")
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be real numbers (an array or a float), got "
                         f"{type(value).__name__} {value!r:.80}") from None


def _layout_and_x0(x0: Any) -> tuple[ParamLayout, Array, bool]:
    """The layout and the flat float64 start of ``x0`` (a vector or a dict of named arrays)."""
    if isinstance(x0, Mapping):
        if not x0:
            raise ValueError("x0 is an empty dict; give at least one named parameter array")
        arrays = {str(k): _param_array(f"x0[{k!r}]", v) for k, v in x0.items()}
        empty = [k for k, a in arrays.items() if a.size == 0]
        if empty:  # an empty array would add no parameter (n_params could be 0)
            raise ValueError(f"x0[{empty[0]!r}] is an empty array; every named parameter needs "
                             "at least one entry")
        layout = ParamLayout(tuple(arrays), tuple(a.shape for a in arrays.values()))
        flat = layout.flatten(arrays)
        named = True
    else:
        flat = _param_array("x0", x0)
        if flat.ndim != 1 or flat.size == 0:
            raise ValueError(f"x0 must be a non-empty 1-D vector or a dict of named arrays, got "
                             f"shape {flat.shape}")
        layout = ParamLayout(("x",), (flat.shape,))
        named = False
    if not np.all(np.isfinite(flat)):
        raise ValueError("x0 contains NaN or inf")
    return layout, flat.copy(), named


class FunctionProblem(StoredProblem):
    r"""A problem from a user's objective ``objective(ops, x, data)``: see :func:`from_function`.

    Parameters
    ----------
    objective, x0, data, grad, optimum, name, default_target, lipschitz
        As in :func:`from_function`.
    """

    reads_only_own_data = False  # user code: f(x0) evaluated by every run

    def __init__(self, objective: Callable[..., Any], x0: Any, data: Mapping[str, Any] | None = None,
                 grad: Callable[..., Any] | None = None, optimum: Any = None,
                 name: str = "function", *, default_target: Any = None,
                 lipschitz: float | None = None) -> None:
        if not callable(objective):
            raise TypeError(f"objective must be callable objective(ops, x, data), got "
                            f"{type(objective).__name__}")
        if grad is not None and not callable(grad):
            raise TypeError(f"grad must be callable grad(x, data) or None, got {type(grad).__name__}")
        _check_signature("objective", objective, "ops, x, data")
        if grad is not None:
            _check_signature("grad", grad, "x, data")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.name = name
        self._fn, self._grad = objective, grad
        #: True when the parameters are named arrays (``x0`` was a dict).
        self._layout, self._x0, self.named = _layout_and_x0(x0)
        self._data = _check_data(data, name)
        self._target = default_target
        if lipschitz is not None and not (isinstance(lipschitz, (int, float))
                                          and math.isfinite(lipschitz) and lipschitz > 0):
            raise ValueError(f"lipschitz must be a positive finite float or None, got {lipschitz!r}")
        self._lipschitz = None if lipschitz is None else float(lipschitz)
        self._optimum_arg = optimum
        self._optimum: Optimum | None = _given_optimum(optimum, self._layout.size)
        self._host: Callable[..., tuple[float, np.ndarray]] | None = None

    def init_params(self, seed: int = 0) -> Array:
        return self._x0.copy()

    def _params(self, ops: Any, x: Any) -> Any:
        return self._layout.unflatten(x, ops) if self.named else x

    def objective(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        return _scalar(self._fn(ops, self._params(ops, x), batch), self.name)

    def value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> tuple[float, np.ndarray]:
        if self._grad is None:
            fun, g = self._host_value_and_grad()(np.asarray(x, dtype=np.float64), batch)
            return fun, np.asarray(g, dtype=x.dtype)
        fun = float(self.objective(numpy_ops, x, batch))
        g = self._grad(self._params(None, x), batch)
        if self.named:
            flat = self._layout.flatten(g)
        else:
            flat = np.asarray(g, dtype=np.float64).reshape(-1)
            if flat.shape != x.shape:
                raise ValueError(f"grad returned shape {np.shape(g)}, expected {x.shape} (the "
                                 "shape of x)")
        return fun, flat.astype(x.dtype, copy=False)

    def _host_value_and_grad(self) -> Callable[..., tuple[float, np.ndarray]]:
        """A framework's float64 CPU autodiff of the objective, made once."""
        if self._host is None:
            host = host_value_and_grad(self.objective)
            if host is None:
                raise NotImplementedError(
                    f"problem {self.name!r} has no analytic gradient and neither PyTorch nor "
                    "TensorFlow is installed to differentiate it: pass grad=... to "
                    "from_function, or pip install -c constraints/ci.txt '.[torch]' in a "
                    "checkout of optcmp")
            self._host = host
        return self._host

    def fun64(self, x: np.ndarray) -> float:
        return float(self.objective(numpy_ops, np.asarray(x, dtype=np.float64), self._data))

    def unsupported_backend(self, backend: str) -> str | None:
        if backend == "numpy" and self._grad is None:
            return (f"problem {self.name!r} has no analytic gradient, and the numpy backend has "
                    "no autodiff: pass grad=lambda x, data: ... (the gradient of the objective "
                    "as a numpy array shaped like x) to optcmp.problems.from_function to run "
                    "it on numpy; torch and tensorflow differentiate the objective themselves")
        return None

    def default_target(self, tol: float | None = None) -> Any:
        return self._target

    def key_inputs(self) -> dict[str, Any]:
        """What else decides this problem's runs, for the run store's key (JSON-able)."""
        from optcmp.fingerprint import code_fingerprint

        opt = self._optimum_arg
        if isinstance(opt, Optimum):
            given: Any = {"fun": opt.fun, "x": None if opt.x is None
                          else code_fingerprint(np.asarray(opt.x, dtype=np.float64))}
        elif opt is None or isinstance(opt, str):
            given = opt
        else:
            given = float(opt)
        target = self._target
        return {"objective": code_fingerprint(self._fn),
                "grad": None if self._grad is None else code_fingerprint(self._grad),
                "optimum": given, "lipschitz": self._lipschitz,
                "default_target": None if target is None else
                (target.to_dict() if hasattr(target, "to_dict") else repr(target))}

    def lipschitz(self) -> float:
        if self._lipschitz is None:
            return super().lipschitz()
        return self._lipschitz

    def optimum(self) -> Optimum | None:
        if self._optimum is None and isinstance(self._optimum_arg, str):
            self._optimum = estimate_optimum(self)
        return self._optimum

    def spec(self) -> dict[str, Any]:
        h = hashlib.sha256(self._x0.tobytes())
        for k in sorted(self._data):
            h.update(k.encode())
            h.update(str(self._data[k].shape).encode())
            h.update(self._data[k].tobytes())
        fn = getattr(self._fn, "__qualname__", type(self._fn).__name__)
        return {"problem": "function", "source": "function", "name": self.name,
                "objective": f"{getattr(self._fn, '__module__', '?')}.{fn}",
                "n_params": self.n_params, "n_samples": self.n_samples,
                "analytic_grad": self._grad is not None,
                "data_fingerprint": h.hexdigest()[:16]}


def _check_signature(what: str, fn: Callable[..., Any], params: str) -> None:
    """Refuse a function that cannot be called with the arguments ``params`` names."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read (some builtins): called as it is
        return
    try:
        sig.bind(*params.split(", "))
    except TypeError as exc:
        raise TypeError(f"{what} must take ({params}), got {getattr(fn, '__name__', what)}"
                        f"{sig} ({exc})") from None


def _scalar(out: Any, name: str) -> Any:
    """``out`` if the objective returned a scalar; else a ValueError naming its shape."""
    shape = getattr(out, "shape", None)
    try:
        dims = () if shape is None else tuple(shape)
    except (TypeError, ValueError):  # a TensorFlow shape of unknown rank: left to TensorFlow
        return out
    if dims:
        raise ValueError(f"the objective of problem {name!r} must return a scalar (the loss), "
                         f"got an array of shape {dims}; reduce it, e.g. with ops.sum(...) or "
                         "ops.mean(...)")
    return out


def _given_optimum(optimum: Any, n: int) -> Optimum | None:
    """The ``optimum`` argument as an :class:`Optimum` (``None`` for none or "estimate")."""
    if optimum is None or isinstance(optimum, Optimum):
        return optimum
    if isinstance(optimum, str):
        if optimum != "estimate":
            raise ValueError(f"optimum must be None, a float (f*), an Optimum or 'estimate', got "
                             f"{optimum!r}")
        return None
    if isinstance(optimum, bool) or not isinstance(optimum, (int, float, np.floating, np.integer)) \
            or not math.isfinite(float(optimum)):
        raise ValueError(f"optimum must be None, a finite float (f*), an Optimum or 'estimate', "
                         f"got {optimum!r}")
    return Optimum(fun=float(optimum), x=None, method="given by the user", time=None, kind="given")


#: Directions of :func:`check_estimate_gradient` (fixed seed: the check does not depend on the run).
GRADIENT_CHECKS = 3


def check_estimate_gradient(problem: Problem, fg: Callable[[np.ndarray], tuple[float, np.ndarray]],
                            x: np.ndarray) -> None:
    """Refuse a gradient ``fg`` whose directional derivatives at ``x`` disagree with central
    differences at two step sizes (a kink near ``x`` is not a wrong gradient)."""
    f0, g = fg(x)
    if not (math.isfinite(f0) and np.all(np.isfinite(g))):
        return  # the solve itself reports a non-finite start
    rng = np.random.default_rng(0)
    scale = max(1.0, float(np.linalg.norm(x)))
    gn = float(np.linalg.norm(g))
    for _ in range(GRADIENT_CHECKS):
        u = rng.standard_normal(x.shape)
        u /= np.linalg.norm(u)
        bad = []
        for h in (6e-6 * scale, 6e-7 * scale):
            fd = (fg(x + h * u)[0] - fg(x - h * u)[0]) / (2 * h)
            dd = float(g @ u)
            tol = 1e-4 * (1.0 + gn + abs(f0) * 2.2e-16 / h)
            bad.append((abs(fd - dd) > tol * max(1.0, abs(fd)), fd, dd))
        if all(b for b, _, _ in bad):
            _, fd, dd = bad[0]
            raise ValueError(
                f"the gradient of problem {getattr(problem, 'name', '?')!r} disagrees with "
                f"finite differences of its objective at the start: along a random direction "
                f"it gives {dd:.6g}, the objective's values give {fd:.6g}; optimum='estimate' "
                "does not trust it. Fix grad= (or leave it out to use a framework's autodiff)")


def estimate_optimum(problem: Problem, x0: np.ndarray | None = None) -> Optimum:
    """``f*`` by a tight reference solve: scipy's L-BFGS-B in float64 from the initial point.

    With :data:`ESTIMATE_OPTIONS`, the problem's numpy gradient and one BLAS thread.

    Parameters
    ----------
    problem : Problem
    x0 : ndarray, optional
        Start of the solve; default ``problem.init_params(0)``.

    Returns
    -------
    Optimum
        ``kind="estimated"``; ``method`` says the options, iterations and scipy's message.
    """
    from optcmp._scipy import optimize

    data = problem.train_data
    start = np.asarray(problem.init_params(0) if x0 is None else x0, dtype=np.float64)

    def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = problem.value_and_grad(np.asarray(x, dtype=np.float64), data)
        return float(f), np.asarray(g, dtype=np.float64)

    with np.errstate(all="ignore"), one_blas_thread():
        check_estimate_gradient(problem, fg, start)
    t0 = time.perf_counter()
    with np.errstate(all="ignore"), one_blas_thread():
        res = optimize().minimize(fg, start, jac=True, method="L-BFGS-B",
                                  options=dict(ESTIMATE_OPTIONS))
    elapsed = time.perf_counter() - t0
    gnorm = float(np.max(np.abs(res.jac))) if res.jac is not None else math.nan
    opts = ", ".join(f"{k}={v:g}" for k, v in ESTIMATE_OPTIONS.items())
    method = (f"scipy L-BFGS-B float64 ({opts}), nit={int(res.nit)}, "
              f"|g|_inf={gnorm:.1e}, {str(res.message)}")
    if not res.success or not math.isfinite(float(res.fun)):  # never a silent, unreliable f*
        warnings.warn(f"the reference solve for the optimum of problem "
                      f"{getattr(problem, 'name', '?')!r} did not converge ({str(res.message)}; "
                      f"f = {float(res.fun):.6g}, |g|_inf = {gnorm:.1e} after {int(res.nit)} "
                      "iterations): f* is unreliable (is the objective bounded below?), and so "
                      "is every suboptimality against it; pass a known optimum=f* or a "
                      "default_target=LossTarget(...) instead", UserWarning, stacklevel=3)
    return Optimum(fun=float(res.fun), x=np.asarray(res.x, dtype=np.float64), method=method,
                   time=elapsed, kind="estimated")


def from_function(objective: Callable[..., Any], x0: Any, data: Mapping[str, Any] | None = None,
                  grad: Callable[..., Any] | None = None, optimum: Any = None, *,
                  name: str = "function", default_target: Any = None,
                  lipschitz: float | None = None,
                  check_grad: bool | str = "auto") -> FunctionProblem:
    """A problem from your own objective, written once against the ops namespace.

    Parameters
    ----------
    objective : callable
        ``objective(ops, x, data) -> scalar`` (:data:`optcmp.frameworks.ops.OPS`). Read ``x``
        and ``data`` only: TensorFlow and JAX reuse compiled programs (a stale constant). A run
        store tells objectives apart by their code and the values they refer to when a sweep
        starts, not by the contents of a module-level container or state changed during a
        sweep (docs/problems.md, "What a run store tells apart"): a warning names the mutable
        state an objective (or ``grad``) closes over or reads.
    x0 : array_like, shape (n,), or dict of str to array_like
        One flat vector, or named arrays (``{"w": zeros(d), "b": 0.0}``).
    data : dict of str to array_like, optional
        Training arrays, rows along axis 0; integers become float64, booleans stay boolean.
        The problem keeps read-only copies.
    grad : callable, optional
        ``grad(x, data) -> array`` (a dict for named parameters): the numpy backend's gradient.
    optimum : float, Optimum or "estimate", optional
        The known ``f*``, or ``"estimate"`` (:func:`estimate_optimum`).
    name : str, default "function"
    default_target : optcmp.stopping.Rule, optional
        The stop when no optimum is known (e.g. ``optcmp.LossTarget(0.1)``).
    lipschitz : float, optional
        Lipschitz constant of the gradient, for ``learning_rate="auto"``.
    check_grad : {"auto", True, False}, default "auto"
        Check ``grad`` once (:func:`~optcmp.problems.gradcheck.check_gradient`); ``"auto"``:
        up to :data:`GRADIENT_CHECK_LIMIT` parameters times samples.

    Returns
    -------
    FunctionProblem
    """
    if check_grad not in ("auto", True, False):
        raise ValueError(f"check_grad must be 'auto', True or False, got {check_grad!r}")
    problem = FunctionProblem(objective, x0, data, grad, optimum, name,
                              default_target=default_target, lipschitz=lipschitz)
    from optcmp.fingerprint import mutable_state

    state = mutable_state(objective) + mutable_state(grad)
    if state:
        warnings.warn(f"the objective of problem {name!r} reads mutable state "
                      f"({', '.join(dict.fromkeys(state))}): a run store tells objectives apart "
                      "by their code and the values they refer to when a sweep starts, so a "
                      "change to that state during a sweep, or to a module-level container at "
                      "any time, is not seen and a stored run may be reused. Pass such values as "
                      "data=..., or as constants", UserWarning, stacklevel=2)
    cheap = problem.n_params * max(1, problem.n_samples) <= GRADIENT_CHECK_LIMIT
    if grad is not None and (check_grad is True or (check_grad == "auto" and cheap)):
        check_gradient(problem, raise_on_failure=True)
    return problem


#: ``check_grad="auto"`` checks a problem with at most this many parameters times samples.
GRADIENT_CHECK_LIMIT = 100_000


__all__ = ["ESTIMATE_OPTIONS", "GRADIENT_CHECK_LIMIT", "FunctionProblem", "estimate_optimum", "from_function"]
