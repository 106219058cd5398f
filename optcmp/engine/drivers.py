"""Loop drivers: how a run's timed steps are driven, behind one interface.

A driver takes an initialised :class:`~optcmp.frameworks.stepper.Stepper`, the run's monitor
(which already observed ``x0``) and its stopwatch, and runs timed steps until the monitor says
stop; nothing runs between two timed steps but the monitor's observation, off the clock.
:func:`choose_driver` picks one of :func:`step_loop` (one step, one observation),
:func:`fused_full_batch_loop`, :func:`fused_minibatch_loop` (blocks of steps; how their times
are exact: docs/backends.md, "Execution modes") and :func:`framework_loop` (a library's own loop).

A driver is a generator: it stops short at the monitor's
:attr:`~optcmp.engine.monitor.Monitor.pause_at` (a censoring round's cap), yields the
:class:`LoopRecord` so far with the clock paused, and goes on with the same state when resumed
(:class:`~optcmp.engine.runner.LiveRun`). Fused loops end a block at the pause; the step loop
pauses after the step that reaches it; a library's own loop waits inside its callback, on a
thread of its own.
"""

from __future__ import annotations

import contextvars
import functools
import math
import queue
import threading
import warnings
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from optcmp.engine.monitor import Monitor
from optcmp.engine.screen import KeptIterates
from optcmp.frameworks.stepper import Block, LoopAdapter, Stepper
from optcmp.stopping import MaxEvals, MaxIter
from optcmp.timing import Stopwatch


@dataclass
class LoopRecord:
    """What a driver reports when its loop has ended."""

    nit: int
    nfev: int
    njev: int
    x: np.ndarray | None = None
    report: dict[str, Any] | None = None


#: The generator a driver returns: it yields at every pause, returns when the run has ended.
Loop = Generator[LoopRecord, None, LoopRecord]
#: ``driver(stepper, monitor, sw) -> Loop`` (:func:`choose_driver` binds ``eval_every``)
Driver = Callable[[Stepper, Monitor, Stopwatch], Loop]


def _every(stepper: Stepper, eval_every: int | None) -> int:
    """Steps between two full observations: ``eval_every``, else an epoch of minibatches; at
    most 2^31 - 1 (compiled blocks count steps in int32; no run observes later)."""
    every = int(eval_every or (stepper.steps_per_epoch if stepper.stochastic else 1) or 1)
    return min(every, 2**31 - 1)


def step_loop(stepper: Stepper, monitor: Monitor, sw: Stopwatch,
              eval_every: int | None) -> Loop:
    """Timed steps, each followed by an untimed observation, until the monitor says stop."""
    # a judged iterate apart from the stepped one is evaluated by the monitor, as a minibatch's
    stochastic = stepper.stochastic or stepper.evaluates_apart
    every = _every(stepper, eval_every)
    # A full-batch step reports f(x_{k-1}) after it has moved to x_k: keep a host copy of x_{k-1},
    # off the clock, for callbacks, metrics, the float64 confirmation and the final result (a
    # converged run returns the iterate that met the target).
    prev: np.ndarray | None = None
    k = nfev = njev = 0
    budget = _iteration_budget(monitor)
    while True:
        stepper.ready(1)
        if not stochastic:
            prev = stepper.x_numpy()
        sw.resume()
        blk = stepper.run(1, iterations=max(budget - k, 1))
        sw.pause()
        before, k = k, k + (1 if blk.nit is None else blk.nit)  # the library's own count
        nfev += blk.nfev
        njev += blk.njev
        if not stochastic:
            stop = _observe_full_batch(stepper, monitor, blk, (before, k), nfev, njev, prev)
        else:
            stop = _observe_minibatch(stepper, monitor, k, every, nfev, njev)
        if stop:
            return LoopRecord(k, nfev, njev)
        reason = None if blk.stopped is None else blk.stopped()
        if reason is not None:  # the library ended by itself: its last iterate is observed
            monitor.observe_full(k, stepper.x_numpy(), nfev, njev)
            return LoopRecord(k, nfev, njev, report={"status": "stalled", "message": reason})
        if monitor.pausing(k):
            yield LoopRecord(k, nfev, njev)


