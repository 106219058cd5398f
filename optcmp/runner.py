"""One run: a problem, an optimizer spec and a :class:`RunConfig` in, a :class:`RunResult` out.

:func:`run` is the single path every run takes (:func:`optcmp.run_one`, the sweep of
:func:`optcmp.compare` on any executor, :func:`optcmp.tune`). It depends on the backends, the
adapters, the stopping rules and the results, and on nothing that builds sweeps.

What is timed
-------------
Only the optimizer's steps (forward, backward, update) are on the clock; the device is synced
before every clock read. Setup (data placement), warm-up (tracing, compilation, first call),
monitoring (reading the objective, stopping checks, float64 re-evaluations, callbacks) are off
the clock and reported apart.

When is the target reached
--------------------------
A full-batch step computes the objective at its incoming iterate ``x_k`` anyway, so ``f(x_k)``
becomes known during step ``k + 1``; ``time_to_target`` is the clock at the end of that step, and
``nit_to_target = k``; the run then stops after ``k + 1`` steps (``nit``) and returns ``x_k``,
the iterate that met the target. scipy's L-BFGS-B reports ``f(x_k)`` in its callback after
iteration ``k``. Minibatch runs evaluate the full objective off the clock every ``eval_every``
steps (default: once per epoch) in float64 on the host. In float32 a target is confirmed by a
float64 re-evaluation of the observed iterate before the run stops, so a float32 rounding below
``f*`` never counts as success. A run stopped by a budget returns its latest iterate.

Per-run state
-------------
Each run works on its own copy of the stopping rule (``copy.deepcopy``), reset at its start, so
rules that keep state between observations (:class:`~optcmp.stopping.RelativeChange`, or a
user's own) give the same result whether runs execute one after another or at the same time on
a thread pool. The :class:`RunResult` is built once, when the run has ended.
"""

from __future__ import annotations

import copy
import functools
import math
import time
import warnings
from typing import Any

import numpy as np

from optcmp.adapters import resolve_adapter
from optcmp.adapters.base import Adapter
from optcmp.backends import get_backend
from optcmp.backends.base import Backend, is_cpu_device
from optcmp.monitor import Callback, Monitor
from optcmp.ops.numpy_ import norm2
from optcmp.optimizers.base import NotApplicable, OptimizerSpec, as_spec
from optcmp.problems.base import Problem
from optcmp.results import RunResult, Trace
from optcmp.run.checks import (
    check_problem,
    check_resolution,
    check_rule,
    make_stopping,
    numpy_cpu_warning,
    type_name,
)
from optcmp.run.config import EXECUTIONS, RunConfig, check_callback
from optcmp.stopping import (
    Divergence,
    MaxEvals,
    MaxIter,
    RateProjection,
    Rule,
    Stalled,
    State,
)
from optcmp.threads import (
    DEFAULT_THREADS,
    current_threads,
    limit_late_pools,
    limit_threads,
)
from optcmp.timing import Stopwatch, contended, load_average


class CompileInTimedWarning(UserWarning):
    """Compilation or tracing happened inside a run's timed region (its time includes it)."""


__all__ = ["EXECUTIONS", "CompileInTimedWarning", "RunConfig", "check_callback", "check_problem",
           "check_resolution", "check_rule", "make_stopping", "numpy_cpu_warning", "own_rule",
           "run", "run_one", "skipped_result", "type_name"]

def own_rule(rule: Rule) -> Rule:
    """A run's own copy of a stopping rule, reset: no state is shared between runs.

    Parameters
    ----------
    rule : Rule

    Returns
    -------
    Rule
        ``copy.deepcopy(rule)`` after ``reset()``; ``rule`` itself is never changed.
    """
    mine = copy.deepcopy(rule)
    mine.reset()
    return mine


