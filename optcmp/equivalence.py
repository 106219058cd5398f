"""Cross-backend equivalence: the same optimizer, step by step, on several backends.

:func:`check_equivalence` runs one optimizer spec for a fixed number of iterations on each
backend from the same float64 initial point, on the same data and the same minibatch sequence,
and measures after every iteration how far each backend's objective value and iterate are from
the first backend's (the reference, numpy by default). Nothing is timed. Each backend is set up
by the same :class:`~optcmp.engine.session.Session` as a timed run, so the run's settings (dtype,
device, seed, threads, execution mode, gradient) act on it exactly as they act on a run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import optcmp.frameworks as backends_mod
from optcmp.engine.checks import check_problem
from optcmp.engine.config import RunConfig, configured
from optcmp.engine.drivers import record_fixed_steps
from optcmp.engine.session import Session
from optcmp.frameworks import BackendUnavailable, canonical_backend, get_backend
from optcmp.optimizers.base import (
    IMPLS,
    NotApplicable,
    OptimizerSpec,
    as_spec,
    optimizer_info,
    resolve_impl,
)
from optcmp.problems.base import Problem

#: Default verdict tolerance (largest relative difference) per dtype.
DEFAULT_TOLERANCE = {"float64": 1e-10, "float32": 1e-4}

_TINY = np.finfo(np.float64).tiny


@dataclass
class EquivalenceResult:
    """Per-step agreement of one optimizer across backends; ``bool(result)`` is :attr:`passed`.

    Attributes
    ----------
    problem, optimizer : str
        Problem name and ``spec.describe()``.
    dtype : str
    steps : int
        Iterations run on each backend.
    reference : str
        The backend the others are compared with (the first one that ran).
    backends : list of str
        Backends that ran, reference first.
    impls, implementations : dict of str to str
        Each backend's impl (``"native"``, ``"reference"``, ``"scipy"``) and code path
        (e.g. ``torch.optim.Adadelta(lr=1.0, ...)``).
    skipped : dict of str to str
        Backends that did not run, with the reason.
    fun : dict of str to ndarray of float64, shape (steps + 1,)
        Objective ``f(x_k)``, ``k = 0..steps``, computed by each backend at its own iterate.
    x : dict of str to ndarray of float64, shape (steps + 1, n_params)
        Iterates ``x_k`` copied to the host.
    fun_rel_diff, x_rel_diff : ndarray of float64, shape (steps + 1,)
        Per step, the largest over backends of ``|f_b - f_ref| / |f_ref|``, and of
        ``max|x_b - x_ref| / max|x_ref|`` (norm-wise: a coordinate crossing zero is harmless).
    tolerance : float
        Verdict threshold on the largest relative difference.
    gradients, executions : dict of str to str
        Each backend's gradient (``"analytic"`` or ``"autodiff"``) and execution mode
        (``"step"`` or ``"fused"``).
    """

    problem: str
    optimizer: str
    dtype: str
    steps: int
    reference: str
    backends: list[str]
    impls: dict[str, str]
    implementations: dict[str, str]
    skipped: dict[str, str]
    fun: dict[str, np.ndarray]
    x: dict[str, np.ndarray]
    fun_rel_diff: np.ndarray
    x_rel_diff: np.ndarray
    tolerance: float
    gradients: dict[str, str] = field(default_factory=dict)
    executions: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def max_fun_rel_diff(self) -> float:
        """Largest relative difference of the objective over all steps and backends."""
        return float(np.max(self.fun_rel_diff)) if self.fun_rel_diff.size else 0.0

    @property
    def max_x_rel_diff(self) -> float:
        """Largest relative difference of the iterate over all steps and backends."""
        return float(np.max(self.x_rel_diff)) if self.x_rel_diff.size else 0.0

    @property
    def max_rel_diff(self) -> float:
        """``max(max_fun_rel_diff, max_x_rel_diff)`` (NaN if a backend produced NaN)."""
        a, b = self.max_fun_rel_diff, self.max_x_rel_diff
        return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)

    @property
    def passed(self) -> bool:
        """At least two backends ran and every difference is within :attr:`tolerance`."""
        m = self.max_rel_diff
        return len(self.backends) >= 2 and not math.isnan(m) and m <= self.tolerance

    @property
    def verdict(self) -> str:
        """``"equivalent"``, ``"different"`` or ``"inconclusive"`` (fewer than two backends)."""
        if len(self.backends) < 2:
            return "inconclusive"
        return "equivalent" if self.passed else "different"

    def first_step_above(self, tol: float | None = None) -> int | None:
        """First step whose difference exceeds ``tol`` (default :attr:`tolerance`), or None."""
        t = self.tolerance if tol is None else tol
        d = np.fmax(self.fun_rel_diff, self.x_rel_diff)
        bad = np.flatnonzero(~(d <= t))
        return int(bad[0]) if bad.size else None

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        head = (f"{self.optimizer} on {self.problem}, {self.dtype}, {self.steps} steps: "
                f"{self.verdict} (max relative difference {self.max_rel_diff:.3g}, "
                f"tolerance {self.tolerance:.3g}; objective {self.max_fun_rel_diff:.3g}, "
                f"iterate {self.max_x_rel_diff:.3g}; reference {self.reference})")
        ran = [f"  {b}: {self.impls[b]} ({self.implementations[b]})" for b in self.backends]
        skipped = [f"  {b}: skipped ({why})" for b, why in self.skipped.items()]
        return "\n".join([head, *ran, *skipped])


@dataclass
class BackendRun:
    """One backend's fixed steps (see :class:`EquivalenceResult`)."""

    impl: str
    implementation: str
    gradient: str
    execution: str
    fun: np.ndarray
    x: np.ndarray


