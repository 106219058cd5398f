"""Where runs execute: sequentially (the default), on a ``concurrent.futures`` executor, or on a
``dask.distributed`` cluster.

Every path calls the same per-run task function, :func:`execute_run`, so a run gives the same
result wherever it runs. How a problem travels to workers: docs/scaling-out.md, 'Executors'.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from optcmp.engine.config import RunConfig
from optcmp.engine.host import host_name
from optcmp.engine.runner import run, skipped_result
from optcmp.optimizers.base import OptimizerSpec
from optcmp.problems.base import Problem
from optcmp.results import RunResult


@dataclass
class RunTask:
    """Everything one run needs besides the problem (picklable; shipped to workers)."""

    index: int
    key: str
    optimizer: OptimizerSpec
    config: RunConfig
    skip_message: str | None = None

    @property
    def backend(self) -> str:
        """The run's backend (``config.backend``)."""
        return self.config.backend

    @property
    def repeat(self) -> int:
        """The run's repetition index (``config.repeat``)."""
        return self.config.repeat


@dataclass(frozen=True)
class ProblemRef:
    """A problem shipped as its spec, rebuilt (and cached) by each worker process."""

    spec: dict[str, Any]
    data_sha256: str


@dataclass(frozen=True)
class ShippedRef:
    """A problem installed on every Dask worker by a plugin, looked up by ``token``."""

    token: str
    spec: dict[str, Any]


_PROBLEM_CACHE: dict[str, Problem] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 4


def resolve_problem(ref: Problem | ProblemRef | ShippedRef) -> Problem:
    """The problem behind ``ref``: itself, or rebuilt from its spec once per process."""
    if isinstance(ref, Problem):
        return ref
    if isinstance(ref, ShippedRef):
        from optcmp._dask import shipped_problem
        shipped = shipped_problem(ref.token)
        if shipped is None:
            raise ValueError(f"problem {ref.spec.get('name', ref.spec.get('problem'))!r} was not "
                             f"installed on this worker (plugin optcmp-problem-{ref.token})")
        return shipped
    from optcmp.fingerprint import canonical_json, data_fingerprint
    from optcmp.problems import problem_from_spec
    key = f"{canonical_json(ref.spec)} {ref.data_sha256}"  # checked once per fingerprint
    with _CACHE_LOCK:
        cached = _PROBLEM_CACHE.get(key)
        if cached is None:
            cached = problem_from_spec(ref.spec)
            fp = data_fingerprint(cached)
            if fp != ref.data_sha256:
                raise ValueError(
                    f"problem rebuilt from {ref.spec} on host {socket.gethostname()} has data "
                    f"sha256 {fp[:12]}..., the client's is {ref.data_sha256[:12]}...: the worker "
                    "generates other data (different numpy?); install the same versions")
            while len(_PROBLEM_CACHE) >= _CACHE_SIZE:
                _PROBLEM_CACHE.pop(next(iter(_PROBLEM_CACHE)))
            _PROBLEM_CACHE[key] = cached
    return cached


def execute_run(task: RunTask,
                problem: Problem | ProblemRef | ShippedRef) -> tuple[RunResult, bool]:
    """Run one task: the per-run function of every execution path."""
    started = time.time()
    try:
        prob = resolve_problem(problem)
    except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
        spec = problem.spec() if isinstance(problem, Problem) else problem.spec
        cfg = task.config
        return RunResult(problem=str(spec.get("name", spec.get("problem", "?"))),
                         optimizer=task.optimizer.name, label=task.optimizer.label,
                         backend=cfg.backend, dtype=cfg.dtype,
                         hyperparameters=dict(task.optimizer.hyperparameters), seed=cfg.seed,
                         repeat=cfg.repeat, status="failed", message=f"{type(exc).__name__}: {exc}",
                         host=host_name(), started_at=started, finished_at=time.time()), False
    out = guarded_run(prob, task, lambda: run(prob, task.optimizer, task.config), started)
    assert out is not None  # run() always ends its run
    return out


def guarded_run(problem: Problem, task: RunTask, go: Callable[[], RunResult | None],
                started: float) -> tuple[RunResult, bool] | None:
    """``go()``'s result and True (storable), or the task's skipped or failed result and
    False: a task skipped up front, a missing backend, a crash; None when ``go`` paused."""
    from optcmp.frameworks import BackendUnavailable
    status, message = "skipped", task.skip_message
    if message is None:
        try:
            res = go()
            return None if res is None else (res, True)
        except BackendUnavailable as exc:
            message = str(exc)
        except Exception as exc:  # noqa: BLE001 - recorded, the other runs go on
            status, message = "failed", f"{type(exc).__name__}: {exc}"
    return skipped_result(problem, task.optimizer, task.config, message, status,
                          started_at=started), False


def failed_result(problem: Problem, task: RunTask, message: str) -> RunResult:
    """A ``failed`` result for a run lost outside :func:`execute_run` (dead worker, pool)."""
    return skipped_result(problem, task.optimizer, task.config, message, status="failed")