def skipped_result(problem: Problem, spec: OptimizerSpec, config: RunConfig,
                   message: str, status: str = "skipped") -> RunResult:
    """The result of a run that never started (its backend missing, an error before setup).

    Parameters
    ----------
    problem : Problem
    spec : OptimizerSpec
    config : RunConfig
    message : str
        Why it did not run.
    status : {"skipped", "failed"}, default "skipped"

    Returns
    -------
    RunResult
        No iterations, no timings.
    """
    return RunResult(problem=problem.name, optimizer=spec.name, label=spec.label,
                     backend=config.backend, dtype=config.dtype,
                     hyperparameters=dict(spec.hyperparameters), seed=config.seed,
                     repeat=config.repeat, status=status, message=message,
                     n_params=problem.n_params, n_samples=problem.n_samples,
                     problem_spec=problem.spec())


def run(problem: Problem, optimizer: OptimizerSpec | str | Any,
        config: RunConfig | None = None) -> RunResult:
    """Run one optimizer on one backend from the problem's initial point, to the stopping rule.

    Parameters
    ----------
    problem : Problem
    optimizer : OptimizerSpec, factory or str
        e.g. ``optcmp.gd(learning_rate=0.1)``, ``optcmp.lbfgs`` or ``"adadelta"``.
    config : RunConfig, optional
        Backend, device, dtype, stopping rule or tolerance and budgets, seed, callback,
        threads. Default ``RunConfig()``: numpy, float64, tolerance 1e-6, 100,000 iterations
        and 60 timed seconds at most.

    Returns
    -------
    RunResult
        A run that raises inside the optimizer is returned with status ``failed`` and the error
        in ``message``; a diverging run with status ``diverged``; an optimizer that cannot
        sensibly run on the problem (``NotApplicable``, e.g. ``learning_rate="auto"`` without a
        known Lipschitz constant) with status ``skipped`` and the reason.

    Raises
    ------
    ValueError
        An impl the backend lacks, an absent device (the message lists the available ones), a
        rule that needs an unknown optimum, or a rule without a budget.
    TypeError
        ``problem`` is not a :class:`~optcmp.problems.base.Problem`, or ``optimizer`` is not an
        optimizer spec, factory or name.
    BackendUnavailable
        The backend's framework is not installed.

    Warns
    -----
    UserWarning
        A suboptimality target finer than float64 can resolve near ``f*``
        (:func:`check_resolution`): it is never met.
    """
    wall0 = time.perf_counter()
    check_problem(problem)
    spec = as_spec(optimizer)
    config = RunConfig() if config is None else config
    if not isinstance(config, RunConfig):
        raise TypeError(f"config must be an optcmp.runner.RunConfig, got {type_name(config)}")
    return _execute(problem, spec, config, wall0)


def run_one(
    problem: Problem,
    optimizer: OptimizerSpec | str | Any,
    *,
    backend: str = "numpy",
    device: str | None = None,
    dtype: str = "float64",
    stopping: Rule | None = None,
    tol: float = 1e-6,
    max_iter: int | None = 100_000,
    max_time: float | None = 60.0,
    max_evals: int | None = None,
    seed: int = 0,
    repeat: int = 0,
    callback: Callback | None = None,
    eval_every: int | None = None,
    threads: int | None = DEFAULT_THREADS,
    execution: str = "auto",
    gradient: str = "auto",
) -> RunResult:
    """Run one optimizer on one backend: :func:`run` with the settings as keywords.

    Parameters
    ----------
    problem : Problem
    optimizer : OptimizerSpec, factory or str
        e.g. ``optcmp.gd(learning_rate=0.1)``, ``optcmp.lbfgs`` or ``"adadelta"``.
    backend, device, dtype, stopping, tol, max_iter, max_time, max_evals, seed, repeat, \
callback, eval_every, threads, execution, gradient
        The :class:`RunConfig` fields. ``threads`` (default 1) gives numpy's BLAS pool,
        PyTorch's intra-op pool and TensorFlow's pools the same count (recorded in
        ``RunResult.threads``); ``None`` leaves each library's own.

    Returns
    -------
    RunResult
        See :func:`run`.

    Raises
    ------
    ValueError
        Unknown backend, device name or dtype, a device that is absent (the message lists the
        available ones), an impl the backend lacks, a rule that needs an unknown optimum, or a
        rule without a budget.
    TypeError
        ``problem`` is not a :class:`~optcmp.problems.base.Problem`, ``optimizer`` is not an
        optimizer spec, factory or name, or ``callback`` is not callable.
    BackendUnavailable
        The backend's framework is not installed.
    """
    wall0 = time.perf_counter()
    check_problem(problem)
    spec = as_spec(optimizer)
    config = RunConfig(backend=backend, device=device, dtype=dtype, stopping=stopping, tol=tol,
                       max_iter=max_iter, max_time=max_time, max_evals=max_evals, seed=seed,
                       repeat=repeat, callback=callback, eval_every=eval_every,
                       threads=threads, execution=execution, gradient=gradient)
    return _execute(problem, spec, config, wall0)


