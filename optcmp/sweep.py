"""A sweep: :func:`compare` runs every optimizer on every backend, ``repeats`` times.

The sweep plans the runs (one :class:`~optcmp.executors.RunTask` each, holding a
:class:`~optcmp.runner.RunConfig`), reads finished ones back from a run store, executes the
others (sequentially, or on an executor: :mod:`optcmp.executors`) and collects a
:class:`~optcmp.results.Comparison`. It depends on the runner and the executors; neither depends
on it.
"""

from __future__ import annotations

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
from optcmp.backends.base import check_device, check_dtype, is_cpu_device
from optcmp.comparison import Comparison
from optcmp.environment import environment
from optcmp.executors import RunTask, check_executor, is_dask_client, run_tasks
from optcmp.monitor import Callback
from optcmp.optimizers.base import OptimizerSpec, as_spec, resolve_impl
from optcmp.problems.base import Problem
from optcmp.results import RunResult
from optcmp.runner import (
    EXECUTIONS,
    RunConfig,
    check_problem,
    check_threads,
    numpy_cpu_warning,
    type_name,
)
from optcmp.stopping import Rule
from optcmp.threads import DEFAULT_THREADS

__all__ = ["ORDERS", "compare", "execution_order"]

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
    device: str | None = None, dtype: str = "float64", stopping: Rule | None = None,
    tol: float = 1e-6, max_iter: int | None = 100_000, max_time: float | None = 60.0,
    max_evals: int | None = None, repeats: int = 1, seed: int = 0, strict: bool = False,
    callback: Callback | None = None, eval_every: int | None = None, progress: bool = True,
    redraw_data: bool = False, store: str | os.PathLike[str] | None = None,
    executor: Any = None, threads: int | None = DEFAULT_THREADS,
    order: str = "interleaved", execution: str | Sequence[str] = "auto", gradient: str = "auto",
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
    device : str, optional
        Device for the framework backends (``"cuda"``, ``"cuda:N"``, ``"gpu"``; default the
        CPU), checked before any run: an absent GPU is one error naming the available devices.
        numpy always runs on the CPU (a warning says so).
    dtype, stopping, tol, max_iter, max_time, max_evals, eval_every, callback, threads, seed, \
gradient
        As in :func:`optcmp.run_one` (the :class:`~optcmp.runner.RunConfig` fields; ``seed`` is
        repetition 0's). With an executor the callback runs on the worker.
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
    order : {"interleaved", "blocks"}, default "interleaved"
        Execution order (:func:`execution_order`: A B C, C B A, ... or A A, B B, ...).
    execution : str or sequence of str, default "auto"
        :attr:`~optcmp.runner.RunConfig.execution`, or several modes: each optimizer then
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
        backends x optimizers), unknown backends, a bad device name or an absent device, bad
        budgets, an unusable executor: checked before any run starts.
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
    device, dtype = check_device(device), check_dtype(dtype)
    modes = _check_sweep(specs, names, repeats, threads, execution, order)
    base = RunConfig(device=device, dtype=dtype, stopping=stopping, tol=tol, max_iter=max_iter,
                     max_time=max_time, max_evals=max_evals, seed=seed, callback=callback,
                     eval_every=eval_every, threads=threads, execution=modes[0], gradient=gradient)
    base = base.replace(stopping=base.stopping_rule(problem, stacklevel=1))
    if executor is not None:
        check_executor(executor, problem)  # a problem that cannot ship fails before any run
    missing = _missing_backends(names, strict)
    if not is_cpu_device(device):
        _preflight_device(names, missing, device, dtype, executor)
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
    rest = [c.settings.drop("store") for c in comps]
    settings = comp.settings
    if "merged" in settings and all(stores) and all(r == rest[0] for r in rest):
        settings = rest[0].replace(store={
            "paths": [st.get("path") for st in stores],
            **{k: sum(st.get(k, 0) for st in stores)
               for k in ("reused", "executed", "write_seconds")}})
    return comp.replace(settings=settings.replace(
        suite={"name": str(suite.name), "problems": [p.name for p in suite]},
        optima={p.name: c.optimum for p, c in zip(suite.problems, comps)}))


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
        runs = [self.results[t.index] for t in self.tasks]
        executed = {id(r) for r in self.executed}  # the sweep warned about these just now
        warned = bool(shared) and all(id(r) in executed for r in runs if r.shared_host)
        return self._comparison(runs, run_store, reused).replace(shared_host_warned=warned)

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
                self.results[t.index] = old.replace(label=t.optimizer.label, repeat=t.repeat)
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

    The comparison says it was given (``shared_host_warned``), so the fairness checks of its
    statistics (e.g. ``summary_table()``) do not repeat it.
    """
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
