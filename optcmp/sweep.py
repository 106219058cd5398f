"""A sweep: :func:`compare` runs every optimizer on every backend, ``repeats`` times.

The sweep plans the runs (one :class:`~optcmp.executors.RunTask` each, holding a
:class:`~optcmp.runner.RunConfig`), reads finished ones back from a run store, executes the
others (sequentially, or on an executor: :mod:`optcmp.executors`) and collects a
:class:`~optcmp.results.Comparison`. It depends on the runner and the executors; neither depends
on it.
"""

from __future__ import annotations

import copy
import functools
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import optcmp.backends as backends_mod
from optcmp.backends import BACKENDS, canonical_backend, get_backend
from optcmp.backends.base import is_cpu_device
from optcmp.environment import environment
from optcmp.executors import RunTask, check_executor, is_dask_client, run_tasks
from optcmp.optimizers.base import OptimizerSpec, as_spec, resolve_impl
from optcmp.problems.base import Problem
from optcmp.results import Comparison, RunResult
from optcmp.run.checks import check_problem, numpy_cpu_warning, type_name
from optcmp.run.config import EXECUTIONS, RunConfig, configured
from optcmp.threads import check_threads

__all__ = ["ORDERS", "VERDICT_MAX_SECONDS", "VERDICT_REPEATS", "compare", "confirm_leaders",
           "execution_order"]

#: Execution orders of :func:`compare` (``order=``).
ORDERS = ("interleaved", "blocks")

Optimizers = Sequence[OptimizerSpec | str | Callable[..., OptimizerSpec]] | OptimizerSpec | str


def _over_suites(fn: Callable[..., Comparison]) -> Callable[..., Comparison]:
    """Make ``compare`` accept a suite: every problem in turn, one comparison (issue 13)."""

    @functools.wraps(fn)
    def compare(problem: Any, optimizers: Any, *args: Any, **kwargs: Any) -> Comparison:
        if _is_suite(problem):
            store = kwargs.pop("store", None)
            return _compare_suite(problem, optimizers, store, kwargs, fn)
        return fn(problem, optimizers, *args, **kwargs)

    return compare


