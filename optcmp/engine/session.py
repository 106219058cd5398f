"""The run session: the stepper's lifecycle for one (problem, optimizer spec, run settings).

A :class:`Session` resolves the stepper and the impl, builds the backend on the run's device
and dtype inside the run's thread limits, says why the problem cannot run there (its own
reason, or a gradient the settings ask for that the problem does not declare), constructs the
stepper with the run's settings and initialises it (placement, execution mode, compilation,
warm-up), then takes the compile counter's baseline; once the run's iterates are read,
:meth:`Session.release` closes the stepper (a kept compiled state goes back).

Two callers share it, so both honour every setting the same way: the timed run
(:func:`optcmp.engine.run`, which then drives the steps with a monitor and a loop driver) and
:func:`optcmp.check_equivalence` (which records a fixed number of untimed steps).
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optcmp._warn import outside_level
from optcmp.engine.config import RunConfig
from optcmp.engine.screen import Screen, make_screen
from optcmp.frameworks import get_backend
from optcmp.frameworks.adapters import resolve_adapter, resolve_model_stepper
from optcmp.frameworks.base import DTYPES, Backend, gradient_kind, is_cpu_device
from optcmp.frameworks.stepper import Adapter, Stepper
from optcmp.implementation import Implementation
from optcmp.optimizers.base import OptimizerSpec
from optcmp.problems.base import Problem
from optcmp.stopping import Rule
from optcmp.threads import current_threads, limit_late_pools, limit_threads, pools_seen
from optcmp.timing import RUNTIME_BACKENDS, Stopwatch, run_cpu_clock


class CompileInTimedWarning(UserWarning):
    """Compilation or tracing happened inside a run's timed region (its time includes it)."""


def why_step(adapter: Stepper, config: RunConfig, rule: Rule | None = None) -> str:
    """The run's own reason to take full-batch steps one by one (a callback or a stopping
    rule that needs every iterate), ``""`` when it has none (see :attr:`RunConfig.execution`)."""
    if adapter.stochastic or config.execution == "step":
        return ""
    if config.callback is not None:
        return "a callback needs every iterate"
    if rule is not None and any(r.needs_metrics for r in rule.rules()):
        return "the stopping rule needs metrics of every iterate"
    return ""


@dataclass
class How:
    """How a run's timed steps ran: its result's conditions that the session knows."""

    compiled: str = ""
    layout: str = ""
    execution: str = ""
    gradient: str = ""
    compiles_in_timed: int | None = None
    pools: dict[str, int] = field(default_factory=dict)
    last_batch: int | None = None
    drop_last: bool | None = None
    noop_steps: int | None = None
    gather: str = ""
    update_path: str = ""
    observations: str = ""


