"""The screen: the whole training data's objective on the run's own backend, in float64.

A minibatch run's observation needs the objective of the whole data. The float64 host
evaluation judges a target (:func:`host_value`), the same on every backend; a float64 run on
torch, TensorFlow or JAX on a GPU (on a CPU: :data:`SCREEN_ON_CPU`) first evaluates the
objective on its own device, compiled once at setup (:class:`Screen`), and calls the host
judge only where that value, widened by :meth:`Screen.margin`, could meet a target or fire
the divergence rule (docs/concepts.md, "The target").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from optcmp.frameworks.base import is_cpu_device
from optcmp.frameworks.reuse import ReuseKey, problem_parts
from optcmp.problems.base import Problem
from optcmp.stopping import (
    AbsoluteSuboptimality,
    CombinedTarget,
    Divergence,
    GradientNorm,
    LossTarget,
    MaxCPUTime,
    MaxEvals,
    MaxIter,
    MaxTime,
    RelativeChange,
    RelativeSuboptimality,
    Rising,
    Rule,
    Stalled,
    State,
)

if TYPE_CHECKING:
    from optcmp.frameworks.base import Backend
    from optcmp.frameworks.stepper import Stepper

#: float64's unit roundoff.
UNIT_ROUNDOFF = 2.0 ** -53
#: How many times the objective's value its parts may add up to in magnitude (the terms of a
#: cross-entropy, ``logsumexp(z) - z_y``, cancel to a small loss): the screen's margin allows
#: for that much cancellation.
SCREEN_CANCELLATION = 1000.0
#: Rules a run with a screen may have: budgets, the suboptimality and loss targets (met by a
#: low enough value) and the divergence rule, which :func:`cleared` widens the screen's value
#: for, and the early stops on the observations' trend (:class:`~optcmp.stopping.Stalled`,
#: :class:`~optcmp.stopping.Rising`, :class:`~optcmp.stopping.RelativeChange`), which read
#: each observation's value as the trace records it.
SCREENABLE = (MaxIter, MaxEvals, MaxTime, MaxCPUTime, RelativeSuboptimality,
              AbsoluteSuboptimality, LossTarget, CombinedTarget, Divergence, Stalled, Rising,
              RelativeChange)

#: The backends whose runs on a CPU device screen their observations too. On a CPU the host
#: is the device: the judge runs on the same cores, and costs less than TensorFlow's screen
#: and about as much as JAX's, which also compile at setup; torch's screen, eager, costs less
#: (``benchmarks/best_practice.py --screen-on-cpu`` measures both). The tests of the screen
#: name every backend here.
SCREEN_ON_CPU: tuple[str, ...] = ("torch",)


def needs_gradient(rule: Rule) -> bool:
    """Whether a part of ``rule`` reads the full gradient's norm."""
    return any(isinstance(r, GradientNorm) or isinstance(r, CombinedTarget) and r.grad_norm is not None
               for r in rule.rules())


def screenable(rule: Rule) -> bool:
    """Whether every part of ``rule`` is :data:`SCREENABLE` (no gradient, no metric)."""
    return not needs_gradient(rule) and all(isinstance(r, SCREENABLE) for r in rule.rules())


def host_value(problem: Problem, x: np.ndarray) -> float:
    """The float64 objective of the whole training data at ``x``, on the host: the problem's
    :meth:`~optcmp.problems.base.Problem.fun64`, the one judge (optcmp's problems compute it
    without the gradient)."""
    return float(problem.fun64(x))


class Screen:
    """The float64 objective of the whole training data, compiled on the run's backend.

    Parameters
    ----------
    backend : Backend
        The run's backend (float64).
    problem : Problem
    data : dict of str to backend array
        The whole training data as the run placed it (row-major).
    x0 : ndarray
        The initial point: the screen is compiled and warmed on it.
    kept : int, optional
        Rows of the buffer a spanning block keeps its iterates in (0: none): the screen is
        then compiled for those buffers (:class:`KeptIterates`), one call per block, and
        the single-iterate screen only when first called with a host vector.
    """

    def __init__(self, backend: Backend, problem: Problem, data: dict[str, Any],
                 x0: np.ndarray, kept: int = 0) -> None:
        ops = backend.ops
        self.backend, self.data = backend, data
        described = problem_parts(problem)  # kept on the problem for its later runs
        self._reuse = None if described is None else ReuseKey(problem, ("screen", *described))
        self._fn: Any = None
        self._objective = lambda x, d: problem.objective(ops, x, d)
        self._x0 = x0
        #: relative width of :meth:`margin`: ``2 (n + p) u`` times :data:`SCREEN_CANCELLATION`
        self.rtol = 2.0 * (problem.n_samples + problem.n_params) * UNIT_ROUNDOFF \
            * SCREEN_CANCELLATION
        self._each: Any = None
        if kept:
            buf = np.zeros((kept, np.size(x0)))
            buf[0] = np.reshape(x0, -1)
            self._each = cast(Any, backend).compile_each(  # JAX's and TensorFlow's
                self._objective, (buf, data), reuse=self._reuse)
        else:
            self._fn = backend.compile(self._objective, (x0, data), reuse=self._reuse)
        # compiled and warmed at setup, off the clock; once per problem, device and shape
        store = {} if self._reuse is None else self._reuse.store()
        warmed = ("screen warmed", backend.name, backend.compiler, backend.device, backend.dtype,
                  kept)
        if not store.get(warmed):
            _ = self.values(backend.asarray(buf), 1) if kept else self(x0)
            store[warmed] = True

    def __call__(self, x: np.ndarray | KeptRow) -> float:
        """The objective at the host iterate ``x``, evaluated on the backend (a kept
        iterate's: its value from the block's one call, :meth:`KeptIterates.value`)."""
        if isinstance(x, KeptRow):
            return x.value()
        b = self.backend
        if self._fn is None:
            self._fn = b.compile(self._objective, (self._x0, self.data), reuse=self._reuse)
        return float(np.asarray(b.to_numpy(self._fn(b.asarray(x), self.data))))

    def values(self, kept: Any, m: int) -> np.ndarray:
        """The objective at the first ``m`` rows of a spanning block's buffer of kept
        iterates, in one compiled call on the backend (each row the single iterate's
        program), one transfer of the values."""
        return np.asarray(self.backend.to_numpy(self._each(m, kept, self.data)),
                          dtype=np.float64)[:m]

    def margin(self, value: float, f0: float) -> float:
        """How far the host judge's value may lie from the screen's ``value``.

        Both are float64 sums of the same ``n`` rows' terms, each computed with at most
        ``p`` (parameters) rounded operations, in other orders: they differ by at most
        ``2 (n + p) u`` times the magnitude of the parts (``u`` = 2**-53), which is taken as
        :data:`SCREEN_CANCELLATION` times ``|value| + |f0|``.
        """
        return self.rtol * (abs(value) + abs(f0))


