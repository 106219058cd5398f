""":func:`compare`: every optimizer on every backend, ``repeats`` times (:mod:`optcmp.sweep`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from optcmp.comparison import Comparison
from optcmp.engine import RunConfig, check_problem
from optcmp.executors import check_executor
from optcmp.frameworks.base import is_cpu_device
from optcmp.problems.base import Problem
from optcmp.sweep.execute import Sweep
from optcmp.sweep.plan import Optimizers, Plan, missing_backends, preflight_device
from optcmp.sweep.suite import is_suite, run_problems


def compare(
    problem: Problem, optimizers: Optimizers, *, backends: str | Sequence[str] = ("numpy",),
    config: RunConfig | None = None, repeats: int = 1, strict: bool = False,
    progress: bool = True, redraw_data: bool = False,
    store: str | os.PathLike[str] | None = None, executor: Any = None,
    order: str = "interleaved", **overrides: Any,
) -> Comparison:
    """Run every optimizer on every backend, ``repeats`` times, and collect the results.

    Parameters
    ----------
    problem : Problem or optcmp.suites.Suite
        A suite runs every problem into one comparison.
    optimizers : sequence of OptimizerSpec, factory or str
        e.g. ``[optcmp.gd, optcmp.adadelta(rho=0.9), "lbfgs"]``.
    backends : str or sequence of str, default ("numpy",)
        Backend names, a comma-separated string, or ``"all"`` (every installed one).
    config : RunConfig, optional
        The settings of every run (its ``backend``, ``seed`` and ``repeat`` set per run).
        Default ``RunConfig()``.
    repeats : int, default 1
        Repetitions (see "Repetitions" in :mod:`optcmp.sweep`).
    strict : bool, default False
        Raise when a backend is not installed, instead of recording its runs as ``skipped``.
    progress : bool, default True
        Progress bar on stderr.
    redraw_data : bool, default False
        Also redraw the data in every repetition (problems that generate their data only).
    store : str or path-like, optional
        A resumable run store (see "Run store" in :mod:`optcmp.sweep`).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where runs execute (:mod:`optcmp.executors`); default sequentially in this process.
    order : {"interleaved", "blocks"}, default "interleaved"
        Execution order (:func:`execution_order`).
    **overrides
        Any :class:`~optcmp.engine.RunConfig` field replacing the config's (``device``,
        ``tol``, ``max_iter``, ``seed``, ``threads``, ...). ``execution`` may also be a
        sequence of modes: each optimizer then runs in each, labelled ``"<label> [<mode>]"``.

    Returns
    -------
    Comparison
        Runs in sweep order (repetition, backend, optimizer) whatever the execution order.

    Raises
    ------
    ValueError, TypeError
        Checked before any run: bad problem, optimizers, backends, settings, device or
        executor, or more than :data:`MAX_RUNS` runs.
    BackendUnavailable, NotImplementedError
        With ``strict=True``, a backend not installed; ``redraw_data=True`` with a problem
        that cannot redraw its data.
    optcmp.store.StoreMismatchError
        The store holds another problem or another store format version.
    optcmp.store.Interrupted
        Ctrl-C; finished runs are kept in the store and in the exception's ``comparison``.
    """
    suite: Any = problem if is_suite(problem) else None
    problems = list(suite.problems) if suite is not None else [problem]
    for p in problems:
        check_problem(p)
    plan = Plan.check(optimizers, backends, config, overrides, repeats=repeats,
                      redraw_data=redraw_data, order=order)
    return run_problems(suite, _sweeps(problems, plan, strict, executor), store, executor,
                        progress)


def _sweeps(problems: list[Problem], plan: Plan, strict: bool, executor: Any) -> list[Sweep]:
    """The sweep of every problem, its stopping rule, executor and device checked first."""
    # every problem's rule, checked before any run
    configs = [plan.config.replace(stopping=plan.config.stopping_rule(p)) for p in problems]
    if executor is not None:  # a problem that cannot ship fails before any run
        for p in problems:
            check_executor(executor, p)
    plan = dataclasses.replace(plan, missing=tuple(missing_backends(plan.backends, strict)))
    if not is_cpu_device(plan.config.device):
        preflight_device(plan, executor)
    return [Sweep(p, plan, c) for p, c in zip(problems, configs)]


__all__ = ["compare"]
