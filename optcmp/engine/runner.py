"""One run: a problem, an optimizer spec and a :class:`RunConfig` in, a :class:`RunResult` out.

:func:`run` is the single path every run takes (:func:`run`, the sweep of
:func:`optcmp.compare` on any executor, :func:`optcmp.tune`): a
:class:`~optcmp.engine.session.Session` initialises the stepper, a loop driver
(:mod:`optcmp.engine.drivers`) takes the timed steps and reports to the run's
:class:`~optcmp.engine.monitor.Monitor`, :mod:`optcmp.engine.status` words how the run ended.
Only the optimizer's steps are on the clock, and when a target counts as reached is the same
on every backend: see docs/concepts.md, "What is timed and what is not" and "The target".
Each run works on its own reset copy of the stopping rule, so stateful rules give the same
result in sequence and on a thread pool; the result is built once, when the run has ended.
"""

from __future__ import annotations

import copy
import hashlib
import math
import time
import warnings
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np

from optcmp._warn import outside_level
from optcmp.engine.checks import (
    check_batch_size,
    check_problem,
    check_resolution,
    numpy_cpu_warning,
)
from optcmp.engine.config import RunConfig, configured
from optcmp.engine.contract import step_bytes, step_floor, timing_contract, timing_error
from optcmp.engine.drivers import Loop, LoopRecord, choose_driver
from optcmp.engine.host import host_activity, host_name
from optcmp.engine.monitor import Monitor
from optcmp.engine.screen import host_value, needs_gradient
from optcmp.engine.session import CompileInTimedWarning, Session
from optcmp.engine.status import divergence_wins, rounding_wins, run_status
from optcmp.frameworks.base import is_cpu_device
from optcmp.frameworks.numpy.ops import norm2
from optcmp.frameworks.reuse import ReuseKey, problem_parts
from optcmp.optimizers.base import NotApplicable, OptimizerSpec, as_spec, optimizer_info
from optcmp.problems._scratch import dropped_after
from optcmp.problems.base import Problem
from optcmp.results import Conditions, Identity, Outcome, RunResult, Timing, ToTarget, Trace
from optcmp.stopping import Rule
from optcmp.stopping.targets import far_start_note
from optcmp.timing import contended, load_average


def own_rule(rule: Rule) -> Rule:
    """A run's own copy of a stopping rule, reset: no state is shared between runs."""
    mine = copy.deepcopy(rule)
    mine.reset()
    return mine


def skipped_result(problem: Problem, spec: OptimizerSpec, config: RunConfig,
                   message: str, status: str = "skipped", *,
                   started_at: float | None = None) -> RunResult:
    """The result of a run that never started (its backend missing, an error before setup)."""
    now = time.time()
    return RunResult(problem=problem.name, optimizer=spec.name, label=spec.label,
                     backend=config.backend, dtype=config.dtype,
                     hyperparameters=dict(spec.hyperparameters), seed=config.seed,
                     repeat=config.repeat, status=status, message=message,
                     n_params=problem.n_params, n_samples=problem.n_samples,
                     problem_spec=problem.spec(), host=host_name(),
                     started_at=now if started_at is None else started_at, finished_at=now)


def run(problem: Problem, optimizer: OptimizerSpec | str | Any,
        config: RunConfig | None = None, **overrides: Any) -> RunResult:
    """Run one optimizer on one backend from the problem's initial point, to the stopping rule.

    Parameters
    ----------
    problem : Problem
    optimizer : OptimizerSpec, factory or str
        e.g. ``optcmp.gd(learning_rate=0.1)``, ``optcmp.lbfgs`` or ``"adadelta"``.
    config : RunConfig, optional
        Backend, device, dtype, stopping rule or tolerance and budgets, seed, callback,
        threads, execution, gradient. Default ``RunConfig()``: numpy (a native model's own
        framework, :func:`optcmp.problems.from_torch`), float64, tolerance 1e-6, 100,000
        iterations at most (no wall-clock cap unless ``max_time`` is given).
    **overrides
        :class:`RunConfig` fields replacing the config's, e.g. ``backend="torch"``.

    Returns
    -------
    RunResult
        A run that raises inside the optimizer is returned with status ``failed`` and the error
        in ``message``; a diverging run with status ``diverged``; an optimizer that cannot
        sensibly run on the problem (``NotApplicable``, e.g. ``learning_rate="auto"`` without a
        known Lipschitz constant) and a problem that cannot run on the backend (its reason, or
        ``gradient="analytic"`` without a declared gradient formula) with status ``skipped``
        and the reason.

    Raises
    ------
    ValueError
        An impl the backend lacks, an absent device (the message lists the available ones), a
        rule that needs an unknown optimum, a rule without a budget, or a ``batch_size``
        larger than the problem's training rows.
    TypeError
        ``problem`` is not a :class:`~optcmp.problems.base.Problem`, ``optimizer`` is not an
        optimizer spec, factory or name, ``config`` is no RunConfig, or an override is no
        setting.
    BackendUnavailable
        The backend's framework is not installed.

    Warns
    -----
    UserWarning
        A suboptimality target finer than float64 can resolve near ``f*``
        (:func:`~optcmp.engine.checks.check_resolution`): it is never met. A run called here
        directly that met a relative target far from ``f*`` in absolute terms
        (:func:`~optcmp.stopping.targets.far_start_note`; a comparison's table notes it instead).
    """
    live = LiveRun(problem, optimizer, config, **overrides)
    live.advance(None)
    result = live.result()
    if outside_level() == 2 and result.status == "converged":  # the user's call, no table
        note = far_start_note(result.fun, result.f0, result.fstar)
        if note:
            warnings.warn(f"{result.label} on {result.backend} converged: {note}",
                          UserWarning, stacklevel=2)
    return result