@_over_suites
def compare(
    problem: Problem, optimizers: Optimizers, *, backends: str | Sequence[str] = ("numpy",),
    config: RunConfig | None = None, repeats: int = 1, strict: bool = False,
    progress: bool = True, redraw_data: bool = False,
    store: str | os.PathLike[str] | None = None, executor: Any = None,
    order: str = "interleaved", **overrides: Any,
) -> Comparison:
    """Run every optimizer on every backend, ``repeats`` times, and collect the results.

    Every run starts from the same initial point (drawn once per repetition in numpy float64)
    on the same data, with the same minibatch order, and stops on the same rule.

    Parameters
    ----------
    problem : Problem or optcmp.suites.Suite
        A suite runs every problem into one comparison (see :mod:`optcmp.suites`).
    optimizers : sequence of OptimizerSpec, factory or str
        e.g. ``[optcmp.gd, optcmp.adadelta(rho=0.9), "lbfgs"]``.
    backends : str or sequence of str, default ("numpy",)
        Backend names, a comma-separated string, or ``"all"`` (every installed one).
        Runs go in registry order (numpy, torch, tensorflow).
    config : RunConfig, optional
        The settings of every run (:class:`~optcmp.run.RunConfig`; its ``backend`` is replaced
        by each of ``backends``, its ``seed`` is repetition 0's, its ``repeat`` by each
        repetition's). Default ``RunConfig()``.
    repeats : int, default 1
        Repetitions. What a repetition varies: repetition ``r`` uses seed ``seed + r`` for the
        initial point (for problems whose initial point is random, e.g. ``init="normal"``) and
        the minibatch order (stochastic optimizers); the data stay fixed unless
        ``redraw_data=True``. Within a repetition every optimizer and backend gets the same
        data, initial point and minibatch order. Timing noise differs between repetitions too,
        so repetitions of a deterministic full-batch run measure the timing spread.
    progress : bool, default True
        Progress bar on stderr (tqdm).
    strict : bool, default False
        Raise when a backend is not installed, instead of recording its runs as ``skipped``.
    redraw_data : bool, default False
        Also redraw the data in every repetition: repetition ``r`` runs on
        ``problem.with_seed(data_seed + r)`` where ``data_seed`` is the problem's own data seed
        (repetition 0 is ``problem`` itself); each run records its problem's spec in
        ``RunResult.problem_spec``. Needs a problem that generates its data (not one built from
        your arrays).
    store : str or path-like, optional
        A run store (``"runs.jsonl"``, see :mod:`optcmp.store`): every finished run is appended
        and fsync-ed as it finishes; runs already in the store (same :func:`optcmp.store.run_key`)
        are read back instead of run again, so re-running an interrupted sweep resumes it.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where runs execute (see :mod:`optcmp.executors`). Default: sequentially in this
        process, one at a time; concurrent runs are flagged ``shared_host`` with a warning.
        With an executor the callback runs on the worker.
    order : {"interleaved", "blocks"}, default "interleaved"
        Execution order (:func:`execution_order`: A B C, C B A, ... or A A, B B, ...).
    **overrides
        Run settings replacing those of ``config`` (any :class:`~optcmp.run.RunConfig` field:
        ``device``, ``dtype``, ``stopping``, ``tol``, ``max_iter``, ``max_time``,
        ``max_evals``, ``seed``, ``callback``, ``eval_every``, ``threads``, ``gradient``, ...).
        ``device`` applies to the framework backends (numpy always runs on the CPU, a warning
        says so) and is checked before any run: an absent GPU is one error naming the
        available devices. ``execution`` may also be a sequence of modes: each optimizer then
        runs in each, side by side, labelled ``"<label> [<mode>]"``.

    Returns
    -------
    Comparison
        Runs in sweep order (repetition, backend, optimizer) whatever the execution order.
        ``settings["store"]`` reports how many runs were reused and how many executed.

    Raises
    ------
    ValueError, TypeError
        A ``problem`` that is no Problem, ``optimizers`` that are no list of optimizers, bad
        optimizer names or hyperparameters, more than :data:`MAX_RUNS` runs (repetitions x
        backends x optimizers), unknown backends, an unknown setting, a bad device name or an
        absent device, bad budgets, an unusable executor: checked before any run starts.
    BackendUnavailable, NotImplementedError
        With ``strict=True``, a backend that is not installed; ``redraw_data=True`` with a
        problem that cannot redraw its data.
    optcmp.store.StoreMismatchError
        The store holds another problem or another store format version.
    optcmp.store.Interrupted
        Ctrl-C (a ``KeyboardInterrupt``): finished runs are kept (in the store, and in the
        exception's ``comparison``), the runs in progress are discarded, and the message says
        how to resume.
    """
    check_problem(problem)
    specs, names = _specs(optimizers), _normalize_backends(backends)
    execution = overrides.pop("execution", None)
    base = configured(config, overrides, "compare")
    modes = _check_sweep(specs, names, repeats, base.threads,
                         base.execution if execution is None else execution, order)
    base = base.replace(execution=modes[0])
    base = base.replace(stopping=base.stopping_rule(problem, stacklevel=1))
    if executor is not None:
        check_executor(executor, problem)  # a problem that cannot ship fails before any run
    missing = _missing_backends(names, strict)
    if not is_cpu_device(base.device):
        _preflight_device(names, missing, base.device, base.dtype, executor)
    return _Sweep(problem, redraw_data, repeats, order=order).plan(
        specs, names, missing, base, modes).execute(store, executor, progress)


def _check_sweep(specs: list[OptimizerSpec], names: list[str], repeats: Any, threads: Any,
                 execution: str | Sequence[str], order: Any = "interleaved") -> list[str]:
    """Check the sweep's settings before any run; return its execution modes."""
    modes = _executions(execution)
    _check_sweep_size(repeats, names, specs, len(modes))  # repeats checked here
    _check_threads_and_order(threads, order)
    for s in specs:  # an impl a backend lacks is an input error: say so before running anything
        for b in names:
            resolve_impl(s, b)  # the declarations only: imports no framework
    return modes