def _run_backend(problem: Problem, spec: OptimizerSpec, config: RunConfig,
                 steps: int) -> BackendRun | str:
    """``steps`` untimed steps on ``config.backend``, or why the problem cannot run there."""
    session = Session(problem, spec, config)
    if session.unsupported is not None:
        return session.unsupported
    with session.limits():
        be = session.open_backend()
        if session.unsupported is not None:
            return session.unsupported
        try:
            adapter = session.start()
            xs = record_fixed_steps(adapter, steps)
        finally:
            session.release()
        vg = be.make_value_and_grad(problem, adapter.gradient)
        data = adapter.data
        funs = [float(np.asarray(be.to_numpy(vg(be.asarray(x), data)[0]))) for x in xs]
    X = np.vstack(xs)
    if X.shape[0] < steps + 1:  # a loop adapter that stopped early: hold its last iterate
        pad = np.repeat(X[-1:], steps + 1 - X.shape[0], axis=0)
        X = np.vstack([X, pad])
        funs += [funs[-1]] * (steps + 1 - len(funs))
    return BackendRun(session.impl, session.implementation, adapter.gradient,
                      adapter.execution, np.asarray(funs, dtype=np.float64), X)


def check_equivalence(
    problem: Problem, optimizer: OptimizerSpec | str | Callable[..., OptimizerSpec],
    backends: Sequence[str] = ("numpy", "torch", "tensorflow"), steps: int = 50,
    dtype: str | None = None, impl: str | Mapping[str, str] | None = None, *,
    tolerance: float | None = None, strict: bool = False, config: RunConfig | None = None,
    **overrides: Any,
) -> EquivalenceResult:
    """Run ``optimizer`` for ``steps`` iterations on each backend and compare them step by step.

    Parameters
    ----------
    problem : Problem
    optimizer : OptimizerSpec, factory or str, or a list of them
        Every hyperparameter explicit, e.g. ``optcmp.adadelta(learning_rate=1.0, rho=0.9)``.
        Two or more specs each run on every backend, labelled ``"backend#i"`` (``i`` the spec's
        position), the first run the reference.
    backends : sequence of str, default ("numpy", "torch", "tensorflow")
        The first one that is installed is the reference.
    steps : int, default 50
    dtype : {"float64", "float32"}, optional
    impl : str or mapping of str to str, optional
        One impl (``"native"``, ``"reference"``, ``"scipy"``) on every backend that has it,
        ``"auto"`` on the others, or a mapping backend -> impl. Default: ``spec.impl``.
    tolerance : float, optional
        Largest relative difference of the verdict; default 1e-10 (float64), 1e-4 (float32).
    strict : bool, default False
        Raise ``BackendUnavailable`` for a backend not installed (else it is ``skipped``).
    config : RunConfig, optional
        The run settings (``"auto"`` execution means ``"step"``); the stopping rule, budgets
        and callback do not apply. Default: ``RunConfig(execution="step")``.
    **overrides
        RunConfig fields replacing the config's, e.g. ``device="cuda"``, ``seed=1`` or
        ``execution="fused"`` (``"step"`` or ``"fused"``).

    Returns
    -------
    EquivalenceResult
        Per-step differences, the verdict, and each backend's impl, gradient and execution.

    Raises
    ------
    ValueError
        A bad ``steps``, dtype, seed, backend name, ``impl`` or ``execution``; no backend.
    TypeError
        ``config`` is no RunConfig, or an override is no run setting.
    BackendUnavailable
        With ``strict=True``, a backend that is not installed.

    Examples
    --------
    >>> import optcmp
    >>> p = optcmp.problems.LinearRegression(n_samples=1000)
    >>> res = optcmp.check_equivalence(p, optcmp.gd(0.01), backends=("numpy",), steps=5)
    >>> res.verdict
    'inconclusive'
    """
    check_problem(problem)
    cfg = _config(config, overrides if dtype is None else {**overrides, "dtype": dtype})
    names, tol = _check_inputs(backends, steps, cfg.dtype, tolerance)
    spec, per_run = _specs_and_runs(optimizer, names, impl)
    runs, skipped = _run_backends(problem, per_run, int(steps), cfg, strict)
    return _result(problem, spec, cfg.dtype, int(steps), runs, skipped, tol)