def _observe_full_batch(stepper: Stepper, monitor: Monitor, blk: Block, span: tuple[int, int],
                        nfev: int, njev: int, prev: np.ndarray | None) -> bool:
    """The observations of a full-batch step from iterate ``span[0]`` to ``span[1]``, off the
    clock: its incoming iterate's value (``f(x0)`` is already recorded; a value the step before
    reported is not observed twice), and the new iterate's when the step evaluated it
    (``end_value``: ``torch.optim.LBFGS``'s line search); True: stop."""
    before, k = span
    end = getattr(stepper, "end_value", None)
    if before > 0 and not getattr(stepper, "incoming_known", False):
        gn = None if blk.grad_norm is None else float(blk.grad_norm)
        if monitor.observe(k, before, float(blk.fun), gn, nfev, njev, prev):
            return True
    elif end is None:  # the counts only
        return monitor.observe(k, before, None, None, nfev, njev)
    if end is None:
        return False
    return monitor.observe(k, k, float(end[0]), float(end[1]), nfev, njev, stepper.x_numpy())


def _iteration_budget(monitor: Monitor) -> int:
    """The smallest iteration budget of the run's rule (read once, before the loop)."""
    return min((r.n for r in monitor.rule.rules() if isinstance(r, MaxIter)), default=1 << 30)


def _observe_minibatch(stepper: Stepper, monitor: Monitor, k: int, every: int, nfev: int,
                       njev: int) -> bool:
    """The observation after ``k`` minibatch steps: the full objective every ``every`` steps
    (the monitor evaluates it, off the clock), the counts only in between; True: stop."""
    if k % every == 0:
        return monitor.observe_full(k, stepper.x_numpy(), nfev, njev)
    return monitor.observe(k, k, None, None, nfev, njev)


def _budget_left(monitor: Monitor, k: int, nfev: int) -> int:
    """Steps left before an iteration or evaluation budget fires (one evaluation per step)
    or the run pauses."""
    left = 1 << 30 if monitor.pause_at is None else monitor.pause_at - k
    for r in monitor.rule.rules():
        if isinstance(r, MaxIter):
            left = min(left, r.n - k)
        elif isinstance(r, MaxEvals):
            left = min(left, r.n - nfev)
    return max(left, 1)


def _host_values(stepper: Stepper, values: Any, n: int) -> list[float]:
    """The first ``n`` backend scalars of a block's output as floats (off the clock)."""
    b = stepper.backend
    if isinstance(values, (list, tuple)):
        return [math.nan if v is None else float(np.asarray(b.to_numpy(v)))
                for v in values[:n]]
    return [float(v) for v in np.asarray(b.to_numpy(values), dtype=np.float64)[:n]]


def _replay(stepper: Stepper, saved: Any, j: int) -> np.ndarray:
    """The iterate ``j`` steps after the state ``saved``, by the same fused block, off the
    clock; the stepper's state is left as it was."""
    now = stepper.save()
    stepper.load(saved)
    if j:
        stepper.run(j)
    x = stepper.x_numpy()
    stepper.load(now)
    return x


#: A fused full-batch block is at most this fraction of the steps done before it, so that the
#: interpolated time of a step inside it is off by at most that fraction of the elapsed time.
BLOCK_FRACTION = 0.01


