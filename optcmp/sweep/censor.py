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

import numpy as np

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
    return None if bound is None else _message(bound, _spent(run, bound), run.nit)


def _spent(run: RunResult, bound: CensorBound) -> float:
    """What ``run`` spent in ``bound``'s unit."""
    return float((run.cpu_time if bound.unit == "cpu" else run.time) or 0.0)


def _message(bound: CensorBound, spent: float, nit: int, runs: int = 1) -> str:
    """``"> 10x the best time-to-target, ..."``: the bound, what was spent, where."""
    unit = CensorBound.UNITS[bound.unit]
    of = "" if runs == 1 else f"; the median of {runs} identical repetitions, censored together"
    return (f"> {bound.ratio:g}x the best time-to-target, {bound.seconds:.3g} {unit} by "
            f"{bound.leader} on {bound.leader_backend} (censored at {spent:.3g} {unit}, "
            f"iteration {nit}{of})")


def _identical(runs: Sequence[RunResult]) -> bool:
    """Whether ``runs`` followed one trajectory: the same iterations, objective values and
    iterate, bit for bit (a deterministic entry's repetitions)."""
    a = runs[0]
    return all(r.nit == a.nit and np.array_equal(r.x, a.x) and np.array_equal(
        r.trace.fun, a.trace.fun, equal_nan=True) for r in runs[1:])


def _decide(waiting: Sequence[tuple[RunTask, RunResult]], done: Sequence[RunResult],
            ratio: float, backends: dict[str, set[str]]
            ) -> tuple[list[tuple[RunTask, RunResult]], list[RunTask]]:
    """The censored runs of a round (task, censored result) and the tasks that go on.

    The repetitions of an entry (optimizer and backend) that followed one trajectory share one
    decision, taken on the entry: the median of what they spent against the median time of
    their repetitions' leaders. Any other run is decided alone."""
    entries: dict[tuple[str, str], list[tuple[RunTask, RunResult]]] = {}
    for task, res in waiting:
        entries.setdefault((res.label, res.backend), []).append((task, res))
    censored: list[tuple[RunTask, RunResult]] = []
    going: list[RunTask] = []
    for group in entries.values():
        runs = [res for _, res in group]
        one = len(runs) > 1 and _identical(runs)
        for part in [group] if one else [[g] for g in group]:
            bound, spent = _entry_bound([res for _, res in part], done, ratio, backends)
            if bound is None:
                going.extend(t for t, _ in part)
                continue
            msg = _message(bound, spent, part[0][1].nit, len(part))
            censored.extend((t, res.replace(status="censored", message=msg, bound=bound))
                            for t, res in part)
    return censored, going


def _entry_bound(runs: Sequence[RunResult], done: Sequence[RunResult], ratio: float,
                 backends: dict[str, set[str]]) -> tuple[CensorBound | None, float]:
    """The bound the identical ``runs`` are censored on together (None: within it), and the
    median of what they spent in its unit."""
    leaders = [_bound_run(done, r, backends) for r in runs]
    ms = [None if b is None else measures(r, b) for r, b in zip(runs, leaders)]
    known = [m for m in ms if m is not None]
    if len(known) < len(runs) or len({m[2] for m in known}) != 1:
        return None, 0.0
    spent = float(np.median([m[0] for m in known]))
    lead = float(np.median([m[1] for m in known]))
    if not spent > ratio * lead:
        return None, spent
    named = [b for b in leaders if b is not None]
    top = max(named, key=lambda b: sum(x.label == b.label for x in named))
    unit = "cpu" if known[0][2] == "s CPU" else "wall"
    return CensorBound(ratio, lead, unit, top.label, top.backend), spent


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
            waiting.sort(key=lambda tr: order[tr[0].index])  # any executor: one order
            censored, pending = _decide(waiting, done, ratio, backends)
            for task, out in censored:
                rounds.drop(task)
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
            if task.index in capped and cap is not None and _paused(res, cap):
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


def _paused(res: RunResult, cap: int) -> bool:
    """Whether a run's round ``cap`` ended it: its budget, or a divergence judged only because
    that budget fired where no objective was known (a minibatch step), which the run resumed
    in this process would not have seen there either; it runs again next round."""
    return res.status == "max_iter" or (res.status == "diverged" and res.nit >= cap)


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