class LiveRun:
    """One run that can stop short at an iteration cap and be resumed from there.

    The censoring rounds of a comparison (:mod:`optcmp.sweep.censor`) advance one to a round's
    cap, look at it (:meth:`snapshot`), and resume it or end it there. A paused run keeps its
    whole state, so resumed it takes the very steps of a run never paused (a fused block ends
    at each pause); its timings add up its segments (setup and warm-up once, wall time
    without the time it waited paused, concurrency the most of any segment).
    """

    def __init__(self, problem: Problem, optimizer: OptimizerSpec | str | Any,
                 config: RunConfig | None = None, **overrides: Any) -> None:
        wall0 = time.perf_counter()
        check_problem(problem)
        spec = as_spec(optimizer)
        if config is None and "backend" not in overrides and hasattr(problem, "backend_name"):
            overrides = {**overrides, "backend": problem.backend_name}  # a native model's own
        check_batch_size(problem, spec)
        config = configured(config, overrides, "run")
        if config.backend == "numpy" and not is_cpu_device(config.device):
            numpy_cpu_warning(config.device)
        self._timed = _TimedRun(problem, spec, config, wall0)
        self._ended: tuple[str, str] | None = None
        self._started: float | None = None
        self._peak = 1
        self._waited = 0.0
        self._paused_at = 0.0
        self._result: RunResult | None = None
        self._closed = False

    @property
    def ended(self) -> bool:
        """Whether the run has ended (its :meth:`result` can be built)."""
        return self._ended is not None

    def advance(self, cap: int | None) -> bool:
        """Run on to its end, or until ``cap`` steps are done, whichever comes first."""
        if self._ended is not None or self._closed:
            raise RuntimeError("the run has ended: nothing to advance")
        t0 = time.perf_counter()
        if self._started is None:
            self._started = time.time()
        else:  # the time it waited paused is no part of its wall time
            self._waited += t0 - self._paused_at
        try:
            with host_activity() as activity:
                if self._timed.monitor is None:
                    self._ended = self._timed.execute(cap)
                else:
                    self._ended = self._timed.resume(cap)
        except BaseException:
            self.close()
            raise
        self._paused_at = time.perf_counter()
        self._peak = max(self._peak, activity.peak)
        return self._ended is not None

    def result(self) -> RunResult:
        """The ended run's :class:`RunResult` (built once; the adapter is released then)."""
        if self._result is None:
            if self._ended is None:
                raise RuntimeError("the run has not ended: advance(None) first")
            try:
                self._result = self._build(*self._ended, final=True)
            finally:  # the result holds the final iterate: the adapter's state can go
                self.close()
        return self._result

    def snapshot(self) -> RunResult:
        """The paused run as a result, as if an iteration budget had ended it at the pause
        (status ``max_iter``); the run can still be resumed."""
        if self._ended is not None or self._closed:
            raise RuntimeError("the run has ended: its result() is final")
        self._timed.count_compiles(warn=False)
        return self._build(*self._timed.paused_status(), final=False)

    def close(self) -> None:
        """End the run where it stands and release its adapter (a paused run is dropped)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._timed.close()
        finally:
            self._timed.session.release()

    def _build(self, status: str, message: str, *, final: bool) -> RunResult:
        """The result of the run as it stands, with its segments' environment; its float64
        evaluations run inside the run's thread limits (a BLAS pool woken outside them would
        still be spinning when a resumed segment's clock starts)."""
        with self._timed.session.limits():
            return self._timed.result(status, message, final=final, waited=self._waited,
                                      host=host_name(), started_at=self._started,
                                      finished_at=time.time(), concurrency=self._peak,
                                      shared_host=self._peak > 1)