def make_screen(stepper: Stepper, problem: Problem, backend: Backend, rule: Rule,
                callback: Any) -> Screen | None:
    """The run's screen, or None where every observation goes to the host judge: a CPU device
    (but for :data:`SCREEN_ON_CPU`), numpy (the host evaluation is its own), a dtype other
    than float64 (a float32 screen's rounding is coarser than targets), full-batch steps (they report their own values), a native model,
    a callback (it receives the gradient's norm), or a rule with state, a gradient or a
    metric. A stepper whose blocks span observations gets it for its buffers of kept
    iterates."""
    data = getattr(stepper, "screen_data", lambda: None)()
    if (backend.name == "numpy" or backend.dtype != "float64" or not stepper.stochastic
            or data is None or callback is not None or hasattr(problem, "backend_name")
            or not screenable(rule)
            or is_cpu_device(backend.device) and backend.name not in SCREEN_ON_CPU):
        return None
    kept = stepper.span_kept + 1 if stepper.spans and stepper.execution == "fused" else 0
    return Screen(backend, problem, data, np.asarray(stepper.x_numpy(), dtype=np.float64),
                  kept if hasattr(backend, "compile_each") else 0)


class KeptIterates:
    """The iterates a spanning block kept at its observations, on the backend: their
    screen values in one call (:meth:`Screen.values`) and their host copies in one
    transfer, each when first asked for.

    Parameters
    ----------
    backend : Backend
    kept : backend array
        The block's buffer of kept iterates, one per row.
    m : int
        Rows the block filled.
    screen : Screen or None
    screened : int
        Leading rows the screen evaluates (the rest go to the host judge).
    """

    def __init__(self, backend: Backend, kept: Any, m: int, screen: Screen | None,
                 screened: int) -> None:
        self.backend, self.kept, self.m = backend, kept, m
        self.screen, self.screened = screen, screened
        self._host: list[np.ndarray] | None = None
        self._values: np.ndarray | None = None

    def rows(self) -> list[KeptRow]:
        """One lazy iterate per filled row."""
        return [KeptRow(self, j) for j in range(self.m)]

    def host(self, j: int) -> np.ndarray:
        """Row ``j`` as a float64 host vector."""
        if self._host is None:
            kept = self.kept
            if isinstance(kept, (list, tuple)):
                self._host = [np.asarray(self.backend.to_numpy(v), dtype=np.float64)
                              .reshape(-1) for v in kept[:self.m]]
            else:
                rows = np.asarray(self.backend.to_numpy(kept), dtype=np.float64)
                self._host = [rows[i].reshape(-1) for i in range(self.m)]
        return self._host[j]

    def value(self, j: int) -> float:
        """The screen's value at row ``j`` (one of the :attr:`screened` rows)."""
        if self._values is None:
            assert self.screen is not None and j < self.screened
            self._values = self.screen.values(self.kept, self.screened)
        return float(self._values[j])


class KeptRow:
    """One kept iterate: called, its host copy (:meth:`KeptIterates.host`)."""

    def __init__(self, kept: KeptIterates, j: int) -> None:
        self.kept, self.j = kept, j

    def __call__(self) -> np.ndarray:
        return self.kept.host(self.j)

    def value(self) -> float:
        """The screen's value here (:meth:`KeptIterates.value`)."""
        return self.kept.value(self.j)


def cleared(screen: Screen, value: float, f0: float, fstar: float | None,
            rule: Rule) -> bool:
    """Whether no host value within the screen's margin of ``value`` could meet a target or
    fire the divergence rule (targets fire on low values, divergence on high or non-finite)."""
    if not math.isfinite(value):
        return False
    m = screen.margin(value, f0)
    low = State(fun=value - m, f0=f0, fstar=fstar)
    high = State(fun=value + m, f0=f0, fstar=fstar)
    return not any(r.check(low) if r.kind == "target" else
                   isinstance(r, Divergence) and r.check(high) for r in rule.rules())


__all__ = ["SCREENABLE", "SCREEN_CANCELLATION", "SCREEN_ON_CPU", "UNIT_ROUNDOFF", "KeptIterates", "KeptRow",
           "Screen", "cleared",
           "host_value", "make_screen", "needs_gradient", "screenable"]