def _config(config: RunConfig | None, overrides: Mapping[str, Any]) -> RunConfig:
    """The check's run settings: ``config`` with the overrides, without a callback."""
    execution = overrides.get("execution")
    if execution is not None and execution not in ("step", "fused"):
        raise ValueError(f"execution must be 'step' or 'fused', got {execution!r}")
    if "backend" in overrides:
        raise TypeError("check_equivalence() takes backends=(...), not backend=")
    unused = [k for k in overrides if k in NOT_CHECKED]
    if unused:  # a check runs a fixed number of steps: a target, budget or callback is moot
        raise TypeError(f"check_equivalence() runs steps=N without a stopping rule, budget or "
                        f"callback; {', '.join(map(repr, unused))} do not apply (the verdict's "
                        "threshold is tolerance=)")
    base = RunConfig(execution="step") if config is None else config
    cfg = configured(base, overrides, "check_equivalence")
    if cfg.execution == "auto":  # the config's default: the check's own default, "step"
        cfg = cfg.replace(execution="step")
    return cfg if cfg.callback is None else cfg.replace(callback=None)


#: Run settings a check does not use (it runs a fixed number of steps).
NOT_CHECKED = ("stopping", "tol", "max_iter", "max_time", "max_evals", "max_cpu_time", "repeat",
               "callback", "censor_ratio")


def _result(problem: Problem, spec: OptimizerSpec, dtype: str, steps: int,
            runs: dict[str, BackendRun], skipped: dict[str, str],
            tol: float) -> EquivalenceResult:
    """The :class:`EquivalenceResult` of the runs (the first one is the reference)."""
    per = {f: {b: getattr(r, f) for b, r in runs.items()}
           for f in ("impl", "implementation", "gradient", "execution", "fun", "x")}
    fdiff, xdiff = _differences(per["fun"], per["x"], steps + 1)
    return EquivalenceResult(
        problem=problem.name, optimizer=spec.describe(), dtype=dtype, steps=steps,
        reference=next(iter(runs), ""), backends=list(runs), impls=per["impl"],
        implementations=per["implementation"], skipped=skipped, fun=per["fun"], x=per["x"],
        fun_rel_diff=fdiff, x_rel_diff=xdiff, tolerance=tol, gradients=per["gradient"],
        executions=per["execution"],
    )


def _specs_and_runs(optimizer: Any, names: list[str],
                    impl: Any) -> tuple[OptimizerSpec, dict[str, OptimizerSpec]]:
    """The (first) spec and the spec of each run."""
    if isinstance(optimizer, (list, tuple)):
        specs = [as_spec(o) for o in optimizer]
        if len(specs) < 2:
            raise ValueError("give one optimizer, or a list of at least two to compare")
        return specs[0], {f"{b}#{i}": s for i, spec in enumerate(specs)  # "backend#i"
                          for b, s in _specs_per_backend(spec, names, impl).items()}
    spec = as_spec(optimizer)
    return spec, _specs_per_backend(spec, names, impl)


