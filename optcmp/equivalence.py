"""Cross-backend equivalence: the same optimizer, step by step, on several backends.

Each backend runs untimed fixed steps, set up by the same :class:`~optcmp.engine.session.Session`
as a timed run, and every step is compared with the first backend's (docs/architecture.md)."""

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
    reference : str
        The first backend that ran, the one the others are compared with.
    backends : list of str
    impls, implementations : dict of str to str
        Each backend's impl and code path (e.g. ``torch.optim.Adadelta(lr=1.0, ...)``).
    skipped : dict of str to str
        Backends that did not run, with the reason.
    fun, x : dict of str to ndarray of float64
        ``f(x_k)`` and the iterates ``x_k``, ``k = 0..steps``, of each backend.
    fun_rel_diff, x_rel_diff : ndarray of float64, shape (steps + 1,)
        Per step, the largest ``|f_b - f_ref| / |f_ref|`` and ``max|x_b - x_ref| / max|x_ref|``.
    tolerance : float
    gradients, executions : dict of str to str
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


def _run_backend(problem: Problem, spec: OptimizerSpec, config: RunConfig,
                 steps: int) -> dict[str, Any] | str:
    """``steps`` untimed steps on ``config.backend`` by field, or why they cannot run there."""
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
        funs = [float(np.asarray(be.to_numpy(vg(be.asarray(x), adapter.data)[0]))) for x in xs]
    short = steps + 1 - len(xs)  # a loop adapter that stopped early: hold its last iterate
    return {"impl": session.impl, "implementation": session.implementation,
            "gradient": adapter.gradient, "execution": adapter.execution,
            "fun": np.asarray(funs + funs[-1:] * short, dtype=np.float64),
            "x": np.vstack([*xs, *xs[-1:] * short])}


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
        Hyperparameters explicit; several specs run as ``"backend#i"``, the first the reference.
    backends : sequence of str, default ("numpy", "torch", "tensorflow")
        The first one installed is the reference.
    steps : int, default 50
    dtype : {"float64", "float32"}, optional
    impl : str or mapping of str to str, optional
        One impl on every backend that has it (``"auto"`` elsewhere), or backend -> impl.
    tolerance : float, optional
        Default 1e-10 (float64), 1e-4 (float32).
    strict : bool, default False
        Raise ``BackendUnavailable`` for a backend not installed (else it is ``skipped``).
    config : RunConfig, optional
        Default ``RunConfig(execution="step")``; stopping rule, budgets and callback unused.
    **overrides
        RunConfig fields replacing the config's (``execution`` ``"step"`` or ``"fused"``).

    Returns
    -------
    EquivalenceResult
        Per-step differences, the verdict, and each backend's impl, gradient and execution.
    """
    check_problem(problem)
    cfg = _config(config, overrides if dtype is None else {**overrides, "dtype": dtype})
    names, tol = _check_inputs(backends, steps, cfg.dtype, tolerance)
    if isinstance(optimizer, (list, tuple)):
        specs = [as_spec(o) for o in optimizer]
        if len(specs) < 2:
            raise ValueError("give one optimizer, or a list of at least two to compare")
        per_run = {f"{b}#{i}": s for i, spec in enumerate(specs)  # "backend#i"
                   for b, s in _specs_per_backend(spec, names, impl).items()}
    else:
        specs = [as_spec(optimizer)]
        per_run = _specs_per_backend(specs[0], names, impl)
    runs, skipped = _run_backends(problem, per_run, int(steps), cfg, strict)
    per = {f: {b: r[f] for b, r in runs.items()}
           for f in ("impl", "implementation", "gradient", "execution", "fun", "x")}
    fdiff, xdiff = _differences([*per["fun"].values()], [*per["x"].values()], int(steps) + 1)
    return EquivalenceResult(
        problem=problem.name, optimizer=specs[0].describe(), dtype=cfg.dtype, steps=int(steps),
        reference=next(iter(runs), ""), backends=list(runs), impls=per["impl"],
        implementations=per["implementation"], skipped=skipped, fun=per["fun"], x=per["x"],
        fun_rel_diff=fdiff, x_rel_diff=xdiff, tolerance=tol, gradients=per["gradient"],
        executions=per["execution"],
    )


#: Run settings a check does not use (it runs a fixed number of steps).
NOT_CHECKED = ("stopping", "tol", "max_iter", "max_time", "max_evals", "max_cpu_time", "repeat",
               "callback", "censor_ratio")


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
                  ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Run each run's spec on its backend; the runs, and the runs skipped with why."""
    runs: dict[str, dict[str, Any]] = {}
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
        except (BackendUnavailable, NotApplicable) as exc:  # NotApplicable: a native of another
            if strict and isinstance(exc, BackendUnavailable):  # convention than the spec's
                raise
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


def _differences(funs: list[np.ndarray], xs: list[np.ndarray],
                 n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per step, the largest relative difference of each backend from the first one."""
    if len(funs) < 2:
        return np.zeros(n), np.zeros(n)
    F, X = np.array(funs), np.array(xs)
    fd = np.abs(F[1:] - F[0]) / np.maximum(np.abs(F[0]), _TINY)
    xd = np.max(np.abs(X[1:] - X[0]), axis=2) / np.maximum(np.max(np.abs(X[0]), axis=1), _TINY)
    return (np.max(np.where(np.isnan(fd), np.inf, fd), axis=0),
            np.max(np.where(np.isnan(xd), np.inf, xd), axis=0))
