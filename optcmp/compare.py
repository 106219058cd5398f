"""Running optimizers: :func:`run_one` (one run) and :func:`compare` (a table of runs).

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
"""

from __future__ import annotations

import copy
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult

from optcmp.backends import BACKENDS, canonical_backend, get_backend
from optcmp.backends.base import check_device, check_dtype, is_cpu_device
from optcmp.backends.numpy_ import norm2
from optcmp.optimizers.base import (
    Adapter,
    NotApplicable,
    OptimizerSpec,
    as_spec,
    resolve_adapter,
)
from optcmp.problems.base import Problem
from optcmp.results import Comparison, RunResult, Trace, environment
from optcmp.stopping import (
    DEFAULT_DIVERGENCE_FACTOR,
    Divergence,
    MaxEvals,
    MaxIter,
    Rule,
    State,
    default_stopping,
)
from optcmp.threads import check_threads, current_threads, limit_threads
from optcmp.timing import Stopwatch

Callback = Callable[[OptimizeResult], Any]


class _Monitor:
    """Off-the-clock bookkeeping: trace, stopping checks, target confirmation, callback."""

    def __init__(self, rule: Rule, sw: Stopwatch, problem: Problem, adapter: Adapter, f0: float,
                 fstar: float | None, confirm64: bool, callback: Callback | None) -> None:
        self.rule = rule
        self.sw = sw
        self.problem = problem
        self.adapter = adapter
        self.f0 = f0
        self.fstar = fstar
        self.confirm64 = confirm64
        self.callback = callback
        self.needs_metrics = tuple(m for r in rule.rules() for m in r.needs_metrics)
        #: Whether observations need the observed iterate itself (not only its objective).
        self.needs_x = bool(callback is not None or self.needs_metrics or confirm64)
        self.rows: list[tuple[int, float, float, float, int, int]] = []
        self.fired: Rule | None = None
        self.stopped = False
        self.callback_stop = False
        self.hit: tuple[float, int, int, int] | None = None
        self.hit_x: np.ndarray | None = None
        self.nit = 0
        self.last: State | None = None
        self._delegated: set[int] = set()

    def delegate_budgets(self) -> dict[str, int | None]:
        """Hand the iteration and evaluation budgets to a loop adapter (scipy enforces them)."""
        out: dict[str, int | None] = {"max_iter": None, "max_evals": None}
        for r in self.rule.rules():
            if isinstance(r, MaxIter):
                out["max_iter"] = r.n if out["max_iter"] is None else min(out["max_iter"], r.n)
                self._delegated.add(id(r))
            elif isinstance(r, MaxEvals):
                out["max_evals"] = r.n if out["max_evals"] is None else min(out["max_evals"], r.n)
                self._delegated.add(id(r))
        return out

    def _first(self, s: State) -> Rule | None:
        for r in self.rule.rules():
            if id(r) not in self._delegated and r.check(s):
                return r
        return None

    def observe(self, nit: int, iterate: int, fun: float | None, grad_norm: float | None,
                nfev: int, njev: int, x: Callable[[], np.ndarray] | np.ndarray | None = None) -> bool:
        """Record an observation and check the rule; True means stop."""
        t = self.sw.elapsed
        self.nit = nit
        s = State(nit=nit, iterate=iterate, time=t, fun=fun, f0=self.f0, fstar=self.fstar,
                  grad_norm=grad_norm, nfev=nfev, njev=njev)
        self.last = s
        if fun is not None:
            self.rows.append((iterate, t, fun, math.nan if grad_norm is None else grad_norm,
                              nfev, njev))
            if self.needs_metrics:
                s.metrics = self.problem.metrics(self._x(x))
            if self.callback is not None:
                ir = OptimizeResult(x=self._x(x), fun=fun, nit=nit, iterate=iterate, time=t,
                                    nfev=nfev, njev=njev, grad_norm=grad_norm)
                try:
                    self.callback(ir)
                except StopIteration:
                    self.callback_stop = self.stopped = True
                    return True
        fired = self._first(s)
        if fired is None:
            return False
        if fired.kind == "target":
            if self.confirm64 and fun is not None:
                xv = self._x(x)
                s.fun = self.problem.fun64(xv)
                if not fired.check(s):
                    return False
            self.hit = (t, iterate, nfev, njev)
            self.hit_x = None if fun is None else self._x(x)
        self.fired = fired
        self.stopped = True
        return True

    def _x(self, x: Callable[[], np.ndarray] | np.ndarray | None) -> np.ndarray:
        if x is None:
            return self.adapter.x_numpy()
        return x() if callable(x) else x

    def on_iteration(self, *, fun: float, grad_norm: float | None, nfev: int, njev: int,
                     x: np.ndarray) -> bool:
        """Called by loop adapters after each iteration, with the clock running."""
        self.sw.pause()
        try:
            self.nit += 1
            return self.observe(self.nit, self.nit, fun, grad_norm, nfev, njev, x)
        finally:
            self.sw.resume()

    def trace(self) -> Trace:
        if not self.rows:
            return Trace()
        cols = list(zip(*self.rows))
        return Trace(iteration=np.asarray(cols[0], dtype=np.int64), time=np.asarray(cols[1]),
                     fun=np.asarray(cols[2], dtype=np.float64), grad_norm=np.asarray(cols[3]),
                     nfev=np.asarray(cols[4], dtype=np.int64),
                     njev=np.asarray(cols[5], dtype=np.int64))