def fused_full_batch_loop(stepper: Stepper, monitor: Monitor, sw: Stopwatch) -> Loop:
    """Full-batch steps in fused blocks of ``n <= max(1, BLOCK_FRACTION * k)`` steps after
    ``k``; step ``j`` of a block gets the time ``t0 + (j + 1) / n * (t1 - t0)``, and the iterate
    that met the target is recomputed off the clock from the block's saved start."""
    k = nfev = njev = 0
    while True:
        n = stepper.ready(min(max(1, int(BLOCK_FRACTION * k)), stepper.block_max,
                              _budget_left(monitor, k, nfev)))
        saved, t0 = stepper.save(), sw.elapsed
        sw.resume()
        blk = stepper.run(n)
        sw.pause()
        t1 = sw.elapsed
        funs = _host_values(stepper, blk.fun, n)
        gns = _host_values(stepper, blk.grad_norm, n)
        for j in range(n):
            kk = k + j + 1
            nfev += blk.nfev
            njev += blk.njev
            at = t0 + (t1 - t0) * (j + 1) / n
            if kk == 1:  # f(x0) is already recorded in float64
                stop = monitor.observe(1, 0, None, None, nfev, njev, at=at)
            else:
                stop = monitor.observe(kk, kk - 1, funs[j], gns[j], nfev, njev,
                                       functools.partial(_replay, stepper, saved, j), at=at)
            if stop:
                last = (None if j == n - 1 or monitor.hit is not None
                        else _replay(stepper, saved, j + 1))
                return LoopRecord(kk, nfev, njev, last)
        k += n
        if monitor.pausing(k):
            yield LoopRecord(k, nfev, njev)


#: Seconds one fused minibatch block may last at the run's measured step rate: fast steps are
#: not cut into many calls, and a time budget overshoots by about this much at most.
BLOCK_SECONDS = 0.05


