"""A sweep's progress bar counts its work: each run weighted by its iteration budget, credited
round by round as a censored sweep advances it, so that the estimate is steady; a callable
``progress`` is also handed each run as it finishes (and its ``begin()``, where it has one, is
called once the sweep is checked, before its first run)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, Union

from optcmp.executors import RunTask
from optcmp.results import RunResult
from optcmp.sweep.censor import FIRST_ROUND_ITER, ROUND_GROWTH, own_budget

#: Called with each run as it finishes (or is read back from the store).
OnRun = Callable[[RunResult], None]
#: ``progress`` of :func:`optcmp.compare`: a bar (True), none (False), or a bar and a callback.
Progress = Union[bool, OnRun]


class WorkBar:
    """The progress bar of one sweep: iterations (or runs, where a run has no iteration
    budget) done of the budgets of every run."""

    def __init__(self, tasks: Sequence[RunTask], progress: Progress) -> None:
        from tqdm.auto import tqdm
        budgets = {t.index: own_budget(t) for t in tasks}
        self.by_iterations = all(b != float("inf") for b in budgets.values())
        self.weight = {i: int(b) if self.by_iterations else 1 for i, b in budgets.items()}
        self.credited = dict.fromkeys(self.weight, 0)
        self.starts = dict.fromkeys(self.weight, 0)
        self.on_run = progress if callable(progress) else None
        begin = getattr(progress, "begin", None)
        if callable(begin):  # the runs are about to start: everything before them was checked
            begin()
        self.bar = tqdm(total=sum(self.weight.values()), disable=not progress, file=sys.stderr,
                        unit="it" if self.by_iterations else "run", leave=False,
                        dynamic_ncols=True, unit_scale=self.by_iterations)

    def start(self, task: RunTask, label: str | None = None) -> None:
        """``task`` starts (or resumes for another round: its earlier rounds are done)."""
        k = self.starts[task.index]
        self.starts[task.index] = k + 1
        if k and self.by_iterations:
            self._credit(task.index, min(FIRST_ROUND_ITER * ROUND_GROWTH ** (k - 1),
                                         self.weight[task.index]))
        self.bar.set_description(label or f"{task.optimizer.label} on {task.backend}")

    def finish(self, index: int, res: RunResult) -> None:
        """Task ``index`` has its result (run, or read back from the store): all its work."""
        self._credit(index, self.weight[index])
        if self.on_run is not None:
            self.on_run(res)

    def _credit(self, index: int, upto: int) -> None:
        """Count task ``index``'s work as done up to ``upto``."""
        more = upto - self.credited[index]
        if more > 0:
            self.credited[index] = upto
            self.bar.update(more)

    def close(self) -> Any:
        """Remove the bar."""
        return self.bar.close()


__all__ = ["OnRun", "Progress", "WorkBar"]