def start_values(problem: Problem, x0: np.ndarray, value_only: bool) -> tuple[float, Any]:
    """``f(x0)`` on the host and, unless ``value_only``, the gradient there; kept on the
    problem for the runs after (runs of a comparison share ``x0``; the problem's data is its own
    read-only copy) where its objective reads nothing else."""
    described = problem_parts(problem) if problem.reads_only_own_data else None
    key = None if described is None else ReuseKey(
        problem, ("f(x0)", *described, hashlib.sha256(x0.tobytes()).hexdigest(), x0.shape))
    kept = None if key is None else key.store().get(key.parts)
    if kept is not None and (value_only or kept[1] is not None):
        return kept[0], (None if value_only else kept[1].copy())
    if value_only:
        out: tuple[float, Any] = (float(problem.fun64(x0)), None)
    else:
        f0, g0 = problem.value_and_grad(x0, problem.train_data)
        out = float(f0), np.array(g0, dtype=np.float64)
    if key is not None:
        key.store()[key.parts] = out
    return out[0], (None if out[1] is None else out[1].copy())


#: Statuses of a run a budget ended (anywhere between two observations).
BUDGET_ENDS = ("max_iter", "timeout", "max_evals", "max_cpu_time", "censored")


class _TimedRun:
    """The state of one run while it executes; :meth:`result` builds its result once."""

    def __init__(self, problem: Problem, spec: OptimizerSpec, config: RunConfig,
                 wall0: float) -> None:
        self.problem, self.spec, self.config, self.wall0 = problem, spec, config, wall0
        self.session = Session(problem, spec, config)
        opt = problem.optimum()
        self.fstar = None if opt is None else float(opt.fun)
        self.rule = own_rule(config.stopping_rule(problem))
        self.monitor: Monitor | None = None
        self.record = LoopRecord(0, 0, 0)
        self.loop: Loop | None = None
        self.threads: int | None = None
        self.load: list[float | None] = [load_average(), None]

    def _prepare(self) -> None:
        """The backend, ``f(x0)`` and the stopwatch, inside the run's thread limits (a
        framework fixes its pools when it starts; ``f(x0)`` runs BLAS)."""
        session, problem, x0 = self.session, self.problem, self.session.x0
        backend = session.open_backend()
        value_only = session.unsupported is not None or self._value_only()
        with nullcontext() if backend.host_work else dropped_after():
            self.f0, self.g0 = start_values(problem, x0, value_only)
        check_resolution(self.rule, problem, self.config.seed, f0=self.f0)
        self.sw = session.stopwatch()

    def _value_only(self) -> bool:
        """Whether ``x0``'s observation takes fun64 alone: a minibatch run, whose trace has no
        gradient norms, where fun64 is value_and_grad's value and no rule or callback reads one."""
        spec = self.spec
        return (optimizer_info(spec.name).minibatch(spec.hyperparameters)
                and self.config.callback is None and not needs_gradient(self.rule)
                and getattr(type(self.problem).fun64, "same_as_value", False))

    def execute(self, pause: int | None) -> tuple[str, str] | None:
        """Set up and run to the end or the pause; the status and message, None when paused
        (a missing backend raises from here)."""
        outcome: tuple[str, str] | None
        with self.session.limits():
            self._prepare()
            self.threads = self.session.threads()
            bad_fstar = self._optimum_above_start()
            if self.session.unsupported is not None:
                outcome = "skipped", self.session.unsupported
            elif bad_fstar is not None:
                outcome = "failed", bad_fstar
            else:
                outcome = self._guarded(self._start, pause)
        self.load[1] = load_average()
        return outcome

    def resume(self, pause: int | None) -> tuple[str, str] | None:
        """Go on from a pause to the end or the next pause (as :meth:`execute`)."""
        with self.session.limits():
            outcome = self._guarded(self._advance, pause)
        self.load[1] = load_average()
        return outcome

    def _optimum_above_start(self) -> str | None:
        """Why ``f*`` cannot be the minimum (it is above ``f(x0)``: every target would be
        met at the start), or None."""
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

    def _guarded(self, steps: Callable[[int | None], bool],
                 pause: int | None) -> tuple[str, str] | None:
        """``steps(pause)`` (True: the run ended); an optimizer's crash or refusal becomes the
        run's status; None when the run paused."""
        try:
            try:
                ended = steps(pause)
            except BaseException:
                self.count_compiles()
                raise
            if not ended:
                return None
            self.count_compiles()
            assert self.monitor is not None
            return run_status(self.monitor, self.record)
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
                self.record = LoopRecord(self.monitor.nit, nfev, njev)
        return status, message

    def _start(self, pause: int | None) -> bool:
        """Set the adapter up, observe ``x0`` and drive the steps to the end or the pause."""
        self.monitor = monitor = Monitor(
            self.rule, self.sw, self.problem, self.session.x_now, self.f0, self.fstar,
            confirm64=self.config.dtype != "float64", callback=self.config.callback)
        monitor.pause_at = pause
        self.session.start(self.rule)
        monitor.screen = self.session.screen
        self.threads = self.session.threads()
        adapter = self.session.adapter
        assert adapter is not None
        g0 = None if self.g0 is None else norm2(self.g0)
        if monitor.observe(0, 0, self.f0, g0, 0, 0, self.session.x0):
            return True
        self.loop = choose_driver(adapter, self.config.eval_every)(adapter, monitor, self.sw)
        return self._advance(pause)

    def _advance(self, pause: int | None) -> bool:
        """Drive the steps to the end of the run (True) or to the pause (False)."""
        assert self.monitor is not None
        self.monitor.pause_at = pause
        if self.loop is None:
            return True
        try:
            self.record = next(self.loop)
        except StopIteration as end:
            self.record, self.loop = end.value, None
            return True
        return False

    def paused_status(self) -> tuple[str, str]:
        """The status and message of a paused run as if an iteration budget had ended it."""
        return "max_iter", f"paused after {int(self.record.nit)} iterations"

    def close(self) -> None:
        """End a paused run's loop (a framework's loop thread ends with it)."""
        loop, self.loop = self.loop, None
        if loop is not None:
            loop.close()

    def count_compiles(self, warn: bool = True) -> None:
        """Record the compilations inside the timed region; warn when there were any."""
        n = self.session.compiles_since_start()
        if n is None:
            return
        self.session.how.compiles_in_timed = n
        adapter = self.session.adapter
        if adapter is not None and (adapter.compiled != self.session.how.compiled
                                    or adapter.compiled.endswith("eager fallback")):
            self.session.how.compiled = adapter.compiled  # e.g. torch.compile's eager fallback
            warnings.warn(f"{self.spec.label} on {self.config.backend} ran "
                          f"{adapter.compiled}: its compiler gave up, and its steps ran "
                          "uncompiled", CompileInTimedWarning, stacklevel=outside_level())
        if n and warn:
            warnings.warn(
                f"{n} compilation(s) or trace(s) happened inside the timed region of "
                f"{self.spec.label} on {self.config.backend} "
                f"({self.session.how.compiled}): its time includes compile time (a "
                "batch shape or input the warm-up did not see)",
                CompileInTimedWarning, stacklevel=outside_level())

    def _stop_clock(self) -> None:
        if self.sw.running:
            self.sw.pause()

    # ------------------------------------------------------------------ the result
    def _final_point(self) -> tuple[np.ndarray, float | None, dict[str, float]]:
        """``x``, ``fun`` (float64 re-evaluation) and metrics of the iterate the run returns."""
        adapter, monitor = self.session.adapter, self.monitor
        x: np.ndarray = self.session.x0.copy()
        fun: float | None = None
        metrics: dict[str, float] = {}
        if adapter is None:
            return x, fun, metrics
        try:
            hit_x = None if monitor is None else monitor.hit_x
            if hit_x is None:
                hit_x = self.record.x
            x = adapter.x_numpy() if hit_x is None else hit_x
            with np.errstate(all="ignore"):
                fun = self._known_value(monitor is not None and monitor.hit_x is not None)
                fun = host_value(self.problem, x) if fun is None else fun
                metrics = self.problem.metrics(x)
        except Exception:  # noqa: BLE001 - keep whatever was recorded
            pass
        return x, fun, metrics

    def _known_value(self, at_hit: bool) -> float | None:
        """The host judge's value at the iterate the run returns, where it judged it."""
        monitor = self.monitor
        if monitor is None:
            return None
        if at_hit:
            return monitor.hit_fun
        last = monitor.last_host
        if self.record.x is not None or last is None or last[0] != self.record.nit:
            return None
        return last[1]

    def _epochs(self, nit: int) -> float | None:
        adapter = self.session.adapter
        if adapter is None or not adapter.stochastic:
            return None
        try:
            spe = adapter.steps_per_epoch
        except AttributeError:  # setup failed before the minibatch order existed
            spe = None
        return nit / spe if spe else None

    def result(self, status: str, message: str, *, final: bool = True, waited: float = 0.0,
               host: str = "", started_at: float | None = None,
               finished_at: float | None = None, concurrency: int = 1,
               shared_host: bool = False) -> RunResult:
        """The run's :class:`RunResult`, built once from its five parts (or a paused run's,
        :meth:`LiveRun.snapshot`)."""
        problem, spec, session, record, config = (self.problem, self.spec, self.session,
                                                   self.record, self.config)
        backend, how, sw = session.backend, session.how, self.sw
        x, fun, metrics = self._final_point()
        if getattr(session.adapter, "noop_steps", None) is not None:
            session.adapter.count_noop()  # type: ignore[union-attr]
        how.noop_steps = getattr(session.adapter, "noop_steps", None)
        dtype = session.native_dtype or backend.dtype
        if final:
            status, message = divergence_wins(status, message, fun, rule=self.rule,
                                              nit=int(record.nit), f0=self.f0,
                                              fstar=self.fstar)
            status, message = rounding_wins(status, message, how.noop_steps,
                                            int(record.nit), dtype)
        hit = None if self.monitor is None else self.monitor.hit
        if (final and fun is not None and self.monitor is not None and status in BUDGET_ENDS
                and getattr(session.adapter, "stochastic", False)):  # observed every eval_every
            self.monitor.end_row(int(record.nit), fun, int(record.nfev), int(record.njev))
        cpu = sw.cpu_elapsed if sw.intervals else None
        contract, error = self._contract()
        identity = Identity(
            problem=problem.name, optimizer=spec.name, label=spec.label, backend=backend.name,
            device=backend.device, dtype=dtype, impl=session.impl,
            implementation=session.implementation, framework_version=backend.version,
            hyperparameters=session.hyperparameters, seed=config.seed, repeat=config.repeat,
            problem_spec=problem.spec(), reduction=problem.reduction, n_params=problem.n_params,
            n_samples=problem.n_samples, implemented_by=session.implemented_by)
        outcome = Outcome(
            x=x, fun=math.nan if fun is None else fun, success=hit is not None, status=status, message=message,
            nit=int(record.nit), nfev=int(record.nfev), njev=int(record.njev),
            epochs=self._epochs(int(record.nit)), f0=self.f0, fstar=self.fstar,
            target=" | ".join(r.describe() for r in self.rule.rules() if r.kind == "target"),
            metrics=metrics, trace=Trace() if self.monitor is None else self.monitor.trace())
        to_target = ToTarget() if hit is None or self.monitor is None else ToTarget(
            *hit, cpu_time=self.monitor.hit_cpu)
        timing = Timing(
            time=sw.elapsed, warmup=session.warmup_time, setup=session.setup_time,
            wall=time.perf_counter() - self.wall0 - waited, cpu_time=cpu,
            load_start=self.load[0], load_end=self.load[1],
            contended=is_cpu_device(backend.device) and contended(sw.elapsed, cpu),
            started_at=started_at, finished_at=finished_at)
        conditions = Conditions(
            threads=self.threads, host=host, concurrency=concurrency, shared_host=shared_host,
            compiled=how.compiled, layout=how.layout, execution=how.execution,
            compiles_in_timed=how.compiles_in_timed, gradient=how.gradient, contract=contract,
            timing_error=error, pools=dict(how.pools), last_batch=how.last_batch,
            drop_last=how.drop_last, noop_steps=how.noop_steps, gather=how.gather,
            update_path=how.update_path, observations=how.observations)
        return RunResult.from_parts(identity, outcome, to_target, timing, conditions)

    def _contract(self) -> tuple[dict[str, Any], str]:
        """The run's timing contract and, where a step beat the bandwidth floor, the error."""
        session = self.session
        if session.adapter is None:
            return {}, ""
        adapter, backend = session.adapter, session.backend
        spe = getattr(adapter, "steps_per_epoch", None) if adapter.stochastic else None
        floor = step_floor(step_bytes(self.problem, backend.dtype, spe), backend.device)
        return (timing_contract(backend, self.threads, floor, self.sw.cpu),
                timing_error(self.sw.elapsed, int(self.record.nit), floor))


__all__ = ["LiveRun", "own_rule", "run", "skipped_result"]
