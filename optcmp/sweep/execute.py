"""Executing the runs of one problem: store read-back, the runs themselves (in censoring rounds,
:mod:`optcmp.sweep.censor`, unless ``censor_ratio`` is None), the comparison in sweep order."""

from __future__ import annotations

import dataclasses
import os
import warnings
from typing import Any

from optcmp._warn import outside_level
from optcmp.comparison import Comparison
from optcmp.engine import RunConfig
from optcmp.environment import environment
from optcmp.executors import RunTask, run_tasks
from optcmp.problems.base import Problem
from optcmp.results import RunResult
from optcmp.store import Interrupted, RunStore, run_key
from optcmp.sweep.censor import reusable, run_censored
from optcmp.sweep.plan import Plan
from optcmp.sweep.progress import Progress, WorkBar

#: How to resume, by whether the sweep has a store (the end of an interruption's message).
RESUME_WITH_STORE = ("To resume, run the same command again with the same store{where}: "
                     "finished runs are read back, only the others run.")
RESUME_WITHOUT_STORE = ("Pass store='runs.jsonl' (optcmp run --store runs.jsonl) to keep "
                        "finished runs on disk and resume later.")


class Sweep:
    """The runs of one problem in one :func:`optcmp.compare` call."""

    def __init__(self, problem: Problem, plan: Plan, config: RunConfig) -> None:
        self.problem = problem
        self.plan = plan
        self.tasks = plan.tasks(config)
        self.settings = plan.settings(config)
        self.results: dict[int, RunResult] = {}
        self.executed: list[RunResult] = []
        self._problems = {0: problem}
        if plan.redraw_data and plan.repeats > 1:  # fail before any run when it cannot redraw
            self.problem_for(1)
        opt = problem.optimum()
        self.optimum = None if opt is None else opt.to_dict()  # with its kind
        self.environment = environment()

    def problem_for(self, r: int) -> Problem:
        """The problem of repetition ``r`` (its own data with ``redraw_data``)."""
        if not self.plan.redraw_data:
            return self.problem
        if r not in self._problems:
            seed = int(self.problem.spec().get("seed", 0) or 0)
            self._problems[r] = self.problem.with_seed(seed + r)
        return self._problems[r]

    def execute(self, store: str | os.PathLike[str] | None, executor: Any,
                progress: Progress) -> Comparison:
        """Read finished runs from the store, run the others, collect the comparison."""
        run_store = self._open_store(store) if store is not None else None
        reused = len(self.results)
        pending = [self.tasks[i] for i in self.plan.execution_order() if i not in self.results]
        bar = WorkBar(self.tasks, progress)
        for i, res in self.results.items():
            bar.finish(i, res)

        def on_result(task: RunTask, res: RunResult, storable: bool) -> None:
            self.results[task.index] = res
            self.executed.append(res)
            if run_store is not None and storable:
                run_store.append(task.key, res)
            if executor is not None:  # runs finish out of order elsewhere: say which one did
                bar.bar.set_description(f"done: {task.optimizer.label} on {task.backend}")
            bar.finish(task.index, res)

        on_start = bar.start  # sequential: label the bar with the run in progress
        ratio = self.plan.config.censor_ratio
        try:
            for problem, group in self._groups(pending):
                if ratio is None:
                    run_tasks(group, problem, on_result, executor, on_start)
                else:  # rounds of growing iteration caps; hopeless runs censored
                    run_censored(group, problem, on_result, executor, on_start, ratio=ratio,
                                 finished=list(self.results.values()))
        except KeyboardInterrupt as exc:
            raise self._interrupted(store, run_store, reused) from exc
        finally:
            bar.close()
            if run_store is not None:
                run_store.close()
        warned = self._warn_contention(executor)
        runs = [self.results[t.index] for t in self.tasks]
        # the warning covered every shared-host run of the table when all of them ran just now
        executed = {id(r) for r in self.executed}
        warned = warned and all(id(r) in executed for r in runs if r.conditions.shared_host)
        return self._comparison(runs, run_store, reused).replace(shared_host_warned=warned)

    def _groups(self, pending: list[RunTask]) -> list[tuple[Problem, list[RunTask]]]:
        """The pending tasks by problem: one batch per repetition with ``redraw_data``."""
        if not self.plan.redraw_data:
            return [(self.problem, pending)] if pending else []
        groups = [(r, [t for t in pending if t.repeat == r]) for r in range(self.plan.repeats)]
        return [(self.problem_for(r), group) for r, group in groups if group]

    def _open_store(self, store: str | os.PathLike[str]) -> RunStore:
        """Open the run store, key every task, and take its finished runs as results."""
        self.tasks = [dataclasses.replace(t, key=run_key(self.problem_for(t.repeat),
                                                         t.optimizer, t.config))
                      for t in self.tasks]
        run_store = RunStore.open(store, self.problem, {
            "settings": self.settings, "optimum": self.optimum,
            "environment": self.environment})
        for t in self.tasks:
            old = run_store.get(t.key)
            if old is not None and reusable(old, self.plan.config.censor_ratio):
                # the label and repetition of this sweep's entry
                self.results[t.index] = old.replace(label=t.optimizer.label, repeat=t.repeat)
        return run_store

    def _warn_contention(self, executor: Any) -> bool:
        """Warn once about executed runs whose timings contended (shared host or busy CPU);
        whether the shared-host warning was given (``Comparison.shared_host_warned``)."""
        n_executed = len(self.executed)
        shared = [r for r in self.executed if r.conditions.shared_host]
        if shared:
            peak = max(r.conditions.concurrency for r in shared)
            if executor is None:
                msg = (f"{len(shared)} of {n_executed} runs overlapped with other optcmp runs of "
                       f"this process (up to {peak} at once): their timings contend and are "
                       "flagged shared_host; for time comparisons run one sweep at a time")
            else:
                msg = (f"{len(shared)} of {n_executed} runs shared their host with other runs (up "
                       f"to {peak} at once): their timings contend and are flagged shared_host; "
                       "time comparisons need the default sequential execution (executor=None)")
            warnings.warn(msg, UserWarning, stacklevel=outside_level())
        busy = [r for r in self.executed if r.timing.contended]
        if busy:  # contention measured whatever its cause
            from optcmp.analysis.stats.fairness import contended_issue
            warnings.warn(contended_issue(busy, n_executed), UserWarning,
                          stacklevel=outside_level())
        return bool(shared)

    def _comparison(self, runs: list[RunResult], run_store: RunStore | None,
                    reused: int) -> Comparison:
        """The comparison of ``runs``, its settings with the store's counts."""
        st = dict(self.settings)
        if run_store is not None:
            st["store"] = {"path": os.path.abspath(run_store.path), "reused": reused,
                           "executed": len(self.executed), "write_seconds": run_store.write_seconds}
        return Comparison(runs, problem=self.problem.spec(), optimum=self.optimum, settings=st,
                          environment=self.environment)

    def _interrupted(self, store: str | os.PathLike[str] | None, run_store: RunStore | None,
                     reused: int) -> Interrupted:
        """The :class:`~optcmp.store.Interrupted` of a Ctrl-C: finished runs, how to resume."""
        done = [self.results[t.index] for t in self.tasks if t.index in self.results]
        total = len(self.tasks)
        where = os.fspath(store) if store is not None else None
        if where is not None:
            msg = (f"interrupted: {len(done)} of {total} runs are finished and kept in "
                   f"{where}; the run(s) in progress were discarded. "
                   + RESUME_WITH_STORE.format(where=f" ({where})"))
        else:
            msg = (f"interrupted: {len(done)} of {total} runs finished (kept in this "
                   "exception's .comparison); the run(s) in progress were discarded. "
                   + RESUME_WITHOUT_STORE)
        return Interrupted(msg, self._comparison(done, run_store, reused), where, len(done),
                           total)
