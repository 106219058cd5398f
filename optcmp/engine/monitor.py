"""The monitor: everything a run does off the clock between two timed steps.

Trace, stopping checks, float64 confirmation of a float32 target, metrics and the callback. One
monitor belongs to one run, with its own copy of the rule, so concurrent runs share no state; the
loop drivers (:mod:`optcmp.engine.drivers`) report to it and never reach the problem.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp._scipy import optimize
from optcmp.engine.config import Callback
from optcmp.engine.screen import KeptRow, Screen, cleared, host_value, needs_gradient
from optcmp.frameworks.numpy.ops import norm2
from optcmp.results import Trace
from optcmp.stopping import MaxEvals, MaxIter, Rule, State, by_priority
from optcmp.timing import Stopwatch

if TYPE_CHECKING:
    from optcmp.problems.base import Problem

#: An observed iterate, or a function copying it to the host when someone needs it.
LazyX = Callable[[], np.ndarray] | np.ndarray | None


class Monitor:
    """Off-the-clock bookkeeping of one run: trace, stopping checks, confirmation, callback."""

    def __init__(self, rule: Rule, sw: Stopwatch, problem: Problem,
                 x_now: Callable[[], np.ndarray], f0: float, fstar: float | None,
                 confirm64: bool, callback: Callback | None) -> None:
        self.rule = rule
        self.sw = sw
        self.problem = problem
        self.x_now = x_now
        self.f0 = f0
        self.fstar = fstar
        self.confirm64 = confirm64
        self.callback = callback
        self._result_type: Any = None if callback is None else optimize().OptimizeResult
        self.needs_metrics = tuple(m for r in rule.rules() for m in r.needs_metrics)
        #: the full gradient is computed only for a rule that reads its norm, or the callback
        self.needs_grad = callback is not None or needs_gradient(rule)
        #: the run's screen (:mod:`optcmp.engine.screen`), set once the stepper is set up
        self.screen: Screen | None = None
        self.rows: list[tuple[int, float, float, float, int, int, bool]] = []
        self.fired: Rule | None = None
        self.stopped = False
        self.callback_stop = False
        self.hit: tuple[float, int, int, int] | None = None
        self.hit_x: np.ndarray | None = None
        #: the host judge's value at :attr:`hit_x`, where the judge met the target
        self.hit_fun: float | None = None
        #: ``(nit, value)`` of the host judge's last observation (the result's value there)
        self.last_host: tuple[int, float] | None = None
        self._last_at = min((r.n for r in rule.rules() if isinstance(r, MaxIter)),
                            default=None)
        self.hit_cpu: float | None = None
        self.nit = 0
        self.last: State | None = None
        self.pause_at: int | None = None
        self.gate: Callable[[], bool] | None = None
        self._delegated: set[int] = set()
        self._checked = by_priority(rule.rules())

    def pausing(self, nit: int) -> bool:
        """Whether the run pauses after ``nit`` steps (:attr:`pause_at` reached)."""
        return self.pause_at is not None and nit >= self.pause_at

    def delegate_budgets(self) -> dict[str, int | None]:
        """Hand the iteration and evaluation budgets to a loop adapter (scipy enforces them)."""
        out: dict[str, int | None] = {"max_iter": None, "max_evals": None}
        for r in self.rule.rules():
            for name, kind in (("max_iter", MaxIter), ("max_evals", MaxEvals)):
                if isinstance(r, kind):
                    old = out[name]
                    out[name] = r.n if old is None else min(old, r.n)
                    self._delegated.add(id(r))
        self._checked = [r for r in self._checked if id(r) not in self._delegated]
        return out

    def _first(self, s: State) -> Rule | None:
        """The rule that stops the run at ``s``, less the budgets handed to a loop adapter
        (:func:`~optcmp.stopping.first_fired`, the order taken once)."""
        for r in self._checked:
            if r.check(s):
                return r
        return None

    def observe(self, nit: int, iterate: int, fun: float | None, grad_norm: float | None,
                nfev: int, njev: int, x: LazyX = None, *, at: float | None = None,
                cpu_at: float | None = None, judged: bool = True) -> bool:
        """Record an observation and check the rule; True means stop (``judged``: False
        for a screen's value, see :meth:`observe_full`)."""
        t = self.sw.elapsed if at is None else at
        cpu = self.sw.cpu_elapsed if cpu_at is None else cpu_at
        self.nit = nit
        s = State(nit=nit, iterate=iterate, time=t, cpu_time=cpu, fun=fun,
                  f0=self.f0, fstar=self.fstar, grad_norm=grad_norm, nfev=nfev, njev=njev)
        self.last = s
        if fun is not None:
            self.rows.append((iterate, t, fun, math.nan if grad_norm is None else grad_norm,
                              nfev, njev, judged))
            if self.needs_metrics:
                s.metrics = self.problem.metrics(self._x(x))
            if self.callback is not None and self._call_back(s, x):
                return True
        fired = self._first(s)
        if fired is None:
            return False
        if fired.kind == "target":
            if self.confirm64 and fun is not None:
                s.fun = self.problem.fun64(self._x(x))
                if not fired.check(s):
                    return False
            self.hit = (t, iterate, nfev, njev)
            self.hit_cpu = cpu
            self.hit_x = None if fun is None else self._x(x)
        self.fired = fired
        self.stopped = True
        return True

    def screens(self, nit: int) -> bool:
        """Whether the observation after ``nit`` steps goes to the :attr:`screen` first (the
        one an iteration budget ends on is the result's value: judged)."""
        return self.screen is not None and nit != self._last_at

    def observe_full(self, nit: int, x: np.ndarray | KeptRow, nfev: int, njev: int, *,
                     at: float | None = None, cpu_at: float | None = None) -> bool:
        """Evaluate the full objective at ``x`` (a host vector, or an iterate a spanning
        block kept) and observe it: the float64 host judge's value (and the gradient's norm
        where :attr:`needs_grad`), or the :attr:`screen`'s value where it clears every
        threshold by its margin (a row not judged)."""
        if self.screen is not None and self.screens(nit):
            s = self.screen(x)
            if cleared(self.screen, s, self.f0, self.fstar, self.rule):
                return self.observe(nit, nit, s, None, nfev, njev, x, at=at, cpu_at=cpu_at,
                                    judged=False)
        problem = self.problem
        xh = self._x(x)
        gn = None
        if self.needs_grad and getattr(type(problem).fun64, "same_as_value", False):
            v, g = problem.value_and_grad(xh, problem.train_data)  # fun64's value, one pass
            f, gn = float(v), norm2(g)
        else:
            f = host_value(problem, xh)
            if self.needs_grad:
                gn = norm2(problem.grad(xh, problem.train_data))
        stop = self.observe(nit, nit, f, gn, nfev, njev, x, at=at, cpu_at=cpu_at)
        self.last_host = nit, f
        if self.hit is not None and self.hit[1] == nit:
            self.hit_fun = f
        return stop

    def retime(self, row0: int, k0: int, t0: float) -> None:
        """Time the last observation now, after its rewound block's steps from ``k0`` ran again:
        its state and a target's hit take the stopwatch's readings, and the block's rows (from
        ``rows[row0]``) share the rerun's span from ``t0`` evenly."""
        t, cpu = self.sw.elapsed, self.sw.cpu_elapsed
        if self.last is not None:
            self.last.time, self.last.cpu_time = t, cpu
        rows = self.rows
        if len(rows) > row0:
            k1 = rows[-1][0]
            for i in range(row0, len(rows)):
                share = (rows[i][0] - k0) / (k1 - k0) if k1 > k0 else 1.0
                rows[i] = (rows[i][0], t0 + share * (t - t0), *rows[i][2:])
        if self.hit is not None:
            self.hit = (t, *self.hit[1:])
            self.hit_cpu = cpu

    def _call_back(self, s: State, x: LazyX) -> bool:
        """Call the callback with scipy's ``intermediate_result``; True when it stops the run."""
        assert self.callback is not None
        # read-only, so no callback changes the run (scipy's L-BFGS-B hands over its live array)
        x_copy = np.array(self._x(x), copy=True)
        x_copy.setflags(write=False)
        ir = self._result_type(x=x_copy, fun=s.fun, nit=s.nit, iterate=s.iterate,
                               time=s.time, nfev=s.nfev, njev=s.njev, grad_norm=s.grad_norm)
        try:
            self.callback(ir)
        except StopIteration:
            self.callback_stop = self.stopped = True
            return True
        return False

    def _x(self, x: LazyX) -> np.ndarray:
        """The observed iterate on the host."""
        if x is None:
            return self.x_now()
        return x() if callable(x) else x

    def on_iteration(self, *, fun: float, grad_norm: float | None, nfev: int, njev: int,
                     x: np.ndarray) -> bool:
        """Called by loop adapters after each iteration, with the clock running."""
        self.sw.pause()
        try:
            self.nit += 1
            if self.observe(self.nit, self.nit, fun, grad_norm, nfev, njev, x):
                return True
            return self.gate is not None and self.gate()
        finally:
            self.sw.resume()

    def end_row(self, nit: int, fun: float, nfev: int, njev: int) -> None:
        """Record a minibatch run's last iterate where a budget ended it between two
        observations: its judged value at the run's elapsed time, so the trace ends where the
        run did (a full-batch run's trace holds every iterate its steps evaluated)."""
        if self.rows and self.rows[-1][0] < nit and self.hit is None:
            self.rows.append((nit, self.sw.elapsed, fun, math.nan, nfev, njev, True))

    def trace(self) -> Trace:
        """The observations as a :class:`~optcmp.results.Trace`."""
        if not self.rows:
            return Trace()
        cols = list(zip(*self.rows))
        return Trace(iteration=np.asarray(cols[0], dtype=np.int64), time=np.asarray(cols[1]),
                     fun=np.asarray(cols[2], dtype=np.float64), grad_norm=np.asarray(cols[3]),
                     nfev=np.asarray(cols[4], dtype=np.int64),
                     njev=np.asarray(cols[5], dtype=np.int64),
                     judged=np.asarray(cols[6], dtype=bool))


__all__ = ["LazyX", "Monitor"]
