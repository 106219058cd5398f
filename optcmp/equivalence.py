"""Cross-backend equivalence: the same optimizer, step by step, on several backends.

Each backend runs untimed fixed steps, set up by the same :class:`~optcmp.engine.session.Session`
as a timed run, and every step is compared with the first backend's (docs/architecture.md)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

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
        vg = be.make_value_and_grad(problem, adapter.gradient, adapter.data)
        funs = [float(np.asarray(be.to_numpy(vg(be.asarray(x), adapter.data)[0]))) for x in xs]
    short = steps + 1 - len(xs)  # a loop adapter that stopped early: hold its last iterate
    return {"impl": session.impl, "implementation": session.implementation,
            "gradient": adapter.gradient, "execution": adapter.execution,
            "fun": np.asarray(funs + funs[-1:] * short, dtype=np.float64),
            "x": np.vstack([*xs, *xs[-1:] * short])}


@overload
def check_equivalence(problem: Sequence[Problem], optimizer: None = None, *,
                      tolerance: float | None = None, **overrides: Any) -> ModelEquivalence: ...


@overload
def check_equivalence(
    problem: Problem, optimizer: OptimizerSpec | str | Callable[..., OptimizerSpec],
    backends: Sequence[str] = ..., steps: int = ..., dtype: str | None = ...,
    impl: str | Mapping[str, str] | None = ..., *, tolerance: float | None = ...,
    strict: bool = ..., config: RunConfig | None = ..., **overrides: Any,
) -> EquivalenceResult: ...


def check_equivalence(  # type: ignore[misc]
    problem: Problem | Sequence[Problem],
    optimizer: OptimizerSpec | str | Callable[..., OptimizerSpec] | None = None,
    backends: Sequence[str] = ("numpy", "torch", "tensorflow"), steps: int = 50,
    dtype: str | None = None, impl: str | Mapping[str, str] | None = None, *,
    tolerance: float | None = None, strict: bool = False, config: RunConfig | None = None,
    **overrides: Any,
) -> EquivalenceResult | ModelEquivalence:
    """Run ``optimizer`` for ``steps`` iterations on each backend and compare them step by step;
    or, given several implementations of one model, compare their loss and gradient.

    Parameters
    ----------
    problem : Problem, or a sequence of Problem
        A sequence (native models from :func:`optcmp.problems.from_torch`, ``from_keras``,
        ``from_jax``, or other problems of one model) is checked by :func:`check_models`
        (``tolerance`` and ``batch=`` apply; no optimizer).
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
    EquivalenceResult or ModelEquivalence
        Per-step differences, the verdict, and each backend's impl, gradient and execution.
    """
    if isinstance(problem, (list, tuple)):
        if optimizer is not None:
            raise TypeError("check_equivalence(problems) compares implementations of a model "
                            "at one point; it takes no optimizer")
        return check_models(problem, tolerance=tolerance, **overrides)
    check_problem(problem)
    assert isinstance(problem, Problem)
    if optimizer is None:
        raise TypeError("check_equivalence(problem, optimizer): give the optimizer to run")
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


@dataclass
class ModelEquivalence:
    """Whether implementations of one model compute the same loss and gradient at one point;
    ``bool(result)`` is :attr:`passed`.

    Attributes
    ----------
    names : list of str
        The implementations (their framework, or the problem's name), the first the reference.
    passed : bool
        Every implementation's loss and gradient within :attr:`tolerance` of the first's.
    diagnosis : str
        What agrees, or what differs and what a person would look for first.
    loss : dict of str to float
        Each implementation's loss at the shared point on the batch.
    loss_rel_diff, grad_rel_diff : dict of str to float
        ``|f - f_ref| / |f_ref|`` and ``max|g - g_ref| / max|g_ref|`` (NaN where the
        parameters could not be mapped).
    mapping : dict of str to list of str
        Each implementation's parameter for each of the first's, in the first's order.
    batch, dtype, tolerance
        Rows compared, the arithmetic (``"float64"``), the relative tolerance.
    """

    names: list[str]
    passed: bool
    diagnosis: str
    loss: dict[str, float]
    loss_rel_diff: dict[str, float]
    grad_rel_diff: dict[str, float]
    mapping: dict[str, list[str]]
    batch: int
    dtype: str
    tolerance: float

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.diagnosis


class _Impl:
    """One implementation of the model: its float64 evaluator and its parameters by name."""

    def __init__(self, problem: Problem, label: str) -> None:
        self.problem, self.label = problem, label
        model = getattr(problem, "model", None)
        self.model = None if model is None else model.float64()
        self.names, self.shapes = problem.layout.names, problem.layout.shapes
        self.x0 = np.asarray(problem.init_params(0), dtype=np.float64)

    def split(self, x: np.ndarray) -> list[np.ndarray]:
        """The canonical (in, out) parameter arrays of flat ``x``."""
        out = [np.reshape(x[a:b], s) for s, (a, b) in zip(self.shapes,
                                                            self.problem.layout.offsets())]
        return out if self.model is None else [self.model.canonical(i, a)
                                                for i, a in enumerate(out)]

    def flat(self, arrays: list[np.ndarray]) -> np.ndarray:
        """The flat ``x`` of canonical arrays in this implementation's order."""
        own = arrays if self.model is None else [self.model.from_canonical(i, a)
                                                 for i, a in enumerate(arrays)]
        return np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1) for a in own])

    def evaluate(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> tuple[float, np.ndarray]:
        if self.model is None:
            f, g = self.problem.value_and_grad(x, batch)
            return float(f), np.asarray(g, dtype=np.float64)
        return self.model.value_and_grad(x, batch["X"], batch["y"])  # type: ignore[no-any-return]

    def outputs(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> np.ndarray | None:
        return None if self.model is None else self.model.outputs(x, batch["X"])


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    """``max|a - b| / max|b|``."""
    return float(np.max(np.abs(a - b), initial=0.0) / max(float(np.max(np.abs(b), initial=0.0)),
                                                          _TINY))


def _map(ref: _Impl, im: _Impl) -> tuple[list[tuple[int, bool]], list[str], bool]:
    """For each of ``ref``'s parameters, ``im``'s of the same (in, out) shape, the first
    unused in order (a 2-D one of the reversed shape: stored transposed); the notes; whether
    every parameter has its counterpart."""
    rs, os_ = [a.shape for a in ref.split(ref.x0)], [a.shape for a in im.split(im.x0)]
    used: list[int] = []
    pairs: list[tuple[int, bool]] = []
    notes: list[str] = []
    complete = True
    for i, s in enumerate(rs):
        j = next((j for j, t in enumerate(os_) if j not in used and t == s), None)
        flip = j is None and len(s) == 2 and (j := next(
            (j for j, t in enumerate(os_) if j not in used and t == s[::-1]), None)) is not None
        if j is None:
            complete = False
            notes.append(f"{im.label} has no parameter for {ref.label}'s {ref.names[i]!r} of "
                         f"shape {s} (in the (in, out) layout): a missing parameter")
            continue
        used.append(j)
        pairs.append((j, flip))
        if flip:
            notes.append(f"{im.label}'s {im.names[j]!r} is stored transposed: shape "
                         f"{os_[j]} where {ref.label}'s {ref.names[i]!r} is {s} in the "
                         "(in, out) layout")
    extra = [f"{im.names[j]!r} {os_[j]}" for j in range(len(os_)) if j not in used]
    if extra:
        complete = False
        notes.append(f"{im.label} has parameter(s) {', '.join(extra)} that {ref.label} lacks")
    return pairs, notes, complete


def _shared_point(ref: _Impl, im: _Impl, pairs: list[tuple[int, bool]],
                  flip: int | None = None) -> np.ndarray:
    """``im``'s flat ``x`` at ``ref``'s initial point (``flip``: that pair transposed too)."""
    canon = ref.split(ref.x0)
    arrays: list[np.ndarray] = [np.empty(0)] * len(pairs)
    for i, (j, t) in enumerate(pairs):
        arrays[j] = canon[i].T if t != (i == flip) else canon[i]
    return im.flat(arrays)


def _in_ref_order(im: _Impl, g: np.ndarray, pairs: list[tuple[int, bool]],
                  flip: int | None = None) -> np.ndarray:
    """``im``'s gradient as ``ref``'s flat canonical vector (``flip`` as :func:`_shared_point`)."""
    parts = im.split(g)
    return np.concatenate([(parts[j].T if t != (i == flip) else parts[j]).reshape(-1)
                           for i, (j, t) in enumerate(pairs)])


def _diagnose(ref: _Impl, im: _Impl, pairs: list[tuple[int, bool]], batch: dict[str, Any],
              got: tuple[float, np.ndarray, float, np.ndarray], tol: float) -> str:
    """What differs between ``im`` and ``ref`` at the shared point, as a person looks for it."""
    f0, g0, f, g = got
    n = len(next(iter(batch.values())))
    r = f / f0 if f0 else math.nan
    if math.isfinite(r) and r not in (0.0, 1.0) and _rel(g, r * g0) <= max(tol, 1e-9):
        big, small, k = (im.label, ref.label, r) if abs(r) > 1 else (ref.label, im.label, 1 / r)
        if abs(k - n) <= 1e-6 * n:
            return (f"the {big} loss is {k:.1f}x the {small} loss on a {n}-row batch: one sums "
                    "over the batch, the other averages")
        return (f"the {im.label} loss and gradient are {r:.6g}x {ref.label}'s: a constant "
                "factor in the loss (a weight, a scale or another reduction)")
    for i, (j, _) in enumerate(pairs):
        if len(im.shapes[j]) == 2 and im.shapes[j][0] == im.shapes[j][1]:
            fi, gi = im.evaluate(_shared_point(ref, im, pairs, flip=i), batch)
            gi = _in_ref_order(im, gi, pairs, flip=i)
            if abs(fi - f0) <= tol * abs(f0) and _rel(gi, g0) <= tol:
                return (f"{im.label}'s {im.names[j]!r} is used transposed: with it transposed "
                        f"the loss and gradient agree with {ref.label}'s")
    if abs(f - f0) <= tol * max(abs(f0), _TINY):
        worst = int(np.argmax(np.abs(g - g0)))
        return (f"the losses agree but the gradients differ (relative {_rel(g, g0):.3g}, most in "
                f"{ref.problem.describe_param(worst)}): a part of the loss the gradient does "
                "not see (a stop-gradient, a detached tensor)")
    o0, o = ref.outputs(ref.x0, batch), im.outputs(_shared_point(ref, im, pairs), batch)
    if o0 is not None and o is not None and o0.shape == o.shape and _rel(o, o0) <= tol:
        return (f"the outputs agree but the losses differ ({ref.label} {f0:.10g}, {im.label} "
                f"{f:.10g}): a different loss (logits or probabilities, another formula)")
    where = "" if o0 is None or o is None or o0.shape != o.shape else (
        f" (outputs differ by up to {float(np.max(np.abs(o - o0))):.3g})")
    return (f"the losses differ at the shared point ({ref.label} {f0:.10g}, {im.label} "
            f"{f:.10g}){where}: a different activation, layer or output")


def _labels(problems: Sequence[Problem]) -> list[str]:
    """Each problem's framework, or its name where two share one."""
    fw = [str(getattr(p, "framework", p.name)) for p in problems]
    return [f if fw.count(f) == 1 else p.name for f, p in zip(fw, problems)]


def check_models(problems: Sequence[Problem], *, batch: int = 64,
                 tolerance: float | None = None) -> ModelEquivalence:
    """Whether implementations of one model compute the same loss and gradient.

    Maps the parameters across implementations by order and shape in the (in, out) layout of
    Keras and Flax (torch's ``Linear`` weights are (out, in): transposed), sets every
    implementation to the first one's initial point, and compares the loss and the gradient
    on the first ``batch`` rows of the first one's data, in float64 (each model's float64
    twin). When they differ, the diagnosis names what a person would look for first: a
    constant ratio (a summed vs a mean loss), a parameter missing, stored or used
    transposed, a different loss or a different output.

    Parameters
    ----------
    problems : sequence of Problem
        Two or more (native models, or problems of the same parameters).
    batch : int, default 64
    tolerance : float, optional
        Relative tolerance on the loss and the gradient, default 1e-10.

    Returns
    -------
    ModelEquivalence
    """
    if isinstance(problems, Problem) or len(problems) < 2:
        raise ValueError("check_equivalence([...]) needs two or more implementations of a model")
    for p in problems:
        check_problem(p)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    tol = 1e-10 if tolerance is None else float(tolerance)
    impls = [_Impl(p, label) for p, label in zip(problems, _labels(problems))]
    ref = impls[0]
    rows = {k: np.asarray(v[:batch], dtype=np.float64) if np.issubdtype(v.dtype, np.floating)
            else v[:batch] for k, v in ref.problem.train_data.items()}
    f0, g0 = ref.evaluate(ref.x0, rows)
    g0 = np.concatenate([a.reshape(-1) for a in ref.split(g0)])
    out = ModelEquivalence([i.label for i in impls], True, "", {ref.label: f0}, {}, {},
                           {ref.label: list(ref.names)}, len(next(iter(rows.values()))),
                           "float64", tol)
    lines = [_one(ref, im, rows, (f0, g0), tol, out) for im in impls[1:]]
    if out.passed:
        lines.insert(0, f"{', '.join(out.names)} agree: loss and gradient within {tol:g} "
                        f"(relative) on a {out.batch}-row batch in float64, at "
                        f"{ref.label}'s initial point")
    out.diagnosis = "\n".join(line for line in lines if line)
    return out


def _one(ref: _Impl, im: _Impl, rows: dict[str, Any], at: tuple[float, np.ndarray], tol: float,
         out: ModelEquivalence) -> str:
    """Compare ``im`` with ``ref`` into ``out``; the lines of its diagnosis."""
    pairs, notes, complete = _map(ref, im)
    out.mapping[im.label] = [im.names[j] for j, _ in pairs]
    if not complete:
        out.passed = False
        out.loss[im.label] = out.loss_rel_diff[im.label] = out.grad_rel_diff[im.label] = math.nan
        return "\n".join(notes)
    f0, g0 = at
    x = _shared_point(ref, im, pairs)
    f, g = im.evaluate(x, rows)
    g = _in_ref_order(im, g, pairs)
    out.loss[im.label] = f
    out.loss_rel_diff[im.label] = abs(f - f0) / max(abs(f0), _TINY)
    out.grad_rel_diff[im.label] = _rel(g, g0)
    x0 = _in_ref_order(im, im.x0, pairs)
    xr = np.concatenate([a.reshape(-1) for a in ref.split(ref.x0)])
    if _rel(x0, xr) > tol:
        notes.append(f"{im.label}'s own initial point differs from {ref.label}'s (largest "
                     f"difference {float(np.max(np.abs(x0 - xr))):.3g}); the check set it to "
                     f"{ref.label}'s")
    if out.loss_rel_diff[im.label] <= tol and out.grad_rel_diff[im.label] <= tol:
        return "\n".join(notes)
    out.passed = False
    return "\n".join([_diagnose(ref, im, pairs, rows, (f0, g0, f, g), tol), *notes])


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
