"""Censoring: a sweep stops a run only once its result can no longer change the answer.

The rule is the performance-profile (and AlgoPerf) one with ``r_max = censor_ratio``, kept
so that both questions of a comparison stay answered: which optimizer reaches the target
first, and, for each optimizer run on several backends, which framework. Once some run of a
repetition has reached the target in time ``T*``, a run of the same repetition that has
already spent more than ``censor_ratio * T*`` without reaching it has a performance ratio above
``r_max`` whatever it does next, so it cannot change a profile up to ``r_max``, the ranking of
the runs within ``r_max`` of the best, or which run is fastest. When its optimizer (its label)
also runs on other backends, it is censored only once it has spent more than ``censor_ratio``
times the best time-to-target of its own optimizer as well (so a framework comparison of a
slow optimizer is measured, not censored against a faster optimizer). Such a run ends
``censored`` with its bound, typed in :attr:`RunResult.bound <optcmp.results.RunResult.bound>`
(a :class:`~optcmp.results.parts.CensorBound`: ratio, the leader's time-to-target, its unit
and the leader) and worded in its message, e.g. ``"> 10x the best time-to-target, 0.0412 s
CPU by lbfgs on numpy (censored at 0.45 s CPU, iteration 1600)"``; every statistic counts it
as not reached with what it spent (:mod:`optcmp.analysis.stats.censor`).

Order: the leaders are measured first by successive iteration caps. Round 1 runs every run
up to :data:`FIRST_ROUND_ITER` iterations; each later round multiplies the cap by
:data:`ROUND_GROWTH` and goes on with the runs the cap paused whose spent time is still
within the bound, until the cap reaches the run's own iteration budget (the last round has
no cap). A paused run is resumed where it stood (:class:`~optcmp.engine.runner.LiveRun`:
its adapter, optimizer state, iterate, rule, trace and clocks kept), never run again from
its start: every run starts once, its timed clock adds up its segments, setup and warm-up
happen once, and it ends with the result of a run that never paused (the same steps, trace,
iterations and status). ``T*`` only decreases from round to round, so a bound given earlier
stays true.

Where the runs execute elsewhere (a ``concurrent.futures`` executor or a Dask client,
:mod:`optcmp.executors`), a paused run cannot wait in another process between two rounds:
there each round reruns, from the start and with the round's cap as an iteration budget, the
runs the previous cap stopped. A run is deterministic given its seed, so the rerun with a
larger cap follows the same trajectory and ends with the same result as a resumed one; the
repeated work is at most ``1 / (ROUND_GROWTH - 1)`` of the last round.

What the bound is on: process CPU time of the timed steps (``cpu_time``,
``cpu_time_to_target``) on the CPU, wall time for runs on a GPU. Every run pauses at a round's
iteration cap (a library's step doing several iterations, ``torch.optim.LBFGS``, at the end of
the step that reaches it), so the iteration count of a censored run is a round's cap, the
same under any load; the load enters only through the comparison ``spent > censor_ratio * T*`` of two CPU
times, which other processes inflate little and alike (shared caches and memory bandwidth):
a run whose spent time is within a few percent of the bound can fall on either side.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from optcmp.engine.runner import LiveRun
from optcmp.executors import RunTask, guarded_run, run_tasks
from optcmp.problems.base import Problem
from optcmp.results import RunResult
from optcmp.results.parts import CensorBound
from optcmp.stopping import MaxIter, with_iteration_cap

#: Iteration cap of the first round of a censored sweep.
FIRST_ROUND_ITER = 100
#: Factor between the iteration caps of two rounds.
ROUND_GROWTH = 4

OnResult = Callable[[RunTask, RunResult, bool], None]


def round_caps(max_iter: int | None) -> list[int | None]:
    """The iteration caps of the rounds, the last ``None`` (the run's own budget)."""
    caps: list[int | None] = []
    cap = FIRST_ROUND_ITER
    limit = max_iter if max_iter is not None else 10**12
    while cap < limit:
        caps.append(cap)
        cap *= ROUND_GROWTH
    return [*caps, None]


def measures(run: RunResult, best: RunResult) -> tuple[float, float, str] | None:
    """What ``run`` spent and what ``best`` took to the target, in one unit, and its name."""
    on_cpu = run.device == "cpu" and best.device == "cpu"
    if on_cpu and run.cpu_time is not None and best.cpu_time_to_target is not None:
        return run.cpu_time, best.cpu_time_to_target, "s CPU"
    if best.time_to_target is None:
        return None
    return run.time, best.time_to_target, "s"


def _leader(runs: Sequence[RunResult], run: RunResult) -> RunResult | None:
    """The run of ``runs`` with the smallest time-to-target in ``run``'s measure."""
    reached = [r for r in runs if r.success and r.time_to_target is not None]
    if not reached:
        return None

    def key(r: RunResult) -> float:
        m = measures(run, r)
        return float("inf") if m is None else m[1]

    return min(reached, key=key)


def _bound_run(done: Sequence[RunResult], run: RunResult,
               backends: dict[str, set[str]]) -> RunResult | None:
    """The run whose time-to-target bounds ``run``: the repetition's fastest, or, when
    ``run``'s optimizer ran on several backends, its own optimizer's fastest (None: that one
    has not reached the target yet, so the framework question is still open)."""
    same = [r for r in done if r.repeat == run.repeat]
    best = _leader(same, run)
    if best is None or len(backends.get(run.label, ())) < 2:
        return best
    return _leader([r for r in same if r.label == run.label], run)


def censor_bound(run: RunResult, best: RunResult, ratio: float) -> CensorBound | None:
    """The bound ``run`` is censored on against ``best``, or None when it is within it."""
    m = measures(run, best)
    if m is None or not m[0] > ratio * m[1]:
        return None
    return CensorBound(ratio, m[1], "cpu" if m[2] == "s CPU" else "wall", best.label,
                       best.backend)


def censor_message(run: RunResult, best: RunResult, ratio: float) -> str | None:
    """The censored message of ``run`` against ``best``, or None when it is within the bound."""
    bound = censor_bound(run, best, ratio)
    return None if bound is None else _words(run, bound)


def _words(run: RunResult, bound: CensorBound) -> str:
    """The censored message of ``run`` with ``bound``."""
    unit = CensorBound.UNITS[bound.unit]
    spent = run.cpu_time if bound.unit == "cpu" else run.time
    return (f"> {bound.ratio:g}x the best time-to-target, {bound.seconds:.3g} {unit} by "
            f"{bound.leader} on {bound.leader_backend} (censored at {spent:.3g} {unit}, "
            f"iteration {run.nit})")


def run_censored(tasks: Sequence[RunTask], problem: Problem, on_result: OnResult,
                 executor: Any, on_start: Callable[[RunTask], None] | None, *,
                 ratio: float, finished: Sequence[RunResult]) -> None:
    """Run ``tasks`` in rounds of growing iteration caps, censoring the hopeless ones."""
    done: list[RunResult] = list(finished)
    pending = list(tasks)
    order = {t.index: i for i, t in enumerate(tasks)}
    backends: dict[str, set[str]] = {}
    rounds = (_Resumed(problem, on_start) if executor is None
              else _Rerun(problem, executor, on_start))
    try:
        for cap in round_caps(_max_iter(pending)):
            if not pending:
                return
            waiting = rounds.round(pending, cap, on_result, done)
            for r in [*done, *(res for _, res in waiting)]:
                backends.setdefault(r.label, set()).add(r.backend)
            pending = []
            for task, res in waiting:
                best = _bound_run(done, res, backends)
                bound = None if best is None else censor_bound(res, best, ratio)
                if bound is None:
                    pending.append(task)
                    continue
                rounds.drop(task)
                out = res.replace(status="censored", message=_words(res, bound), bound=bound)
                done.append(out)
                on_result(task, out, True)
            pending.sort(key=lambda t: order[t.index])
    finally:
        rounds.close()


class _Resumed:
    """Rounds in this process: a paused run waits, live, for the next round."""

    def __init__(self, problem: Problem, on_start: Callable[[RunTask], None] | None) -> None:
        self.problem, self.on_start = problem, on_start
        self.live: dict[int, LiveRun] = {}

    def round(self, pending: list[RunTask], cap: int | None, on_result: OnResult,
              done: list[RunResult]) -> list[tuple[RunTask, RunResult]]:
        """One round: the runs ``cap`` paused (task and snapshot); the others reported."""
        waiting: list[tuple[RunTask, RunResult]] = []
        for task in pending:
            if self.on_start is not None:
                self.on_start(task)
            ended = self._advance(task, cap if cap is not None and _own_budget(task) > cap
                                  else None)
            if ended is None:
                waiting.append((task, self.live[task.index].snapshot()))
            else:
                done.append(ended[0])
                on_result(task, *ended)
        return waiting

    def _advance(self, task: RunTask, cap: int | None) -> tuple[RunResult, bool] | None:
        """Start or resume ``task``'s run up to ``cap``: its result and whether it is
        storable (:func:`optcmp.executors.guarded_run`), None when it paused."""
        started = time.time()

        def go() -> RunResult | None:
            live = self.live.pop(task.index, None)
            if live is None:
                live = LiveRun(self.problem, task.optimizer, task.config)
            if not live.advance(cap):
                self.live[task.index] = live
                return None
            return live.result()

        return guarded_run(self.problem, task, go, started)

    def drop(self, task: RunTask) -> None:
        """End ``task``'s paused run where it stands (it was censored there)."""
        live = self.live.pop(task.index, None)
        if live is not None:
            live.close()

    def close(self) -> None:
        """Release every run still paused (an interrupted sweep)."""
        while self.live:
            self.live.popitem()[1].close()


class _Rerun:
    """Rounds on an executor: a run the cap stopped runs again, from its start, next round."""

    def __init__(self, problem: Problem, executor: Any,
                 on_start: Callable[[RunTask], None] | None) -> None:
        self.problem, self.executor, self.on_start = problem, executor, on_start

    def round(self, pending: list[RunTask], cap: int | None, on_result: OnResult,
              done: list[RunResult]) -> list[tuple[RunTask, RunResult]]:
        """One round: the runs ``cap`` stopped (task and result); the others reported."""
        originals = {t.index: t for t in pending}
        capped = {t.index for t in pending if cap is not None and _own_budget(t) > cap}
        waiting: list[tuple[RunTask, RunResult]] = []

        def collect(task: RunTask, res: RunResult, storable: bool) -> None:
            if task.index in capped and res.status == "max_iter":
                waiting.append((originals[task.index], res))
                return
            done.append(res)
            on_result(originals[task.index], res, storable)

        round_tasks = [_with_cap(t, cap) if t.index in capped and cap is not None else t
                       for t in pending]
        run_tasks(round_tasks, self.problem, collect, self.executor, self.on_start)
        return waiting

    def drop(self, task: RunTask) -> None:
        """Nothing to end: the run has ended where it ran."""

    def close(self) -> None:
        """Nothing is held between rounds."""


def _own_budget(task: RunTask) -> float:
    """The iteration budget of ``task``'s rule (inf: none)."""
    rule = task.config.stopping
    its = [] if rule is None else [r.n for r in rule.rules() if isinstance(r, MaxIter)]
    return float(min(its)) if its else float("inf")


def reusable(old: RunResult, ratio: float | None) -> bool:
    """Whether a stored result can stand in a sweep censoring at ``ratio``."""
    if old.status != "censored":
        return True
    return ratio is not None and old.bound is not None and f"{old.bound.ratio:g}" == f"{ratio:g}"


def _max_iter(tasks: Sequence[RunTask]) -> int | None:
    """The largest iteration budget of the tasks' rules (None: a rule without one)."""
    ns: list[int] = []
    for t in tasks:
        rule = t.config.stopping
        its = [] if rule is None else [r.n for r in rule.rules() if isinstance(r, MaxIter)]
        if not its:
            return None
        ns.append(min(its))
    return max(ns) if ns else None


def _with_cap(task: RunTask, cap: int) -> RunTask:
    """``task`` with its rule's iteration budget lowered to ``cap`` for one round."""
    rule = task.config.stopping
    assert rule is not None
    return replace(task, config=task.config.replace(stopping=with_iteration_cap(rule, cap)))


__all__ = ["FIRST_ROUND_ITER", "ROUND_GROWTH", "censor_bound", "censor_message", "measures",
           "reusable", "round_caps", "run_censored"]