def _executions(execution: str | Sequence[str]) -> list[str]:
    """The execution modes of a sweep (issue 11), checked: one or more of ``EXECUTIONS``."""
    modes = [execution] if isinstance(execution, str) else list(execution)
    bad = [m for m in modes if m not in EXECUTIONS]
    if not modes or bad:
        raise ValueError(f"execution must be one or more of {EXECUTIONS}, got {execution!r}")
    return list(dict.fromkeys(modes))


#: Most runs one :func:`compare` call plans (every task and result is held in memory).
MAX_RUNS = 1_000_000


def _check_sweep_size(repeats: Any, names: list[str], specs: list[OptimizerSpec],
                      modes: int = 1) -> None:
    """Check ``repeats``; refuse a sweep too large to plan (``--repeats 1000000000``)."""
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    total = int(repeats) * len(names) * len(specs) * modes
    if total > MAX_RUNS:
        raise ValueError(
            f"repeats={repeats:,} x {len(names)} backend(s) x {len(specs)} optimizer(s) = "
            f"{total:,} runs; one sweep holds at most {MAX_RUNS:,} runs (each one's task and "
            "result stay in memory). Use fewer repetitions, or split the sweep and combine the "
            "comparisons (Comparison.concat)")


def _is_suite(problem: Any) -> bool:
    """A problem suite (:class:`optcmp.suites.Suite`): a named list of problems."""
    return not isinstance(problem, Problem) and isinstance(getattr(problem, "problems", None),
                                                           list)


def _compare_suite(suite: Any, optimizers: Optimizers, store: Any, kwargs: dict[str, Any],
                   one: Callable[..., Comparison]) -> Comparison:
    """``one`` (compare) on every problem of ``suite``, collected in one comparison.

    The comparison's ``settings["suite"]`` names the problems and ``settings["optima"]`` holds
    each problem's optimum record; with a ``store``, each problem gets its own store file,
    ``<store stem>-<problem name><ext>``.
    """
    from optcmp.store import Interrupted

    comps: list[Comparison] = []
    for p in suite.problems:
        where = None
        if store is not None:
            stem, ext = os.path.splitext(os.fspath(store))
            where = f"{stem}-{p.name}{ext or '.jsonl'}"
        try:
            comps.append(one(p, optimizers, store=where, **kwargs))
        except Interrupted as exc:  # QA: keep the finished problems' runs, not only this one's
            raise _suite_interrupted(suite, comps, exc, store) from None
    return _suite_comparison(suite, comps)


def _suite_comparison(suite: Any, comps: list[Comparison]) -> Comparison:
    """The comparisons of the suite's first ``len(comps)`` problems, as one.

    With a store, each problem's settings differ only by their store file: the shared settings
    stay (QA: they used to be replaced by ``{"merged": [...]}``, losing the stopping rule and
    the count of runs read back), and ``settings["store"]`` sums the per-problem counts.
    """
    comp = Comparison.concat(comps)
    stores: list[dict[str, Any]] = [c.settings.get("store") or {} for c in comps]
    rest = [{k: v for k, v in c.settings.items() if k != "store"} for c in comps]
    if "merged" in comp.settings and all(stores) and all(r == rest[0] for r in rest):
        comp.settings = dict(rest[0])
        comp.settings["store"] = {
            "paths": [st.get("path") for st in stores],
            **{k: sum(st.get(k, 0) for st in stores)
               for k in ("reused", "executed", "write_seconds")}}
    comp.settings["suite"] = {"name": str(suite.name), "problems": [p.name for p in suite]}
    comp.settings["optima"] = {p.name: c.optimum for p, c in zip(suite.problems, comps)}
    return comp