def _execute(problem: Problem, spec: OptimizerSpec, config: RunConfig,
             wall0: float) -> RunResult:
    """The run behind :func:`run` and :func:`run_one` (warnings point at their caller)."""
    if config.backend == "numpy" and not is_cpu_device(config.device):
        numpy_cpu_warning(config.device, stacklevel=3)
    return _Run(problem, spec, config, wall0).execute()


class _Run:
    """The state of one run while it executes; :meth:`execute` returns its result."""

    def __init__(self, problem: Problem, spec: OptimizerSpec, config: RunConfig,
                 wall0: float) -> None:
        self.problem, self.spec, self.config, self.wall0 = problem, spec, config, wall0
        self.adapter_cls, self.impl = resolve_adapter(spec, config.backend)
        opt = problem.optimum()
        self.fstar = None if opt is None else float(opt.fun)
        self.rule = own_rule(config.stopping_rule(problem, stacklevel=3))
        self.x0 = np.asarray(problem.init_params(config.seed), dtype=np.float64)
        # issue 13: a problem that cannot run on this backend is skipped with its reason
        self.unsupported = problem.unsupported_backend(config.backend)
        self.adapter: Adapter | None = None
        self.monitor: Monitor | None = None
        self.counts = (0, 0, 0)  # nit, nfev, njev
        self.loop_out: dict[str, Any] = {}
        self.times: dict[str, Any] = {"setup_time": 0.0, "warmup_time": 0.0}
        self.threads: int | None = None
        self.hyperparameters = dict(spec.hyperparameters)
        self.implementation = ""
        self.load: list[float | None] = [load_average(), None]
        self.how: dict[str, Any] = {}  # issue 11: compiled, layout, execution, compiles_in_timed
        self.compiles0: int | None = None
        self.final_x: np.ndarray | None = None

    def _prepare(self) -> None:
        """The backend, ``f(x0)`` and the stopwatch, with the run's threads already in force.

        Building the backend can start a framework's runtime (TensorFlow fixes its pools
        then) and ``f(x0)`` runs BLAS: both happen inside :func:`limit_threads`, so the
        whole run, its first evaluation included, uses the recorded thread count.
        """
        config, problem = self.config, self.problem
        self.backend: Backend = get_backend(config.backend, device=config.run_device,
                                            dtype=config.dtype)
        if self.unsupported is None:
            with np.errstate(all="ignore"):
                f0, self.g0 = problem.value_and_grad(self.x0, problem.train_data)
        else:
            f0, self.g0 = problem.fun64(self.x0), np.zeros_like(self.x0)
        self.f0 = float(f0)
        check_resolution(self.rule, problem, config.seed, f0=self.f0, stacklevel=5)  # issue 15
        self.sw = Stopwatch(self.backend.sync)

    # ------------------------------------------------------------------ phases
    def execute(self) -> RunResult:
        with np.errstate(all="ignore"), limit_threads(self.config.threads, self.config.backend):
            self._prepare()  # a missing backend or absent device raises from run()
            self.threads = current_threads(self.config.backend)
            bad_fstar = self._optimum_above_start()  # QA: a given f* above f(x0)
            if self.unsupported is not None:
                status, message = "skipped", self.unsupported
            elif bad_fstar is not None:
                status, message = "failed", bad_fstar
            else:
                status, message = self._guarded()
        self.load[1] = load_average()
        return self._result(status, message)

    def _optimum_above_start(self) -> str | None:
        """Why ``f*`` cannot be this problem's minimum: it is above ``f(x0)`` (QA).

        A suboptimality target against such an ``f*`` is met at the start (a run would be
        ``converged`` after 0 iterations), so the run fails with this reason instead.
        """
        if self.fstar is None or not math.isfinite(self.f0) or not any(
                r.needs_optimum for r in self.rule.rules()):
            return None
        slack = 1e-12 * max(abs(self.fstar), abs(self.f0))  # rounding of f* and of f(x0)
        if self.f0 >= self.fstar - slack:
            return None
        opt = self.problem.optimum()
        how = f" ({opt.method})" if opt is not None and opt.method else ""
        return (f"the optimum f* = {self.fstar:.10g}{how} is above the objective at the initial "
                f"point, f(x0) = {self.f0:.10g}, so it is not the problem's minimum and every "
                "suboptimality target would be met at the start; give the minimum value as the "
                "optimum (e.g. from_function(..., optimum='estimate'))")

    def _guarded(self) -> tuple[str, str]:
        """Setup and steps; an optimizer's crash or refusal becomes the run's status."""
        try:
            self._setup()
            limit_late_pools(self.config.threads)  # pools of libraries the setup loaded
            self.threads = current_threads(self.config.backend)
            try:
                self._iterate()
            finally:
                self._count_compiles()
            return _status(self.monitor, self.loop_out)
        except (KeyboardInterrupt, SystemExit):
            raise
        except NotApplicable as exc:  # e.g. learning_rate="auto" without a known L: not run
            self._stop_clock()
            status, message = "skipped", str(exc)
        except Exception as exc:  # an optimizer crash is a result, not an abort
            self._stop_clock()
            status, message = "failed", f"{type(exc).__name__}: {exc}"
            if self.monitor is not None:
                last = self.monitor.last  # the evaluations spent up to the failure
                nfev, njev = (last.nfev, last.njev) if last is not None else (0, 0)
                self.counts = (self.monitor.nit, nfev, njev)
        return status, message

    def _setup(self) -> None:
        """Adapter setup and warm-up (untimed), then the monitor."""
        t0 = time.perf_counter()
        adapter = self.adapter_cls(self.spec, self.problem, self.backend, self.x0,
                                   self.config.seed)
        self.adapter = adapter
        self.implementation = adapter.implementation
        adapter.gradient_choice = self.config.gradient  # issue 11b
        adapter.setup()
        self.hyperparameters = dict(adapter.hyper)
        self.implementation = adapter.implementation or self.implementation
        execution = resolve_execution(adapter, self.config, self.rule)
        adapter.prepare_execution(execution)
        self.how = {"compiled": adapter.compiled, "layout": adapter.layout,
                    "execution": execution, "gradient": adapter.gradient}
        self.backend.sync()
        self.times["setup_time"] = time.perf_counter() - t0
        self.times["warmup_time"] = adapter.warmup()
        self.compiles0 = self.backend.compilations()
        self.monitor = Monitor(self.rule, self.sw, self.problem, adapter.x_numpy, self.f0,
                               self.fstar, confirm64=self.config.dtype != "float64",
                               callback=self.config.callback)

    def _iterate(self) -> None:
        """Observe ``x0``, then step (or let a loop adapter run) until the rule stops it."""
        adapter, monitor, sw = self.adapter, self.monitor, self.sw
        assert adapter is not None and monitor is not None
        if monitor.observe(0, 0, self.f0, norm2(self.g0), 0, 0, self.x0):
            return
        if adapter.loop:
            sw.resume()
            try:
                self.loop_out = adapter.run(monitor)  # type: ignore[attr-defined]
            finally:
                self._stop_clock()
            out = self.loop_out
            self.counts = (out["nit"], out["nfev"], out["njev"])
        elif adapter.execution == "fused" and adapter.stochastic:
            self.counts = _fused_minibatch_loop(adapter, monitor, sw, self.config.eval_every)
        elif adapter.execution == "fused":
            *counts, self.final_x = _fused_full_batch_loop(adapter, monitor, sw)
            self.counts = (counts[0], counts[1], counts[2])
        else:
            self.counts = _step_loop(adapter, monitor, sw, self.config.eval_every)

    def _count_compiles(self) -> None:
        """Record the compilations inside the timed region; warn when there were any."""
        if self.compiles0 is None:
            return
        n = self.backend.compilations() - self.compiles0
        self.how["compiles_in_timed"] = n
        if n:
            warnings.warn(
                f"{n} compilation(s) or trace(s) happened inside the timed region of "
                f"{self.spec.label} on {self.config.backend} ({self.how.get('compiled')}): its "
                "time includes compile time (a batch shape or input the warm-up did not see)",
                CompileInTimedWarning, stacklevel=4)

    def _stop_clock(self) -> None:
        if self.sw.running:
            self.sw.pause()

    # ------------------------------------------------------------------ the result
    def _final_point(self) -> dict[str, Any]:
        """``x``, ``fun`` (float64 re-evaluation) and metrics of the iterate the run returns."""
        adapter, monitor = self.adapter, self.monitor
        out: dict[str, Any] = {"x": self.x0.copy()}
        if adapter is None:
            return out
        try:
            hit_x = None if monitor is None else monitor.hit_x
            if hit_x is None:
                hit_x = self.final_x
            x = adapter.x_numpy() if hit_x is None else hit_x
            with np.errstate(all="ignore"):
                out["x"] = x
                out["fun"] = self.problem.fun64(x)
                out["metrics"] = self.problem.metrics(x)
        except Exception:  # noqa: BLE001 - keep whatever was recorded
            pass
        return out

    def _epochs(self, nit: int) -> float | None:
        adapter = self.adapter
        if adapter is None or not adapter.stochastic:
            return None
        try:
            spe = adapter.steps_per_epoch
        except AttributeError:  # setup failed before the minibatch order existed
            spe = None
        return nit / spe if spe else None

    def _divergence_wins(self, status: str, message: str, fun: Any) -> tuple[str, str]:
        """``diverged`` when a budget ended the run at an iterate that has diverged.

        A budget can fire at a check without an objective value (the first step of a
        full-batch run, a minibatch step between evaluations, scipy's own iteration limit);
        the returned iterate's float64 objective is then checked with the rule's divergence
        rules (a non-finite one always counts): non-finite or exploding values win over budgets.
        """
        if status in ("converged", "stopped", "failed", "skipped", "diverged") or fun is None:
            return status, message
        nit = int(self.counts[0])
        s = State(nit=nit, iterate=nit, fun=float(fun), f0=self.f0, fstar=self.fstar)
        rules = [r for r in self.rule.rules() if r.kind == "divergence"]
        fired = next((r for r in rules if r.check(s)), None)
        if fired is None and math.isfinite(s.fun or 0.0):
            return status, message
        what = _divergence_message(fired, s) if fired is not None else (
            f"diverged: objective is non-finite ({s.fun}) at iteration {nit} (after {nit} steps)")
        return "diverged", f"{what}; the run's budget ended it at the same point ({message})"

    def _result(self, status: str, message: str) -> RunResult:
        problem, spec, monitor = self.problem, self.spec, self.monitor
        nit, nfev, njev = (int(c) for c in self.counts)
        final = self._final_point()
        status, message = self._divergence_wins(status, message, final.get("fun"))
        to_target: dict[str, Any] = {}
        if monitor is not None and monitor.hit is not None:
            t, it, fe, je = monitor.hit
            to_target = {"time_to_target": t, "nit_to_target": it, "nfev_to_target": fe,
                         "njev_to_target": je, "cpu_time_to_target": monitor.hit_cpu}
        return RunResult(
            problem=problem.name, optimizer=spec.name, label=spec.label, impl=self.impl,
            implementation=self.implementation, seed=self.config.seed,
            repeat=self.config.repeat, hyperparameters=self.hyperparameters, f0=self.f0,
            fstar=self.fstar,
            target=" | ".join(r.describe() for r in self.rule.rules() if r.kind == "target"),
            reduction=problem.reduction, n_params=problem.n_params,
            n_samples=problem.n_samples, problem_spec=problem.spec(), **self.backend.describe(),
            status=status, message=message, nit=nit, nfev=nfev, njev=njev,
            time=self.sw.elapsed, trace=Trace() if monitor is None else monitor.trace(),
            success=bool(to_target), epochs=self._epochs(nit), threads=self.threads,
            **to_target, **self.times, **final,
            wall_time=time.perf_counter() - self.wall0, **self._cpu_and_load(), **self.how,
        )

    def _cpu_and_load(self) -> dict[str, Any]:
        """CPU time, load averages and the contention flag (issue 12) of the result."""
        sw = self.sw
        cpu = sw.cpu_elapsed if sw.intervals else None
        on_cpu = is_cpu_device(self.backend.describe().get("device"))
        out: dict[str, Any] = {"cpu_time": cpu, "load_start": self.load[0],
                               "load_end": self.load[1],
                               "contended": on_cpu and contended(sw.elapsed, cpu)}
        if self.monitor is not None and self.monitor.projection is not None:
            t, n = self.monitor.projection
            out.update(projected_time_to_target=t, projected_nit_to_target=n)
        return out