def _check_rule(rule: Rule, problem: Problem, fstar: float | None) -> None:
    if not isinstance(rule, Rule):
        raise TypeError(f"stopping must be an optcmp.stopping.Rule, got {type(rule).__name__}")
    leaves = rule.rules()
    if fstar is None and any(r.needs_optimum for r in leaves):
        raise ValueError(
            f"stopping rule {rule.describe()} needs the optimum f*, which problem "
            f"{problem.name!r} does not know; use a LossTarget or a MetricTarget"
        )
    if not any(r.kind == "target" for r in leaves):
        warnings.warn(f"stopping rule {rule.describe()} has no target: no run can converge and "
                      "time-to-target will be empty", stacklevel=3)
    if not any(r.kind == "budget" for r in leaves):
        raise ValueError(f"stopping rule {rule.describe()} has no budget (MaxIter, MaxTime or "
                         "MaxEvals): a run that never meets the target would never stop")


def _check_problem(problem: Any) -> None:
    if not isinstance(problem, Problem):
        raise TypeError("problem must be an optcmp Problem (e.g. "
                        f"optcmp.problems.LinearRegression()), got {_type_name(problem)}")


def _type_name(v: Any) -> str:
    return "None" if v is None else type(v).__name__


def _numpy_cpu_warning(device: str | None, stacklevel: int) -> None:
    warnings.warn(f"the numpy backend always runs on the CPU: device={device!r} applies to the "
                  "torch and tensorflow backends only", UserWarning, stacklevel=stacklevel + 1)


def make_stopping(problem: Problem, *, tol: float = 1e-6, max_iter: int | None = 100_000,
                  max_time: float | None = 60.0, max_evals: int | None = None,
                  divergence_factor: float | None = DEFAULT_DIVERGENCE_FACTOR) -> Rule:
    """The default stopping rule for ``problem``.

    Relative suboptimality ``<= tol`` when the optimum is known, else the problem's default
    target (``problem.default_target(tol)``), plus the budgets and divergence detection: a
    non-finite objective or gradient, or an objective above
    ``divergence_factor * max(|f0|, 1)`` (an explosion), ends the run as ``diverged``.

    Parameters
    ----------
    problem : Problem
    tol : float, default 1e-6
        Relative-suboptimality tolerance.
    max_iter : int, optional
        Iteration budget.
    max_time : float, optional
        Timed-seconds budget.
    max_evals : int, optional
        Function-evaluation budget.
    divergence_factor : float, optional, default 1e10
        Explosion factor of the :class:`~optcmp.stopping.Divergence` rule; ``None`` checks
        non-finite values only.

    Returns
    -------
    Rule

    Raises
    ------
    TypeError
        ``problem`` is not a :class:`~optcmp.problems.base.Problem`.
    ValueError
        The problem has no known optimum and no default target; a bad budget or
        ``divergence_factor``.
    """
    _check_problem(problem)
    target = None
    if problem.optimum() is None:
        default_target = getattr(problem, "default_target", None)
        if default_target is None:
            raise ValueError(f"problem {problem.name!r} has no known optimum and no default "
                             "target; pass stopping=LossTarget(...) | MaxIter(...)")
        target = default_target(tol)
    return default_stopping(tol, max_iter=max_iter, max_time=max_time, max_evals=max_evals,
                            target=target, divergence_factor=divergence_factor)