def _suite_interrupted(suite: Any, comps: list[Comparison], exc: Any, store: Any) -> Any:
    """The Ctrl-C of a suite: the finished problems' runs and the interrupted one's, together."""
    from optcmp.store import Interrupted

    parts = comps + ([exc.comparison] if len(exc.comparison) else [])
    if not parts:
        return exc
    done = sum(len(c) for c in comps) + exc.done
    total = sum(len(c) for c in comps) + exc.total * (len(suite.problems) - len(comps))
    if store is None:
        how = ("kept in this exception's .comparison); the run(s) in progress were discarded. "
               "Pass store='runs.jsonl' (optcmp run --store runs.jsonl) to keep finished runs "
               "on disk and resume later.")
    else:
        how = (f"kept in the store files of {os.fspath(store)!r}, one per problem); the run(s) in "
               "progress were discarded. To resume, run the same command again with the same "
               "store: finished runs are read back, only the others run.")
    msg = (f"interrupted on problem {len(comps) + 1} of {len(suite.problems)} of suite "
           f"{suite.name!r}: {done} of {total} runs finished ({how}")
    return Interrupted(msg, _suite_comparison(suite, parts), exc.store, done, total)


def _specs(optimizers: Any) -> list[OptimizerSpec]:
    """The optimizers as specs, with unique labels (duplicates get their description)."""
    if isinstance(optimizers, (str, OptimizerSpec)) or callable(optimizers):
        optimizers = [optimizers]
    if not isinstance(optimizers, Iterable) or isinstance(optimizers, (dict, bytes)):
        raise TypeError("optimizers must be a list of optimizer specs, factories or names "
                        f"(e.g. [optcmp.gd, 'lbfgs']), got {type_name(optimizers)}")
    specs = [as_spec(o) for o in optimizers]
    if not specs:
        raise ValueError("optimizers is empty; give at least one (e.g. [optcmp.gd, optcmp.lbfgs])")
    labels = [s.label for s in specs]
    if len(set(labels)) < len(labels):
        specs = [s if labels.count(s.label) == 1 else
                 OptimizerSpec(s.name, s.hyperparameters, s.impl, s.describe()) for s in specs]
    return specs


def _normalize_backends(backends: str | Sequence[str]) -> list[str]:
    if isinstance(backends, str):
        if backends.lower() == "all":
            from optcmp.backends import available_backends

            return available_backends()
        backends = [b for b in backends.split(",") if b.strip()]
    names = [canonical_backend(b) for b in backends]
    if not names:
        raise ValueError("backends is empty; give at least one of " + ", ".join(BACKENDS))
    order = list(BACKENDS)
    return sorted(dict.fromkeys(names), key=order.index)  # torch before tensorflow


def _missing_backends(names: list[str], strict: bool) -> list[str]:
    """The backends that are not installed (warned about; with ``strict`` an error)."""
    missing = [b for b in names if not backends_mod.is_available(b)]
    if missing and strict:
        get_backend(missing[0])  # raises BackendUnavailable with the install hint
    for b in missing:
        warnings.warn(f"backend {b!r} is not installed; its runs are recorded as skipped "
                      f"(pip install 'optcmp[{BACKENDS[b].extra}]')", stacklevel=3)
    return missing


def _preflight_device(names: list[str], missing: list[str], device: str | None, dtype: str,
                      executor: Any) -> None:
    """Build every installed framework backend once on ``device``, before any run.

    An absent device is then one clear error (the backend's ``ValueError`` names the device and
    the available ones) instead of a table of failed runs. With a Dask client the runs execute
    on the workers, whose devices this process cannot see: the check is left to them.
    """
    if "numpy" in names:
        numpy_cpu_warning(device, stacklevel=3)
    if executor is not None and is_dask_client(executor):
        return
    for b in names:
        if b != "numpy" and b not in missing:
            get_backend(b, device=device, dtype=dtype)