def _step_loop(adapter: Adapter, monitor: Monitor, sw: Stopwatch,
               eval_every: int | None) -> tuple[int, int, int]:
    """Timed steps, each followed by an untimed observation, until the monitor says stop."""
    stochastic = adapter.stochastic
    every = int(eval_every or (adapter.steps_per_epoch if stochastic else 1) or 1)
    step = adapter.step
    # A full-batch step reports f(x_{k-1}) after it has moved to x_k: keep a host copy of x_{k-1},
    # off the clock, for callbacks, metrics, the float64 confirmation and the final result (a
    # converged run returns the iterate that met the target).
    keep_prev = not stochastic
    prev: np.ndarray | None = None
    k = nfev = njev = 0
    while True:
        if keep_prev:
            prev = adapter.x_numpy()
        sw.resume()
        out = step()
        sw.pause()
        k += 1
        nfev += out.nfev
        njev += out.njev
        if not stochastic:
            if k == 1:  # f(x0) is already recorded in float64
                stop = monitor.observe(k, 0, None, None, nfev, njev)
            else:
                gn = None if out.grad_norm is None else float(out.grad_norm)
                stop = monitor.observe(k, k - 1, float(out.fun), gn, nfev, njev, prev)
        elif k % every == 0:
            x = adapter.x_numpy()
            f, g = monitor.problem.value_and_grad(x, monitor.problem.train_data)
            stop = monitor.observe(k, k, float(f), norm2(g), nfev, njev, x)
        else:
            stop = monitor.observe(k, k, None, None, nfev, njev)
        if stop:
            return k, nfev, njev
        adapter.between_steps()


