"""Dask-only helpers (imported only when a ``dask.distributed.Client`` is the executor, or on a
worker resolving a problem shipped by :class:`ProblemPlugin`)."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

#: Problems installed by :class:`ProblemPlugin`, by token (worker side).
_SHIPPED: dict[str, Any] = {}


def shipped_problem(token: str) -> Any:
    """The problem a :class:`ProblemPlugin` installed on this worker under ``token``, or None."""
    return _SHIPPED.get(token)


class ProblemPlugin(WorkerPlugin):
    """Carries a problem built from user arrays to every worker, once per worker process."""

    def __init__(self, token: str, problem: Any) -> None:
        self.name = f"optcmp-problem-{token}"
        self.token = token
        self.problem = problem

    def setup(self, worker: Any) -> None:
        _SHIPPED[self.token] = self.problem

    def teardown(self, worker: Any) -> None:
        _SHIPPED.pop(self.token, None)