@dataclass
class _Sweep:
    """The runs of one :func:`compare` call: planned tasks, results as they finish."""

    problem: Problem
    redraw_data: bool
    repeats: int
    tasks: list[RunTask] = field(default_factory=list)
    results: dict[int, RunResult] = field(default_factory=dict)
    executed: list[RunResult] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    optimum: dict[str, Any] | None = None
    env: dict[str, Any] = field(default_factory=dict)
    problems: dict[int, Problem] = field(default_factory=dict)
    order: str = "interleaved"
    exec_order: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.problems[0] = self.problem
        if self.redraw_data and self.repeats > 1:  # fail before any run when it cannot redraw
            self.problems[1] = self.problem.with_seed(self._data_seed() + 1)

    def _data_seed(self) -> int:
        return int(self.problem.spec().get("seed", 0) or 0)

    def problem_for(self, r: int) -> Problem:
        """The problem of repetition ``r`` (its own data with ``redraw_data``)."""
        if not self.redraw_data or r == 0:
            return self.problem
        if r not in self.problems:
            self.problems[r] = self.problem.with_seed(self._data_seed() + r)
        return self.problems[r]

    def plan(self, specs: list[OptimizerSpec], names: list[str], missing: list[str],
             base: RunConfig, modes: Sequence[str] = ("auto",)) -> _Sweep:
        """One task per (repetition, backend, optimizer, execution mode), and the settings."""
        for r in range(self.repeats):
            for b in names:
                config = base.replace(backend=b, device=None if b == "numpy" else base.device,
                                      seed=base.seed + r, repeat=r)
                skip = (f"backend {b!r} is not installed (pip install "
                        f"'optcmp[{BACKENDS[b].extra}]')") if b in missing else None
                for s in specs:
                    for m in modes:  # several modes: one labelled row each (issue 11)
                        spec = s if len(modes) == 1 else OptimizerSpec(
                            s.name, s.hyperparameters, s.impl, f"{s.label} [{m}]")
                        self.tasks.append(RunTask(index=len(self.tasks), key="", optimizer=spec,
                                                  config=config.replace(execution=m),
                                                  skip_message=skip))
        rule = base.stopping
        assert rule is not None
        self.settings = {
            "target": " | ".join(x.describe() for x in rule.rules() if x.kind == "target"),
            "stopping": rule.to_dict(), "repeats": self.repeats, "seed": base.seed,
            "dtype": base.dtype, "device": base.device or "cpu", "backends": names,
            "redraw_data": bool(self.redraw_data), "threads": base.threads,
            "order": self.order, "execution": list(modes), "gradient": base.gradient}
        self.exec_order = execution_order(self.repeats, len(self.tasks) // self.repeats,
                                          self.order)
        opt = self.problem.optimum()
        self.optimum = None if opt is None else opt.to_dict()  # issue 13: with its kind
        self.env = environment()
        return self

    def execute(self, store: Any, executor: Any, progress: bool) -> Comparison:
        """Read finished runs from the store, run the others, collect the comparison."""
        run_store = self._open_store(store) if store is not None else None
        reused = len(self.results)
        pending = [self.tasks[i] for i in self.exec_order if i not in self.results]
        from tqdm.auto import tqdm

        bar = tqdm(total=len(self.tasks), initial=reused, disable=not progress, file=sys.stderr,
                   unit="run", leave=False, dynamic_ncols=True)

        def on_result(task: RunTask, res: RunResult, storable: bool) -> None:
            self.results[task.index] = res
            self.executed.append(res)
            if run_store is not None and storable:
                run_store.append(task.key, res)
            if executor is not None:  # runs finish out of order elsewhere: say which one did
                bar.set_description(f"done: {task.optimizer.label} on {task.backend}")
            bar.update(1)

        def on_start(task: RunTask) -> None:  # sequential: label the bar with the run in progress
            bar.set_description(f"{task.optimizer.label} on {task.backend}")

        try:
            for problem, group in self._groups(pending):
                run_tasks(group, problem, on_result, executor, on_start)
        except KeyboardInterrupt as exc:
            raise self._interrupted(store, run_store, reused) from exc
        finally:
            bar.close()
            if run_store is not None:
                run_store.close()
        shared = [r for r in self.executed if r.shared_host]
        if shared:
            _warn_shared_host(shared, len(self.executed), executor)
        busy = [r for r in self.executed if r.contended]
        if busy:  # issue 12: contention measured whatever its cause
            from optcmp.stats import contended_issue

            warnings.warn(contended_issue(busy, len(self.executed)), UserWarning, stacklevel=3)
        return self._comparison([self.results[t.index] for t in self.tasks], run_store, reused)

    def _groups(self, pending: list[RunTask]) -> list[tuple[Problem, list[RunTask]]]:
        """The pending tasks by problem: one batch per repetition with ``redraw_data``."""
        if not self.redraw_data:
            return [(self.problem, pending)] if pending else []
        groups = []
        for r in range(self.repeats):
            group = [t for t in pending if t.repeat == r]
            if group:
                groups.append((self.problem_for(r), group))
        return groups

    def _open_store(self, store: str | os.PathLike[str]) -> Any:
        """Open the run store, key every task, and take its finished runs as results."""
        from optcmp.store import RunStore, run_key

        for t in self.tasks:
            c = t.config
            t.key = run_key(self.problem_for(t.repeat), t.optimizer, backend=c.backend,
                            device=c.device, dtype=c.dtype, seed=c.seed, stopping=c.stopping,
                            eval_every=c.eval_every, threads=c.threads,
                            execution=c.execution, gradient=c.gradient)
        run_store = RunStore.open(store, self.problem, {
            "settings": self.settings, "optimum": self.optimum, "environment": self.env})
        for t in self.tasks:
            old = run_store.get(t.key)
            if old is not None:
                res = copy.copy(old)
                res.label, res.repeat = t.optimizer.label, t.repeat
                self.results[t.index] = res
        return run_store

    def _comparison(self, runs: list[RunResult], run_store: Any, reused: int) -> Comparison:
        st = dict(self.settings)
        if run_store is not None:
            st["store"] = {"path": os.path.abspath(run_store.path), "reused": reused,
                           "executed": len(self.executed), "write_seconds": run_store.write_seconds}
        return Comparison(runs, problem=self.problem.spec(), optimum=self.optimum, settings=st,
                          environment=self.env)

    def _interrupted(self, store: Any, run_store: Any, reused: int) -> BaseException:
        """The :class:`~optcmp.store.Interrupted` of a Ctrl-C: finished runs, how to resume."""
        from optcmp.store import Interrupted

        done = [self.results[t.index] for t in self.tasks if t.index in self.results]
        total = len(self.tasks)
        where = os.fspath(store) if store is not None else None
        if where is not None:
            msg = (f"interrupted: {len(done)} of {total} runs are finished and kept in "
                   f"{where}; the run(s) in progress were discarded. To resume, run the same "
                   f"command again with the same store ({where}): finished runs are read back, "
                   "only the others run.")
        else:
            msg = (f"interrupted: {len(done)} of {total} runs finished (kept in this "
                   "exception's .comparison); the run(s) in progress were discarded. Pass "
                   "store='runs.jsonl' (optcmp run --store runs.jsonl) to keep finished runs "
                   "on disk and resume later.")
        return Interrupted(msg, self._comparison(done, run_store, reused), where, len(done),
                           total)