def resolve_execution(adapter: Adapter, config: RunConfig, rule: Rule) -> str:
    """The execution mode a run uses: ``"step"`` or ``"fused"`` (see :attr:`RunConfig.execution`).

    Parameters
    ----------
    adapter : Adapter
        Set up.
    config : RunConfig
    rule : Rule
        The run's stopping rule.

    Returns
    -------
    str
        ``"step"`` for ``execution="step"``, for adapters that drive their own loop (scipy),
        and for full-batch runs that cannot be fused (the adapter cannot replay a block, a
        curvature that changes every step, a callback or a rule that needs every iterate);
        ``"fused"`` otherwise.

    Warns
    -----
    UserWarning
        ``execution="fused"`` was asked for and the run falls back to ``"step"`` (why).
    """
    if config.execution == "step" or adapter.loop:
        return "step"
    why = adapter.fuse_blocker()
    if not why and not adapter.stochastic:
        if config.callback is not None:
            why = "a callback needs every iterate"
        elif any(r.needs_metrics for r in rule.rules()):
            why = "the stopping rule needs metrics of every iterate"
    if not why:
        return "fused"
    if config.execution == "fused":
        warnings.warn(f"execution='fused' is not possible for {adapter.spec.label} on "
                      f"{config.backend}: {why}; it runs execution='step' (recorded)",
                      UserWarning, stacklevel=5)
    return "step"