def run_one(
    problem: Problem,
    optimizer: OptimizerSpec | str | Callable[..., OptimizerSpec],
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
    threads: int | None = None,
) -> RunResult:
    """Run one optimizer on one backend from the problem's initial point, to the stopping rule.

    Parameters
    ----------
    problem : Problem
    optimizer : OptimizerSpec, factory or str
        e.g. ``optcmp.gd(learning_rate=0.1)``, ``optcmp.lbfgs`` or ``"adadelta"``.
    backend : {"numpy", "torch", "tensorflow"}, default "numpy"
    device : str, optional
        ``None``/``"cpu"`` (default), ``"cuda"``, ``"cuda:N"``, ``"gpu"`` or ``"gpu:N"``, for
        the framework backends. The numpy backend always runs on the CPU: with another device
        it warns and runs on the CPU.
    dtype : {"float64", "float32"}, default "float64"
    stopping : Rule, optional
        Full stopping rule (target, budgets, divergence). Default: :func:`make_stopping` with
        ``tol``, ``max_iter``, ``max_time`` (seconds), ``max_evals``.
    tol : float, default 1e-6
        Relative suboptimality target ``(f - f*) / (f0 - f*) <= tol``.
    max_iter : int, optional, default 100_000
        Iteration budget.
    max_time : float, optional, default 60.0
        Budget of timed seconds.
    max_evals : int, optional
        Function-evaluation budget.
    seed : int, default 0
        Seed of the initial point and the minibatch order.
    repeat : int, default 0
        Repetition index recorded in the result.
    callback : callable, optional
        ``callback(intermediate_result)`` at every observation, off the clock, scipy-style;
        raising ``StopIteration`` stops the run with status ``stopped``.
    eval_every : int, optional
        For minibatch optimizers: steps between full-objective evaluations (default one epoch).
    threads : int, optional
        CPU threads for the run: numpy's BLAS pool, PyTorch's intra-op pool and TensorFlow's
        pools are all set to this count (:func:`optcmp.threads.limit_threads`). Default: each
        library's own default. The count in force is recorded in ``RunResult.threads``.

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
        Unknown backend, device name or dtype, a device that is absent (the message lists the
        available ones), an impl the backend lacks, a rule that needs an unknown optimum, or a
        rule without a budget.
    TypeError
        ``problem`` is not a :class:`~optcmp.problems.base.Problem`, or ``optimizer`` is not an
        optimizer spec, factory or name.
    BackendUnavailable
        The backend's framework is not installed.
    """
    wall0 = time.perf_counter()
    _check_problem(problem)
    spec = as_spec(optimizer)
    bname = canonical_backend(backend)
    device = check_device(device)
    dtype = check_dtype(dtype)
    if bname == "numpy" and not is_cpu_device(device):
        _numpy_cpu_warning(device, stacklevel=2)
    if eval_every is not None and (isinstance(eval_every, bool) or int(eval_every) < 1):
        raise ValueError(f"eval_every must be a positive integer, got {eval_every!r}")
    check_threads(threads)
    adapter_cls, impl = resolve_adapter(spec, bname)
    opt = problem.optimum()
    fstar = None if opt is None else float(opt.fun)
    rule = stopping if stopping is not None else make_stopping(
        problem, tol=tol, max_iter=max_iter, max_time=max_time, max_evals=max_evals)
    _check_rule(rule, problem, fstar)
    rule.reset()
    be = get_backend(bname, device=None if bname == "numpy" else device, dtype=dtype)

    x0 = np.asarray(problem.init_params(seed), dtype=np.float64)
    with np.errstate(all="ignore"):
        f0, g0 = problem.value_and_grad(x0, problem.train_data)
    result = RunResult(
        problem=problem.name, optimizer=spec.name, label=spec.label, impl=impl,
        implementation=getattr(adapter_cls, "implementation", ""), seed=int(seed),
        repeat=int(repeat), hyperparameters=dict(spec.hyperparameters), f0=float(f0), fstar=fstar,
        target=" | ".join(r.describe() for r in rule.rules() if r.kind == "target"),
        reduction=problem.reduction, n_params=problem.n_params, n_samples=problem.n_samples,
        x=x0.copy(), problem_spec=problem.spec(), **be.describe(),
    )
    sw = Stopwatch(be.sync)
    adapter: Adapter | None = None
    monitor: _Monitor | None = None
    nit = nfev = njev = 0
    loop_out: dict[str, Any] = {}
    try:
        with np.errstate(all="ignore"), limit_threads(threads, bname):
            result.threads = current_threads(bname)
            t0 = time.perf_counter()
            adapter = adapter_cls(spec, problem, be, x0, seed)
            adapter.setup()
            result.hyperparameters = dict(adapter.hyper)
            result.implementation = adapter.implementation or result.implementation
            be.sync()
            result.setup_time = time.perf_counter() - t0
            result.warmup_time = adapter.warmup()
            monitor = _Monitor(rule, sw, problem, adapter, float(f0), fstar,
                               confirm64=dtype != "float64", callback=callback)
            if not monitor.observe(0, 0, float(f0), norm2(g0), 0, 0, x0):
                if adapter.loop:
                    sw.resume()
                    try:
                        loop_out = adapter.run(monitor)  # type: ignore[attr-defined]
                    finally:
                        if sw.running:
                            sw.pause()
                    nit, nfev, njev = loop_out["nit"], loop_out["nfev"], loop_out["njev"]
                else:
                    nit, nfev, njev = _step_loop(adapter, monitor, sw, eval_every)
        status, message = _status(monitor, loop_out)
    except (KeyboardInterrupt, SystemExit):
        raise
    except NotApplicable as exc:  # e.g. learning_rate="auto" without a known L: not run
        if sw.running:
            sw.pause()
        status, message = "skipped", str(exc)
    except Exception as exc:  # an optimizer crash is a result, not an abort
        if sw.running:
            sw.pause()
        status = "failed"
        message = f"{type(exc).__name__}: {exc}"
        result.message = message
        if monitor is not None:
            nit = monitor.nit
            if monitor.last is not None:  # the evaluations spent up to the failure
                nfev, njev = monitor.last.nfev, monitor.last.njev
    result.status = status
    result.message = message
    result.nit, result.nfev, result.njev = int(nit), int(nfev), int(njev)
    result.time = sw.elapsed
    if monitor is not None:
        result.trace = monitor.trace()
        if monitor.hit is not None:
            t, it, fe, je = monitor.hit
            result.time_to_target, result.nit_to_target = t, it
            result.nfev_to_target, result.njev_to_target = fe, je
    result.success = result.time_to_target is not None
    if adapter is not None and adapter.stochastic:
        try:
            spe = adapter.steps_per_epoch
        except AttributeError:  # setup failed before the minibatch order existed
            spe = None
        if spe:
            result.epochs = result.nit / spe
    if adapter is not None:
        try:
            x = adapter.x_numpy() if monitor is None or monitor.hit_x is None else monitor.hit_x
            with np.errstate(all="ignore"):
                result.x = x
                result.fun = problem.fun64(x)
                result.metrics = problem.metrics(x)
        except Exception:  # noqa: BLE001 - keep whatever was recorded
            pass
    result.wall_time = time.perf_counter() - wall0
    return result