def _check_threads_and_order(threads: Any, order: Any) -> None:
    check_threads(threads)
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")


def execution_order(repeats: int, entries: int, order: str = "interleaved") -> list[int]:
    """Task indices in execution order; tasks are planned repetition-major.

    ``"interleaved"``: every repetition runs each (backend, optimizer) entry once, in
    alternating directions (A B C, C B A, A B C, ...), so a slow drift of the machine (thermal
    throttling, a neighbour's job starting) hits every entry alike and every entry's mean
    position is the same. ``"blocks"``: each entry runs all its repetitions back to back
    (A A A, B B B, ...), a design a drift can bias. The returned runs keep the sweep order and
    store keys do not depend on the order, so a sweep stored in one order resumes in the other.

    Parameters
    ----------
    repeats : int
        Repetitions.
    entries : int
        (backend, optimizer) entries per repetition.
    order : {"interleaved", "blocks"}
        See :func:`compare`.

    Returns
    -------
    list of int
        A permutation of ``range(repeats * entries)``.

    Examples
    --------
    >>> execution_order(3, 3)
    [0, 1, 2, 5, 4, 3, 6, 7, 8]
    >>> execution_order(2, 3, "blocks")
    [0, 3, 1, 4, 2, 5]
    """
    if order == "blocks":
        return [r * entries + e for e in range(entries) for r in range(repeats)]
    out: list[int] = []
    for r in range(repeats):
        row = range(r * entries, (r + 1) * entries)
        out.extend(row if r % 2 == 0 else reversed(row))
    return out


