""":func:`compare`: every optimizer on every backend, ``repeats`` times (:mod:`optcmp.sweep`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from optcmp.comparison import Comparison
from optcmp.engine import RunConfig, check_batch_size, check_problem
from optcmp.executors import check_executor
from optcmp.frameworks.base import is_cpu_device
from optcmp.problems.base import Problem
from optcmp.sweep.execute import Sweep
from optcmp.sweep.plan import Optimizers, Plan, missing_backends, preflight_device
from optcmp.sweep.progress import Progress
from optcmp.sweep.suite import is_suite, run_problems


def compare(
    problem: Problem, optimizers: Optimizers, *, backends: str | Sequence[str] | None = None,
    config: RunConfig | None = None, repeats: int = 1, strict: bool = False,
    progress: Progress = True, redraw_data: bool = False,
    store: str | os.PathLike[str] | None = None, executor: Any = None,
    order: str = "interleaved", **overrides: Any,
) -> Comparison:
    """Run every optimizer on every backend, ``repeats`` times, and collect the results.

    Parameters
    ----------
    problem : Problem or optcmp.suites.Suite
    optimizers : sequence of OptimizerSpec, factory or str
    backends : str or sequence of str, optional
        Backend names, a comma-separated string, or ``"all"`` (every installed one); default
        ``"numpy"``, or a native model's own framework (:func:`optcmp.problems.from_torch`).
    config : RunConfig, optional
        The settings of every run (``backend``, ``seed`` and ``repeat`` set per run).
    repeats : int, default 1
    strict : bool, default False
        Raise when a backend is not installed, instead of recording its runs as ``skipped``.
    progress : bool or callable, default True
        A progress bar on stderr that counts the work (each run weighted by its iteration
        budget); a callable also gets each run (a RunResult) as it finishes, and its
        ``begin()``, where it has one, is called once everything is checked, before any run.
    redraw_data : bool, default False
        Also redraw the data in every repetition.
    store : str or path-like, optional
        A resumable run store (:mod:`optcmp.store`).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
    order : {"interleaved", "blocks"}, default "interleaved"
    **overrides
        RunConfig fields replacing the config's; ``execution`` may be a sequence of modes.

    Returns
    -------
    Comparison
        Runs in sweep order (repetition, backend, optimizer) whatever the execution order.

    Raises
    ------
    optcmp.store.Interrupted
        Ctrl-C; finished runs are kept in the store and in the exception's ``comparison``.
    """
    suite: Any = problem if is_suite(problem) else None
    problems = list(suite.problems) if suite is not None else [problem]
    for p in problems:
        check_problem(p)
    if backends is None:
        backends = getattr(problem, "backend_name", "numpy")
    plan = Plan.check(optimizers, backends, config, overrides, repeats=repeats,
                      redraw_data=redraw_data, order=order)
    for p in problems:  # a minibatch larger than a problem's rows: refused before any run
        for s in plan.specs:
            check_batch_size(p, s)
    # every problem's rule, checked before any run
    configs = [plan.config.replace(stopping=plan.config.stopping_rule(p)) for p in problems]
    if executor is not None:  # a problem that cannot ship fails before any run
        for p in problems:
            check_executor(executor, p)
    plan = dataclasses.replace(plan, missing=tuple(missing_backends(plan.backends, strict)))
    if not is_cpu_device(plan.config.device):
        preflight_device(plan, executor)
    sweeps = [Sweep(p, plan, c) for p, c in zip(problems, configs)]
    return run_problems(suite, sweeps, store, executor, progress)