def _block_cap(k: int, sw: Stopwatch) -> int:
    """Most steps of the next fused minibatch block after ``k`` timed steps:
    ``max(256, k // 2)``, or more when that many steps last under :data:`BLOCK_SECONDS`."""
    cap = max(256, k // 2)
    if k and sw.elapsed > 0.0:
        cap = max(cap, int(BLOCK_SECONDS * k / sw.elapsed))
    return cap


def fused_minibatch_loop(stepper: Stepper, monitor: Monitor, sw: Stopwatch,
                         eval_every: int | None) -> Loop:
    """Minibatch steps in fused blocks (at most :func:`_block_cap` steps, never across a
    budget), with exact times.

    A block ends at every observation, except on a stepper that
    :attr:`~optcmp.frameworks.stepper.Stepper.spans` them (TensorFlow, JAX): its block keeps
    the iterates at the observations it passes, the monitor evaluates them afterwards, and
    when one of them stops the run, the run goes back to the block's saved start and runs,
    timed, exactly the steps up to it (the iterate checked to equal the one kept).
    """
    every = _every(stepper, eval_every)
    if stepper.spans:
        return (yield from _spanning_minibatch_loop(stepper, monitor, sw, every))
    k = nfev = njev = 0
    while True:
        n = stepper.ready(min((k // every + 1) * every - k, _block_cap(k, sw),
                              _budget_left(monitor, k, nfev)))
        sw.resume()
        blk = stepper.run(n)
        sw.pause()
        k += n
        nfev += n * blk.nfev
        njev += n * blk.njev
        if _observe_minibatch(stepper, monitor, k, every, nfev, njev):
            return LoopRecord(k, nfev, njev)
        if monitor.pausing(k):
            yield LoopRecord(k, nfev, njev)


def _spanning_minibatch_loop(stepper: Stepper, monitor: Monitor, sw: Stopwatch,
                             every: int) -> Loop:
    """:func:`fused_minibatch_loop` on a stepper whose blocks span observations."""
    k = nfev = njev = 0
    while True:
        first = (k // every + 1) * every - k  # steps to the next observation
        left = _budget_left(monitor, k, nfev)
        n = stepper.ready(min(max(_block_cap(k, sw), first),
                              first + (stepper.span_kept - 1) * every, left))
        if first <= n < left:  # end on an observation (a budget may end a block anywhere;
            n = first + (n - first) // every * every  # an index vector, before the next one)
        saved, mark, row0 = stepper.save(), sw.mark(), len(monitor.rows)
        t0, c0 = sw.elapsed, sw.cpu_elapsed
        sw.resume()
        blk = stepper.run(n, first, every)
        sw.pause()
        t1, c1 = sw.elapsed, sw.cpu_elapsed
        ev = (blk.nfev, blk.njev)
        m = 0 if n < first else 1 + (n - first) // every
        screened = sum(monitor.screens(k + first + j * every) for j in range(m))
        kept = KeptIterates(stepper.backend, blk.kept, m, monitor.screen, screened).rows()
        for j, x in enumerate(kept):
            kk = k + first + j * every
            share = (kk - k) / n
            try:
                stop = monitor.observe_full(kk, x, nfev + (kk - k) * ev[0],
                                            njev + (kk - k) * ev[1], at=t0 + share * (t1 - t0),
                                            cpu_at=c0 + share * (c1 - c0))
            except Exception:  # a callback or a metric failed: the run ends at this iterate
                if kk < k + n:
                    stepper.load(saved)
                    stepper.run(kk - k)
                raise
            if stop:
                if kk < k + n:  # run the block again, timed, up to this observation
                    sw.rewind(mark)
                    stepper.load(saved)
                    sw.resume()
                    stepper.run(kk - k)
                    sw.pause()
                    _check_rerun(stepper, x(), kk)
                    monitor.retime(row0, k, t0)
                return LoopRecord(kk, nfev + (kk - k) * ev[0], njev + (kk - k) * ev[1])
        k += n
        nfev += n * ev[0]
        njev += n * ev[1]
        if k % every and monitor.observe(k, k, None, None, nfev, njev):  # a budget's end
            return LoopRecord(k, nfev, njev)
        if monitor.pausing(k):
            yield LoopRecord(k, nfev, njev)


class NondeterministicBlockWarning(UserWarning):
    """A fused block run again from the same state reached another iterate."""


def _check_rerun(stepper: Stepper, kept: np.ndarray, k: int) -> None:
    """Warn when the block run again up to step ``k`` did not reach the iterate it kept the
    first time (a device whose reductions are not deterministic): the run's observation and
    its result are the first pass's, its time the second's."""
    x = stepper.x_numpy()
    if np.array_equal(x, kept, equal_nan=True):
        return
    with np.errstate(invalid="ignore"):
        diff = float(np.nanmax(np.abs(x - kept)))
    warnings.warn(f"{type(stepper).__name__}: a fused block run again from the same state "
                  f"reached another iterate at step {k} (largest difference {diff:.3g}): its "
                  "compiled steps are not deterministic on this device, so the time to that "
                  "step is the second pass's and the observation the first's; "
                  "execution='step' observes the steps it times",
                  NondeterministicBlockWarning, stacklevel=2)


def framework_loop(stepper: Stepper, monitor: Monitor, sw: Stopwatch) -> Loop:
    """A library's own loop (:meth:`~optcmp.frameworks.stepper.LoopAdapter.minimize`), on the
    clock.

    The monitor pauses the clock while it observes each iteration
    (:meth:`~optcmp.engine.monitor.Monitor.on_iteration`). A run that may pause (its monitor's
    :attr:`~optcmp.engine.monitor.Monitor.pause_at` set when it starts) runs the library's
    loop on a thread of its own, which waits inside the library's callback while the run is
    paused (:func:`_threaded_framework_loop`); one that never pauses runs it here.
    """
    assert isinstance(stepper, LoopAdapter)
    if monitor.pause_at is not None:
        return (yield from _threaded_framework_loop(stepper, monitor, sw))
    out = _library_loop(stepper, monitor, sw)
    return LoopRecord(out["nit"], out["nfev"], out["njev"], report=out)


def _library_loop(stepper: LoopAdapter, monitor: Monitor, sw: Stopwatch) -> dict[str, Any]:
    """The library's own loop on the clock (the monitor pauses it while it observes)."""
    sw.resume()
    try:
        return stepper.minimize(monitor)
    finally:
        if sw.running:
            sw.pause()


def _threaded_framework_loop(stepper: LoopAdapter, monitor: Monitor, sw: Stopwatch) -> Loop:
    """:func:`framework_loop` with the library's loop on a thread that waits at each pause."""
    to_caller: queue.Queue[tuple[str, Any]] = queue.Queue()
    to_loop: queue.Queue[None] = queue.Queue()
    abandoned = threading.Event()

    def gate() -> bool:  # in the loop's thread, after an observation that did not stop it
        if abandoned.is_set():
            return True
        if not monitor.pausing(monitor.nit):
            return False
        last = monitor.last
        nfev, njev = (last.nfev, last.njev) if last is not None else (0, 0)
        to_caller.put(("pause", LoopRecord(monitor.nit, nfev, njev)))
        to_loop.get()
        return abandoned.is_set()

    def work() -> None:
        try:
            to_caller.put(("done", _library_loop(stepper, monitor, sw)))
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            to_caller.put(("error", exc))

    monitor.gate = gate
    # the loop runs in a copy of the caller's context (numpy's floating-point error state)
    thread = threading.Thread(target=contextvars.copy_context().run, args=(work,),
                              name="optcmp-framework-loop", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = to_caller.get()
            if kind == "pause":
                yield value
                to_loop.put(None)
                continue
            thread.join()
            if kind == "error":
                raise value
            return LoopRecord(value["nit"], value["nfev"], value["njev"], report=value)
    finally:
        if thread.is_alive():  # the run was abandoned while paused: end the library's loop
            abandoned.set()
            to_loop.put(None)
            thread.join()
        monitor.gate = None


def choose_driver(stepper: Stepper, eval_every: int | None = None) -> Driver:
    """The driver of an initialised stepper: by its loop, its execution and its batching."""
    if stepper.loop:
        return framework_loop
    if stepper.execution == "fused" and not stepper.stochastic:
        return fused_full_batch_loop
    loop = fused_minibatch_loop if stepper.execution == "fused" else step_loop
    return functools.partial(loop, eval_every=eval_every)


class FixedSteps:
    """A monitor for a framework's own loop that records every iterate and stops after
    ``steps`` iterations (the fixed-steps recorder of :func:`record_fixed_steps`)."""

    def __init__(self, steps: int, record: Callable[[np.ndarray], None]) -> None:
        self.steps = steps
        self.record = record
        self.n = 0
        self.stopped = False

    def delegate_budgets(self) -> dict[str, int | None]:
        """The iteration budget handed to the library: ``steps``."""
        return {"max_iter": self.steps, "max_evals": None}

    def on_iteration(self, *, fun: float, grad_norm: float | None, nfev: int, njev: int,
                     x: np.ndarray) -> bool:
        """Record the iterate; True (stop) after ``steps`` of them."""
        self.n += 1
        self.record(np.array(x, dtype=np.float64, copy=True))
        if self.n >= self.steps:
            self.stopped = True
            return True
        return False


def record_fixed_steps(stepper: Stepper, steps: int) -> list[np.ndarray]:
    """``x_0`` and the iterate after each of ``steps`` untimed one-step runs, on the host
    (a framework's own loop is stopped after ``steps`` iterations; it may stop earlier)."""
    xs = [stepper.x_numpy()]
    if isinstance(stepper, LoopAdapter):
        stepper.minimize(FixedSteps(steps, xs.append))
        return xs
    for _ in range(steps):
        stepper.ready(1)
        stepper.run(1)
        xs.append(stepper.x_numpy())
    return xs


__all__ = ["BLOCK_FRACTION", "BLOCK_SECONDS", "Driver", "FixedSteps", "Loop", "LoopRecord",
           "NondeterministicBlockWarning",
           "choose_driver", "fused_full_batch_loop", "fused_minibatch_loop", "framework_loop",
           "record_fixed_steps", "step_loop"]