def _budget_left(monitor: Monitor, k: int, nfev: int) -> int:
    """Steps left before an iteration or evaluation budget fires (one evaluation per step)."""
    left = 1 << 30
    for r in monitor.rule.rules():
        if isinstance(r, MaxIter):
            left = min(left, r.n - k)
        elif isinstance(r, MaxEvals):
            left = min(left, r.n - nfev)
    return max(left, 1)


def _host_values(adapter: Adapter, values: Any, n: int) -> list[float]:
    """The first ``n`` backend scalars of a block's output as floats (off the clock)."""
    b = adapter.backend
    if isinstance(values, (list, tuple)):
        return [math.nan if v is None else float(np.asarray(b.to_numpy(v)))
                for v in values[:n]]
    return [float(v) for v in np.asarray(b.to_numpy(values), dtype=np.float64)[:n]]


#: A fused full-batch block is at most this fraction of the steps done before it, so that the
#: interpolated time of a step inside it is off by at most that fraction of the elapsed time.
BLOCK_FRACTION = 0.01


def _fused_full_batch_loop(adapter: Adapter, monitor: Monitor,
                           sw: Stopwatch) -> tuple[int, int, int, np.ndarray | None]:
    """Full-batch steps in fused blocks; every step's objective observed, its time interpolated.

    A block of ``n`` steps starts at step ``k`` with ``n <= max(1, BLOCK_FRACTION * k)``
    (geometric growth, at most the adapter's ``BLOCK_MAX``, never past an iteration or
    evaluation budget). Step ``j`` of a block gets the time ``t0 + (j + 1) / n * (t1 - t0)``
    (the block's clock span shared evenly), so the time of the target iteration is off by at
    most one block, 1% of the elapsed time. The iterate that met the target is recomputed off
    the clock by replaying the block from its start (:meth:`Adapter.replay`).

    Returns
    -------
    (nit, nfev, njev, x)
        ``x`` is the iterate of a run stopped inside a block by another rule, else None.
    """
    k = nfev = njev = 0
    cap = int(getattr(adapter, "BLOCK_MAX", 1024))
    while True:
        n = min(max(1, int(BLOCK_FRACTION * k)), cap, _budget_left(monitor, k, nfev))
        t0 = sw.elapsed
        sw.resume()
        blk = adapter.run_block(n)
        sw.pause()
        t1 = sw.elapsed
        funs = _host_values(adapter, blk.fun, n)
        gns = _host_values(adapter, blk.grad_norm, n)
        for j in range(n):
            kk = k + j + 1
            nfev += blk.nfev
            njev += blk.njev
            at = t0 + (t1 - t0) * (j + 1) / n
            if kk == 1:  # f(x0) is already recorded in float64
                stop = monitor.observe(1, 0, None, None, nfev, njev, at=at)
            else:
                stop = monitor.observe(kk, kk - 1, funs[j], gns[j], nfev, njev,
                                       functools.partial(adapter.replay, j), at=at)
            if stop:
                last = None if j == n - 1 or monitor.hit is not None else adapter.replay(j + 1)
                return kk, nfev, njev, last
        k += n