def _step_loop(adapter: Adapter, monitor: _Monitor, sw: Stopwatch,
               eval_every: int | None) -> tuple[int, int, int]:
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


def _status(monitor: _Monitor | None, loop_out: dict[str, Any]) -> tuple[str, str]:
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


def _preflight_device(names: list[str], missing: list[str], device: str | None, dtype: str,
                      executor: Any) -> None:
    """Build every installed framework backend once on ``device``, before any run.

    An absent device is then one clear error (the backend's ``ValueError`` names the device and
    the available ones) instead of a table of failed runs. With a Dask client the runs execute
    on the workers, whose devices this process cannot see: the check is left to them.
    """
    if "numpy" in names:
        _numpy_cpu_warning(device, stacklevel=3)
    if executor is not None:
        from optcmp.executors import is_dask_client

        if is_dask_client(executor):
            return
    for b in names:
        if b != "numpy" and b not in missing:
            get_backend(b, device=device, dtype=dtype)


def _normalize_backends(backends: str | Sequence[str]) -> list[str]:
    if isinstance(backends, str):
        if backends.lower() == "all":
            from optcmp.backends import available_backends

            return available_backends()
        backends = [b for b in backends.split(",") if b.strip()]
    names = [canonical_backend(b) for b in backends]
    if not names:
        raise ValueError("backends is empty; give at least one of " + ", ".join(BACKENDS))
    order = list(BACKENDS)
    return sorted(dict.fromkeys(names), key=order.index)  # torch before tensorflow