class Session:
    """One optimizer spec on one backend with one run's settings, from setup to warm-up."""

    def __init__(self, problem: Problem, spec: OptimizerSpec, config: RunConfig) -> None:
        self.problem, self.spec, self.config = problem, spec, config
        #: A native model's own dtype (its runs compute in it), else None.
        self.native_dtype: str | None = getattr(problem, "native_dtype", None)
        self.adapter_cls, self.impl = (
            resolve_adapter(spec, config.backend) if self.native_dtype is None
            else resolve_model_stepper(spec, getattr(problem, "framework", "")))
        self.x0 = np.asarray(problem.init_params(config.seed), dtype=np.float64)
        self.unsupported: str | None = problem.unsupported_backend(config.backend)
        self.adapter: Adapter | None = None
        self.screen: Screen | None = None
        self.implementation = ""
        self.implemented_by: Implementation | None = None
        self.hyperparameters: dict[str, Any] = dict(spec.hyperparameters)
        self.how = How()
        self.setup_time = 0.0
        self.warmup_time = 0.0
        self._backend: Backend | None = None
        self._compiles0: int | None = None
        self._compiles_at_pause: int | None = None

    @contextlib.contextmanager
    def limits(self) -> Iterator[None]:
        """The run's thread limits (:func:`~optcmp.threads.limit_threads`), floating-point
        warnings off: everything of the session, its first evaluation included, runs inside."""
        with np.errstate(all="ignore"), limit_threads(self.config.threads, self.config.backend):
            backend = self._backend
            if backend is not None:  # a paused run resumes: set its settings again
                backend.resume_settings()
                if self._compiles0 is not None and self._compiles_at_pause is not None:
                    # what other runs compiled while this one waited is not its own
                    self._compiles0 += backend.compilations() - self._compiles_at_pause
            try:
                yield
            finally:
                if self._backend is not None and self._compiles0 is not None:
                    self._compiles_at_pause = self._backend.compilations()

    @property
    def backend(self) -> Backend:
        """The backend built by :meth:`open_backend`."""
        if self._backend is None:
            raise RuntimeError("the session's backend is not built yet: call open_backend()")
        return self._backend

    def open_backend(self) -> Backend:
        """Build the backend on the run's device and dtype (inside :meth:`limits`).

        A gradient setting the problem cannot honour on this backend (``gradient="analytic"``
        without a declared gradient formula) becomes :attr:`unsupported`.
        """
        config = self.config
        dtype = self.native_dtype or config.dtype  # low precision: the data in float32
        self._backend = get_backend(config.backend, device=config.run_device,
                                    dtype=dtype if dtype in DTYPES else "float32")
        if self.unsupported is None:
            try:
                gradient_kind(self._backend, self.problem, config.gradient)
            except ValueError as exc:
                self.unsupported = str(exc)
        return self._backend

    def stopwatch(self) -> Stopwatch:
        """A stopwatch that syncs the run's device before every clock read."""
        b, threads = self.backend, self.config.threads
        if b.name in RUNTIME_BACKENDS and threads == 1 and type(b).get_threads() != 1:
            threads = None  # pools started before this run, larger: every thread counts
        clock = run_cpu_clock(b.name, threads, is_cpu_device(b.device))
        return Stopwatch(b.sync, cpu_clock=clock)

    def threads(self) -> int | None:
        """Threads of the backend's compute pool now (recorded in the result); the pools
        every library computes with go into :attr:`how` (``RunResult.conditions.pools``)."""
        self.how.pools = pools_seen(self.config.backend)
        return current_threads(self.config.backend)

    def start(self, rule: Rule | None = None) -> Adapter:
        """Construct and initialise the stepper (untimed); then the compile counter's
        baseline and the thread pools of libraries the setup loaded."""
        backend, config = self.backend, self.config
        t0 = time.perf_counter()
        adapter = self.adapter_cls(self.spec, self.problem, backend, self.x0, config.seed,
                                   gradient=config.gradient)
        self.adapter = adapter
        self.implementation = adapter.implementation
        self.implemented_by = adapter.implemented_by
        adapter.init(config.execution, why_step(adapter, config, rule))
        self.hyperparameters = dict(adapter.hyper)
        execution = adapter.execution
        if adapter.fallback:
            warnings.warn(f"execution='fused' is not possible for {adapter.spec.label} on "
                          f"{config.backend}: {adapter.fallback}; it runs execution='step' "
                          "(recorded)", UserWarning, stacklevel=outside_level())
        self.implementation = adapter.implementation or self.implementation
        self.implemented_by = adapter.implemented_by
        placed = getattr(adapter, "placement", "")
        self.how = How(adapter.compiled, f"{adapter.layout}, {placed}" if placed else
                       adapter.layout, execution, adapter.gradient,
                       pools=self.how.pools, gather=getattr(adapter, "gather", ""),
                       update_path=getattr(adapter, "update_path", ""))
        order = getattr(adapter, "order", None) if adapter.stochastic else None
        if order is not None:  # the minibatch policy: the last batch's rows, dropped or kept
            a, b = order.bounds(order.steps_per_epoch - 1)
            self.how.last_batch, self.how.drop_last = int(b - a), bool(order.drop_last)
        #: the run's screen of the whole data's objective (:mod:`optcmp.engine.screen`)
        self.screen = None if rule is None else make_screen(adapter, self.problem, backend,
                                                            rule, config.callback)
        self.how.observations = ("screen" if self.screen is not None else "judge"
                                 if adapter.stochastic or adapter.evaluates_apart else "")
        backend.sync()
        self.warmup_time = adapter.warmup_time
        self.setup_time = time.perf_counter() - t0 - self.warmup_time
        self._compiles0 = backend.compilations()
        limit_late_pools(config.threads)  # pools of libraries the setup loaded
        return adapter

    def x_now(self) -> np.ndarray:
        """The adapter's current iterate copied to the host (float64)."""
        if self.adapter is None:
            raise RuntimeError("the session's adapter is not constructed yet: call start()")
        return self.adapter.x_numpy()

    def release(self) -> None:
        """Let the adapter give back what it borrowed (:meth:`Stepper.close`), once the
        run's iterates are read; nothing before :meth:`start`. The adapter is not used
        afterwards."""
        if self.adapter is not None:
            self.adapter.close()

    def compiles_since_start(self) -> int | None:
        """Compilations or traces since the warm-up ended (None before :meth:`start` did)."""
        if self._compiles0 is None:
            return None
        return self.backend.compilations() - self._compiles0


__all__ = ["CompileInTimedWarning", "Session", "why_step"]