def _warn_shared_host(shared: list[RunResult], n_executed: int, executor: Any) -> None:
    """The one warning about runs whose timings contended (worded by cause).

    The runs are marked as warned about, so the fairness checks of the same runs
    (:func:`optcmp.stats.check_fairness`, e.g. from ``summary_table()``) do not repeat it.
    """
    from optcmp.stats import mark_shared_host_warned

    peak = max(r.concurrency for r in shared)
    if executor is None:
        msg = (f"{len(shared)} of {n_executed} runs overlapped with other optcmp runs of this "
               f"process (up to {peak} at once): their timings contend and are flagged "
               "shared_host; for time comparisons run one sweep at a time")
    else:
        msg = (f"{len(shared)} of {n_executed} runs shared their host with other runs (up to "
               f"{peak} at once): their timings contend and are flagged shared_host; time "
               "comparisons need the default sequential execution (executor=None)")
    warnings.warn(msg, UserWarning, stacklevel=4)
    mark_shared_host_warned(shared)


#: Repetitions of each of the two fastest entries behind a verdict (:func:`confirm_leaders`).
VERDICT_REPEATS = 5
#: :func:`confirm_leaders` repeats the two fastest entries only when their two times add up to
#: less (timed seconds).
VERDICT_MAX_SECONDS = 2.0


def confirm_leaders(problem: Problem, comp: Comparison, config: RunConfig | None = None, *,
                    repeats: int = VERDICT_REPEATS,
                    max_seconds: float = VERDICT_MAX_SECONDS) -> Comparison:
    """The comparison with more repetitions of its two fastest entries behind its verdict.

    With one repetition per entry (``comp.settings["repeats"] == 1``) and two entries that
    reached the target within ``max_seconds`` together, each runs ``repeats - 1`` more times,
    interleaved (A B, B A, ...), so that the verdict's interval comes from repetitions, not only
    from the timing noise of one run each. The runs take the path of every run
    (:func:`optcmp.run.run`) with ``config`` and the settings the table's run of that entry
    used: its backend, stopping rule, execution mode and gradient
    (``config.replace(backend=..., repeat=k, ...)``). They are returned as the comparison's
    ``verdict_runs``; the table's runs are unchanged.

    Parameters
    ----------
    problem : Problem
        The comparison's problem.
    comp : Comparison
        A comparison of ``problem`` (from :func:`compare` with ``config``).
    config : RunConfig, optional
        The settings ``comp`` was run with (default ``RunConfig()``).
    repeats : int, default 5
        Runs of each of the two entries in all (the table's included).
    max_seconds : float, default 2.0
        The two entries are repeated only when their times-to-target add up to less.

    Returns
    -------
    Comparison
        ``comp`` itself when there is nothing to confirm, else a copy with ``verdict_runs``.
    """
    from optcmp.optimizers.base import get_optimizer
    from optcmp.runner import run
    from optcmp.stopping import rule_from_dict

    if int(comp.settings.get("repeats", 1) or 1) > 1:
        return comp
    leaders: list[RunResult] = []
    for r in sorted((r for r in comp.runs if r.time_to_target is not None),
                    key=lambda r: float(r.time_to_target or 0.0)):
        if all((r.label, r.backend) != (o.label, o.backend) for o in leaders):
            leaders.append(r)
    if len(leaders) < 2 or sum(float(r.time_to_target or 0.0) for r in leaders[:2]) > max_seconds:
        return comp
    base = RunConfig() if config is None else config
    rule = rule_from_dict(comp.settings["stopping"])
    runs: list[RunResult] = []
    for k in range(1, int(repeats)):
        for r in (leaders[:2] if k % 2 == 0 else leaders[1::-1]):
            spec = get_optimizer(r.optimizer, impl=r.impl or "auto", label=r.label,
                                 **r.hyperparameters)
            cfg = base.replace(backend=r.backend, stopping=rule, repeat=k,
                               execution=r.execution or base.execution,
                               gradient=r.gradient or base.gradient)
            runs.append(run(problem, spec, cfg))
    return comp.replace(verdict_runs=runs)