def compare(
    problem: Problem,
    optimizers: Sequence[OptimizerSpec | str | Callable[..., OptimizerSpec]] | OptimizerSpec | str,
    *,
    backends: str | Sequence[str] = ("numpy",),
    device: str | None = None,
    dtype: str = "float64",
    stopping: Rule | None = None,
    tol: float = 1e-6,
    max_iter: int | None = 100_000,
    max_time: float | None = 60.0,
    max_evals: int | None = None,
    repeats: int = 1,
    seed: int = 0,
    callback: Callback | None = None,
    eval_every: int | None = None,
    progress: bool = True,
    strict: bool = False,
    redraw_data: bool = False,
    store: str | os.PathLike[str] | None = None,
    executor: Any = None,
    threads: int | None = None,
) -> Comparison:
    """Run every optimizer on every backend, ``repeats`` times, and collect the results.

    Every run starts from the same initial point (drawn once per repetition in numpy float64)
    on the same data, with the same minibatch order, and stops on the same rule.

    Parameters
    ----------
    problem : Problem
    optimizers : sequence of OptimizerSpec, factory or str
        e.g. ``[optcmp.gd, optcmp.adadelta(rho=0.9), "lbfgs"]``.
    backends : str or sequence of str, default ("numpy",)
        Backend names, a comma-separated string, or ``"all"`` (every installed one).
        Runs go in registry order (numpy, torch, tensorflow).
    device : str, optional
        Device for the framework backends: ``None``/``"cpu"`` (default), ``"cuda"``,
        ``"cuda:N"``, ``"gpu"`` or ``"gpu:N"``. Checked before any run: every installed
        framework backend is built once on it, so an absent GPU is one error naming the
        available devices. The numpy backend always runs on the CPU (a warning says so when
        another device is asked for and numpy is among the backends).
    dtype : {"float64", "float32"}, default "float64"
    stopping, tol, max_iter, max_time, max_evals, eval_every, callback, threads
        As in :func:`run_one`. With an executor the callback runs on the worker.
    repeats : int, default 1
        Repetitions. What a repetition varies: repetition ``r`` uses seed ``seed + r`` for the
        initial point (for problems whose initial point is random, e.g. ``init="normal"``) and
        the minibatch order (stochastic optimizers); the data stay fixed unless
        ``redraw_data=True``. Within a repetition every optimizer and backend gets the same
        data, initial point and minibatch order. Timing noise differs between repetitions too,
        so repetitions of a deterministic full-batch run measure the timing spread.
    seed : int, default 0
    progress : bool, default True
        Progress bar on stderr (tqdm).
    strict : bool, default False
        Raise when a backend is not installed, instead of recording its runs as ``skipped``.
    redraw_data : bool, default False
        Also redraw the data in every repetition: repetition ``r`` runs on
        ``problem.with_seed(data_seed + r)`` where ``data_seed`` is the problem's own data seed
        (repetition 0 is ``problem`` itself); each run records its problem's spec in
        ``RunResult.problem_spec``. Needs a problem that generates its data (not one built from
        your arrays).
    store : str or path-like, optional
        A run store (``"runs.jsonl"``, see :mod:`optcmp.store`): every finished run is appended
        and fsync-ed as it finishes; runs already in the store (same :func:`optcmp.store.run_key`)
        are read back instead of run again, so re-running an interrupted sweep resumes it.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where runs execute (see :mod:`optcmp.executors`). Default: sequentially in this
        process, one run at a time, so timings do not contend. Runs that shared their host
        with other runs are flagged (``shared_host``) and a warning is emitted.

    Returns
    -------
    Comparison
        Runs in sweep order (repetition, backend, optimizer). ``settings["store"]`` reports how
        many runs were reused from the store and how many were executed.

    Raises
    ------
    ValueError, TypeError
        A ``problem`` that is no Problem, ``optimizers`` that are no list of optimizers, bad
        optimizer names or hyperparameters, unknown backends, a bad device name or an absent
        device, bad budgets, an unusable executor: checked before any run starts.
    BackendUnavailable
        With ``strict=True``, a backend that is not installed.
    NotImplementedError
        ``redraw_data=True`` with a problem that cannot redraw its data.
    optcmp.store.StoreMismatchError
        The store holds another problem or another store format version.
    optcmp.store.Interrupted
        Ctrl-C (a ``KeyboardInterrupt``): finished runs are kept (in the store, and in the
        exception's ``comparison``), the runs in progress are discarded, and the message says
        how to resume.
    """
    _check_problem(problem)
    if isinstance(optimizers, (str, OptimizerSpec)) or callable(optimizers):
        optimizers = [optimizers]  # type: ignore[list-item]
    if not isinstance(optimizers, Iterable) or isinstance(optimizers, (dict, bytes)):
        raise TypeError("optimizers must be a list of optimizer specs, factories or names "
                        f"(e.g. [optcmp.gd, 'lbfgs']), got {_type_name(optimizers)}")
    specs = [as_spec(o) for o in optimizers]
    if not specs:
        raise ValueError("optimizers is empty; give at least one (e.g. [optcmp.gd, optcmp.lbfgs])")
    names = _normalize_backends(backends)
    device = check_device(device)
    dtype = check_dtype(dtype)
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    check_threads(threads)
    labels = [s.label for s in specs]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        specs = [s if labels.count(s.label) == 1 else
                 OptimizerSpec(s.name, s.hyperparameters, s.impl, s.describe()) for s in specs]
    for s in specs:  # an impl a backend lacks is an input error: say so before running anything
        for b in names:
            resolve_adapter(s, b)
    opt = problem.optimum()
    rule = stopping if stopping is not None else make_stopping(
        problem, tol=tol, max_iter=max_iter, max_time=max_time, max_evals=max_evals)
    _check_rule(rule, problem, None if opt is None else opt.fun)
    if executor is not None:
        from optcmp.executors import check_executor

        check_executor(executor, problem)

    from optcmp.backends import is_available

    missing = [b for b in names if not is_available(b)]
    if missing and strict:
        get_backend(missing[0])  # raises BackendUnavailable with the install hint
    for b in missing:
        warnings.warn(f"backend {b!r} is not installed; its runs are recorded as skipped "
                      f"(pip install 'optcmp[{BACKENDS[b].extra}]')", stacklevel=2)
    if not is_cpu_device(device):
        _preflight_device(names, missing, device, dtype, executor)

    data_seed = int(problem.spec().get("seed", 0) or 0)
    rep_problems: dict[int, Problem] = {0: problem}
    if redraw_data and repeats > 1:  # fail before any run when the problem cannot redraw
        rep_problems[1] = problem.with_seed(data_seed + 1)

    def problem_for(r: int) -> Problem:
        if not redraw_data or r == 0:
            return problem
        if r not in rep_problems:
            rep_problems[r] = problem.with_seed(data_seed + r)
        return rep_problems[r]

    from optcmp.executors import RunTask, run_tasks

    tasks: list[RunTask] = []
    for r in range(repeats):
        for b in names:
            for s in specs:
                skip = (f"backend {b!r} is not installed (pip install "
                        f"'optcmp[{BACKENDS[b].extra}]')") if b in missing else None
                tasks.append(RunTask(index=len(tasks), key="", optimizer=s, backend=b,
                                     device=None if b == "numpy" else device, dtype=dtype, seed=seed + r, repeat=r,
                                     stopping=rule, eval_every=eval_every, threads=threads,
                                     callback=callback,
                                     skip_message=skip))
    settings: dict[str, Any] = {
        "target": " | ".join(x.describe() for x in rule.rules() if x.kind == "target"),
        "stopping": rule.to_dict(), "repeats": repeats, "seed": seed, "dtype": dtype,
        "device": device or "cpu", "backends": names, "redraw_data": bool(redraw_data),
        "threads": threads}
    optimum = None if opt is None else {"fun": opt.fun, "method": opt.method, "time": opt.time}
    env = environment()

    results: dict[int, RunResult] = {}
    run_store = None
    if store is not None:
        from optcmp.store import RunStore, run_key

        for t in tasks:
            t.key = run_key(problem_for(t.repeat), t.optimizer, backend=t.backend, device=t.device,
                            dtype=t.dtype, seed=t.seed, stopping=rule, eval_every=eval_every,
                            threads=threads)
        run_store = RunStore.open(store, problem, {"settings": settings, "optimum": optimum,
                                                   "environment": env})
        for t in tasks:
            old = run_store.get(t.key)
            if old is not None:
                res = copy.copy(old)
                res.label, res.repeat = t.optimizer.label, t.repeat
                results[t.index] = res
    reused = len(results)
    pending = [t for t in tasks if t.index not in results]
    executed: list[RunResult] = []
    from tqdm.auto import tqdm

    bar = tqdm(total=len(tasks), initial=reused, disable=not progress, file=sys.stderr,
               unit="run", leave=False, dynamic_ncols=True)

    def on_result(task: RunTask, res: RunResult, storable: bool) -> None:
        results[task.index] = res
        executed.append(res)
        if run_store is not None and storable:
            run_store.append(task.key, res)
        if executor is not None:  # runs finish out of order elsewhere: say which one finished
            bar.set_description(f"done: {task.optimizer.label} on {task.backend}")
        bar.update(1)

    def on_start(task: RunTask) -> None:  # sequential: label the bar with the run in progress
        bar.set_description(f"{task.optimizer.label} on {task.backend}")

    def make(runs: list[RunResult]) -> Comparison:
        st = dict(settings)
        if run_store is not None:
            st["store"] = {"path": os.path.abspath(run_store.path), "reused": reused,
                           "executed": len(executed), "write_seconds": run_store.write_seconds}
        return Comparison(runs, problem=problem.spec(), optimum=optimum, settings=st,
                          environment=env)

    try:
        if redraw_data:  # one batch of runs per repetition, each on its own data
            for r in range(repeats):
                group = [t for t in pending if t.repeat == r]
                if group:
                    run_tasks(group, problem_for(r), on_result, executor, on_start)
        else:
            run_tasks(pending, problem, on_result, executor, on_start)
    except KeyboardInterrupt as exc:
        from optcmp.store import Interrupted

        done = [results[t.index] for t in tasks if t.index in results]
        where = os.fspath(store) if store is not None else None
        if where is not None:
            msg = (f"interrupted: {len(done)} of {len(tasks)} runs are finished and kept in "
                   f"{where}; the run(s) in progress were discarded. To resume, run the same "
                   f"command again with the same store ({where}): finished runs are read back, "
                   "only the others run.")
        else:
            msg = (f"interrupted: {len(done)} of {len(tasks)} runs finished (kept in this "
                   "exception's .comparison); the run(s) in progress were discarded. Pass "
                   "store='runs.jsonl' (optcmp run --store runs.jsonl) to keep finished runs "
                   "on disk and resume later.")
        raise Interrupted(msg, make(done), where, len(done), len(tasks)) from exc
    finally:
        bar.close()
        if run_store is not None:
            run_store.close()
    shared = [r for r in executed if r.shared_host]
    if shared:
        _warn_shared_host(shared, len(executed), executor)
    return make([results[t.index] for t in tasks])