def _check_inputs(backends: str | Sequence[str], steps: Any, dtype: str,
                  tolerance: Any) -> tuple[list[str], float]:
    """The canonical backend names (reference first) and the tolerance; bad values raise."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    if isinstance(backends, str):
        backends = (backends_mod.available_backends() if backends.strip().lower() == "all"
                    else [b for b in backends.split(",") if b.strip()])
    names = list(dict.fromkeys(canonical_backend(b) for b in backends))
    if not names:
        raise ValueError("backends is empty; give at least one of numpy, torch, tensorflow")
    try:
        tol = DEFAULT_TOLERANCE[dtype] if tolerance is None else float(tolerance)
    except (TypeError, ValueError):
        tol = math.nan
    if not tol > 0:
        raise ValueError(f"tolerance must be a number > 0, got {tolerance!r}")
    return names, tol


def _run_backends(problem: Problem, per_run: dict[str, OptimizerSpec], steps: int,
                  config: RunConfig, strict: bool,
                  ) -> tuple[dict[str, BackendRun], dict[str, str]]:
    """Run each run's spec on its backend; the runs, and the runs skipped with why."""
    runs: dict[str, BackendRun] = {}
    skipped: dict[str, str] = {}
    for b, spec in per_run.items():
        name = b.partition("#")[0]
        if not backends_mod.is_available(name):
            if strict:
                get_backend(name)
            skipped[b] = f"backend {b!r} is not installed"
            continue
        try:
            out = _run_backend(problem, spec, config.replace(backend=name), steps)
        except BackendUnavailable as exc:
            if strict:
                raise
            out = str(exc)
        except NotApplicable as exc:  # a native of another convention than the spec's
            out = str(exc)
        if isinstance(out, str):
            skipped[b] = out
        else:
            runs[b] = out
    return runs, skipped


def _specs_per_backend(spec: OptimizerSpec, names: list[str],
                       impl: str | Mapping[str, str] | None) -> dict[str, OptimizerSpec]:
    """The spec each backend runs: the asked-for impl where the backend has it, else "auto"."""
    _check_impl(impl, names)
    info = optimizer_info(spec.name)
    per_backend: dict[str, OptimizerSpec] = {}
    for b in names:
        want = impl.get(canonical_backend(b), impl.get(b)) if isinstance(impl, Mapping) else impl
        if want is None:
            per_backend[b] = spec
        elif want in info.implementations(b) or want == "auto":
            per_backend[b] = OptimizerSpec(spec.name, spec.hyperparameters, want, spec.label)
        elif isinstance(impl, Mapping):
            resolve_impl(OptimizerSpec(spec.name, spec.hyperparameters, want), b)  # raises
        else:
            per_backend[b] = OptimizerSpec(spec.name, spec.hyperparameters, "auto", spec.label)
    if isinstance(impl, str) and impl != "auto" and not any(
            impl in info.implementations(b) for b in names):
        raise ValueError(f"optimizer {spec.name!r} has impl={impl!r} on none of the backends "
                         f"{names}")
    return per_backend


def _check_impl(impl: Any, names: list[str]) -> None:
    """``impl`` is None, one of :data:`~optcmp.optimizers.base.IMPLS`, or a mapping of them."""
    allowed = f"None, one of {IMPLS} or a mapping backend -> impl"
    if impl is None or (isinstance(impl, str) and impl in IMPLS):
        return
    if isinstance(impl, str) or not isinstance(impl, Mapping):
        raise ValueError(f"impl must be {allowed}, got {impl!r}")
    for b, v in impl.items():
        if canonical_backend(b) not in names:
            raise ValueError(f"impl names backend {b!r}, which is not among the backends "
                             f"{names}")
        if v not in IMPLS:
            raise ValueError(f"impl for backend {b!r} must be one of {IMPLS}, got {v!r}")


def _differences(funs: dict[str, np.ndarray], xs: dict[str, np.ndarray],
                 n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per step, the largest relative difference of each backend from the first one."""
    fdiff, xdiff = np.zeros(n), np.zeros(n)
    if not funs:
        return fdiff, xdiff
    ref, *others = funs
    fr, Xr = funs[ref], xs[ref]
    fden = np.maximum(np.abs(fr), _TINY)
    xden = np.maximum(np.max(np.abs(Xr), axis=1), _TINY)
    for b in others:
        fd = np.abs(funs[b] - fr) / fden
        xd = np.max(np.abs(xs[b] - Xr), axis=1) / xden
        fdiff = np.fmax(fdiff, np.where(np.isnan(fd), np.inf, fd))
        xdiff = np.fmax(xdiff, np.where(np.isnan(xd), np.inf, xd))
    return fdiff, xdiff
