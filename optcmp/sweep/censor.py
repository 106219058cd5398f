"""Censoring: a sweep stops a run only once its result can no longer change the answer
(docs/concepts.md, 'Censoring'). In this process a paused run waits, live, for the next round
(:class:`~optcmp.engine.runner.LiveRun`); an executor reruns it from its start."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from optcmp.engine.runner import LiveRun
from optcmp.executors import OnResult, RunTask, guarded_run, run_tasks
from optcmp.problems.base import Problem
from optcmp.results import RunResult
from optcmp.results.parts import CensorBound
from optcmp.stopping import MaxIter, with_iteration_cap

#: Iteration cap of the first round of a censored sweep.
FIRST_ROUND_ITER = 100
#: Factor between the iteration caps of two rounds.
ROUND_GROWTH = 4


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
    return min(reached, default=None,
               key=lambda r: float("inf") if (m := measures(run, r)) is None else m[1])


def _bound_run(done: Sequence[RunResult], run: RunResult,
               backends: dict[str, set[str]]) -> RunResult | None:
    """The repetition's fastest run, or, when ``run``'s optimizer ran on several backends, its
    own optimizer's fastest (None: the framework question is still open)."""
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
    if bound is None:
        return None
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
                if best is None or bound is None:
                    pending.append(task)
                    continue
                rounds.drop(task)
                out = res.replace(status="censored", message=censor_message(res, best, ratio),
                                  bound=bound)
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
            ended = guarded_run(self.problem, task, functools.partial(
                self._advance, task, cap if cap is not None and own_budget(task) > cap
                else None), time.time())
            if ended is None:
                waiting.append((task, self.live[task.index].snapshot()))
            else:
                done.append(ended[0])
                on_result(task, *ended)
        return waiting

    def _advance(self, task: RunTask, cap: int | None) -> RunResult | None:
        """Start or resume ``task``'s run up to ``cap``: its result, None when it paused."""
        live = self.live.pop(task.index, None) or LiveRun(self.problem, task.optimizer,
                                                          task.config)
        if not live.advance(cap):
            self.live[task.index] = live
            return None
        return live.result()

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
        capped = {t.index for t in pending if cap is not None and own_budget(t) > cap}
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


def own_budget(task: RunTask) -> float:
    """The iteration budget of ``task``'s rule.

    Parameters
    ----------
    task : RunTask

    Returns
    -------
    float
        The smallest ``MaxIter`` of its stopping rule; ``inf`` without one.
    """
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
    most = max((own_budget(t) for t in tasks), default=math.inf)
    return None if math.isinf(most) else int(most)


def _with_cap(task: RunTask, cap: int) -> RunTask:
    """``task`` with its rule's iteration budget lowered to ``cap`` for one round."""
    rule = task.config.stopping
    assert rule is not None
    return replace(task, config=task.config.replace(stopping=with_iteration_cap(rule, cap)))