def _warn_shared_host(shared: list[RunResult], n_executed: int, executor: Any) -> None:
    """The one warning about runs whose timings contended (worded by cause).

    The runs are marked as warned about, so the fairness checks of the same runs
    (:func:`optcmp.stats.check_fairness`, e.g. from ``summary_table()``) do not repeat it.
    """
    from optcmp.stats import mark_shared_host_warned

    peak = max(r.concurrency for r in shared)
    if executor is None:
        msg = (f"{len(shared)} of {n_executed} runs overlapped with optcmp runs in other "
               f"processes on this host (up to {peak} at once): their timings contend and are "
               "flagged shared_host; for time comparisons run one optcmp process at a time")
    else:
        msg = (f"{len(shared)} of {n_executed} runs shared their host with other runs (up to "
               f"{peak} at once): their timings contend and are flagged shared_host; time "
               "comparisons need the default sequential execution (executor=None)")
    warnings.warn(msg, UserWarning, stacklevel=3)
    mark_shared_host_warned(shared)


def _skipped(problem: Problem, spec: OptimizerSpec, backend: str, dtype: str, seed: int,
             repeat: int, message: str) -> RunResult:
    return RunResult(problem=problem.name, optimizer=spec.name, label=spec.label, backend=backend,
                     dtype=dtype, hyperparameters=dict(spec.hyperparameters), seed=seed,
                     repeat=repeat, status="skipped", message=message,
                     n_params=problem.n_params, n_samples=problem.n_samples,
                     problem_spec=problem.spec())