# ---------------------------------------------------------------------- dispatch
def is_dask_client(obj: Any) -> bool:
    """Whether ``obj`` is a ``dask.distributed.Client`` (without importing dask)."""
    return any(c.__module__.startswith("distributed") and c.__name__ == "Client"
               for c in type(obj).__mro__)


def problem_ref(problem: Problem) -> ProblemRef | None:
    """A :class:`ProblemRef` when workers can rebuild ``problem`` from its spec, else None."""
    from optcmp.fingerprint import data_fingerprint
    from optcmp.problems import rebuildable
    return ProblemRef(problem.spec(), data_fingerprint(problem)) if rebuildable(problem) else None


def check_executor(executor: Any, problem: Problem) -> None:
    """Validate ``executor`` for ``problem`` before anything runs."""
    if is_dask_client(executor):
        return
    if not isinstance(executor, Executor):
        raise TypeError("executor must be a concurrent.futures.Executor or a "
                        f"dask.distributed.Client, got {type(executor).__name__}")
    if not isinstance(executor, ThreadPoolExecutor) and problem_ref(problem) is None:
        raise ValueError(
            f"problem {problem.name!r} was built from your own data and cannot be rebuilt from "
            f"its spec on a worker process; {type(executor).__name__} would pickle the data for "
            "every run. Use a dask.distributed.Client (the data are scattered once), a "
            "ThreadPoolExecutor, or the default sequential execution.")


OnResult = Callable[[RunTask, RunResult, bool], None]


def run_tasks(tasks: Sequence[RunTask], problem: Problem, on_result: OnResult,
              executor: Any = None,
              on_start: Callable[[RunTask], None] | None = None) -> None:
    """Execute ``tasks`` and report each result as it finishes."""
    if executor is None:
        for t in tasks:
            if on_start is not None:
                on_start(t)
            res, ok = execute_run(t, problem)
            on_result(t, res, ok)
    elif is_dask_client(executor):
        _run_dask(tasks, problem, on_result, executor)
    else:
        _run_futures(tasks, problem, on_result, executor)


def _run_futures(tasks: Sequence[RunTask], problem: Problem, on_result: OnResult,
                 executor: Executor) -> None:
    """:func:`run_tasks` on a ``concurrent.futures`` executor."""
    from concurrent.futures import as_completed
    ref: Problem | ProblemRef | None = (problem if isinstance(executor, ThreadPoolExecutor)
                                        else problem_ref(problem))
    assert ref is not None  # check_executor ran first
    futs = {executor.submit(execute_run, t, ref): t for t in tasks}
    try:
        for f in as_completed(futs):
            t = futs[f]
            try:
                res, ok = f.result()
            except Exception as exc:  # noqa: BLE001 - a broken pool: this run is lost
                res, ok = failed_result(problem, t, f"executor error, run lost: "
                                                    f"{type(exc).__name__}: {exc}"), False
            on_result(t, res, ok)
    except BaseException:
        for f in futs:
            f.cancel()
        raise


def _run_dask(tasks: Sequence[RunTask], problem: Problem, on_result: OnResult,
              client: Any) -> None:
    """:func:`run_tasks` on a Dask client."""
    from distributed import as_completed
    ref: ProblemRef | ShippedRef | None = problem_ref(problem)
    plugin = None
    if ref is None:
        from optcmp._dask import ProblemPlugin
        token = uuid.uuid4().hex
        plugin = ProblemPlugin(token, problem)
        client.register_plugin(plugin, name=plugin.name)
        ref = ShippedRef(token, problem.spec())
    futs = {client.submit(execute_run, t, ref, pure=False, key=f"optcmp-run-{t.optimizer.name}-"
                          f"{t.backend}-s{t.config.seed}-{uuid.uuid4().hex[:8]}"): t for t in tasks}
    pending = set(futs)
    try:
        for f in as_completed(list(futs)):
            t = futs[f]
            pending.discard(f)
            if f.status == "error":
                exc = f.exception()
                res, ok = failed_result(problem, t, (
                    f"run lost on the Dask cluster ({type(exc).__name__}: {exc}); a worker "
                    "probably died while running it")), False
            else:
                try:
                    res, ok = f.result()
                except Exception as exc:  # noqa: BLE001 - cancelled or lost
                    res, ok = failed_result(problem, t, f"run lost on the Dask cluster: "
                                                        f"{type(exc).__name__}: {exc}"), False
            f.release()
            on_result(t, res, ok)
    except BaseException:
        if pending:
            client.cancel(list(pending))
        raise
    finally:
        if plugin is not None:
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(plugin.name)


__all__ = ["ProblemRef", "RunTask", "ShippedRef", "check_executor", "execute_run", "failed_result",
           "guarded_run", "is_dask_client", "problem_ref", "resolve_problem", "run_tasks"]