def _fused_minibatch_loop(adapter: Adapter, monitor: Monitor, sw: Stopwatch,
                          eval_every: int | None) -> tuple[int, int, int]:
    """Minibatch steps in fused blocks that end at every observation (exact times).

    A block never crosses an observation, an epoch, or an iteration/evaluation budget, and is
    at most ``max(256, k // 2, steps of 50 ms at the run's measured rate)`` steps (issue 11b:
    fast steps are not cut into many calls; a time budget overshoots by at most a third of the
    time spent or about 50 ms); the epoch's shorter last minibatch is part of the block (a second branch of
    the compiled loop on TensorFlow, warmed up).
    """
    every = int(eval_every or adapter.steps_per_epoch or 1)
    k = nfev = njev = 0
    while True:
        n = min((k // every + 1) * every - k, adapter.fusable_steps(), _block_cap(k, sw),
                _budget_left(monitor, k, nfev))
        sw.resume()
        if n <= 0:
            out = adapter.step()
            n, ev = 1, (out.nfev, out.njev)
        else:
            blk = adapter.run_block(n)
            ev = (blk.nfev, blk.njev)
        sw.pause()
        k += n
        nfev += n * ev[0]
        njev += n * ev[1]
        if k % every == 0:
            x = adapter.x_numpy()
            f, g = monitor.problem.value_and_grad(x, monitor.problem.train_data)
            stop = monitor.observe(k, k, float(f), norm2(g), nfev, njev, x)
        else:
            stop = monitor.observe(k, k, None, None, nfev, njev)
        if stop:
            return k, nfev, njev
        adapter.between_steps()


#: Seconds one fused minibatch block may last at the run's measured step rate (issue 11b).
BLOCK_SECONDS = 0.05


def _block_cap(k: int, sw: Stopwatch) -> int:
    """Most steps of the next fused minibatch block after ``k`` timed steps:
    ``max(256, k // 2)``, or more when that many steps last under :data:`BLOCK_SECONDS`."""
    cap = max(256, k // 2)
    if k and sw.elapsed > 0.0:
        cap = max(cap, int(BLOCK_SECONDS * k / sw.elapsed))
    return cap


def _status(monitor: Monitor | None, loop_out: dict[str, Any]) -> tuple[str, str]:
    if monitor is None:
        return "failed", "no monitor"
    if monitor.callback_stop:
        return "stopped", "callback raised StopIteration"
    if monitor.fired is not None:
        r = monitor.fired
        if r.kind == "target":
            return "converged", f"target reached: {r.describe()}"
        if r.kind == "divergence":
            return "diverged", _divergence_message(r, monitor.last)
        if isinstance(r, (Stalled, RateProjection)):
            where = "" if monitor.last is None else f" (at iteration {monitor.last.iterate})"
            return r.status, r.explain() + where
        return r.status, f"budget exhausted: {r.describe()}"
    if loop_out:
        return loop_out.get("status") or "stalled", loop_out.get("message", "")
    return "failed", "the run ended without a stopping decision"


def _divergence_message(rule: Rule, s: State | None) -> str:
    if s is None:
        return "diverged"
    if isinstance(rule, Divergence):
        what = rule.explain(s)
    elif s.fun is not None and not math.isfinite(s.fun):  # a user's own divergence rule
        what = f"objective is non-finite ({s.fun}) at iteration {s.iterate}"
    else:
        what = f"{rule.describe()} fired at iteration {s.iterate}"
    return f"diverged: {what} (after {s.nit} steps)"
