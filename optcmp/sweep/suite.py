"""Problems as a dimension of a sweep: a suite runs every problem in turn into one comparison
(a Ctrl-C keeps the finished problems' runs and the interrupted one's)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from optcmp.comparison import Comparison
from optcmp.problems.base import Problem
from optcmp.store import Interrupted
from optcmp.sweep.execute import RESUME_WITH_STORE, RESUME_WITHOUT_STORE, Sweep
from optcmp.sweep.progress import Progress

#: The per-problem counts of a store that a suite's settings sum.
STORE_COUNTS = ("reused", "executed", "write_seconds")


def is_suite(problem: Any) -> bool:
    """Whether ``problem`` is a problem suite (:class:`optcmp.suites.Suite`)."""
    return not isinstance(problem, Problem) and isinstance(getattr(problem, "problems", None),
                                                           list)


def store_path(store: str | os.PathLike[str] | None, suite: Any,
               problem: Problem) -> str | os.PathLike[str] | None:
    """The run store file of ``problem``: ``store`` itself, or one file per problem of a suite."""
    if store is None or suite is None:
        return store
    stem, ext = os.path.splitext(os.fspath(store))
    return f"{stem}-{problem.name}{ext or '.jsonl'}"


def run_problems(suite: Any, sweeps: Sequence[Sweep], store: str | os.PathLike[str] | None,
                 executor: Any, progress: Progress) -> Comparison:
    """Execute the sweep of every problem in turn."""
    comps: list[Comparison] = []
    for sweep in sweeps:
        try:
            comps.append(sweep.execute(store_path(store, suite, sweep.problem), executor,
                                       progress))
        except Interrupted as exc:
            if suite is None:
                raise
            raise suite_interrupted(suite, comps, exc, store) from None
    return comps[0] if suite is None else suite_comparison(suite, comps)


def suite_comparison(suite: Any, comps: Sequence[Comparison]) -> Comparison:
    """The comparisons of the suite's first ``len(comps)`` problems, as one; its settings are
    those its problems share (their stores' paths listed and counts summed; ``{"merged": [...]}``
    if they differ otherwise), ``"suite"`` (name and problems) and ``"optima"`` (per problem)."""
    first = comps[0].settings
    if all(c.settings == first for c in comps):
        settings = dict(first)
    else:
        stores = [c.settings.get("store") or {} for c in comps]
        rest = [{k: v for k, v in c.settings.items() if k != "store"} for c in comps]
        if all(stores) and all(r == rest[0] for r in rest):
            settings = {**rest[0], "store": {
                "paths": [st.get("path") for st in stores],
                **{k: sum(st.get(k, 0) for st in stores) for k in STORE_COUNTS}}}
        else:
            settings = {"merged": [c.settings for c in comps]}
    return Comparison.concat(comps).replace(settings={
        **settings, "suite": {"name": str(suite.name), "problems": [p.name for p in suite]},
        "optima": {p.name: c.optimum for p, c in zip(suite.problems, comps)}})


def suite_interrupted(suite: Any, comps: Sequence[Comparison], exc: Interrupted,
                      store: str | os.PathLike[str] | None) -> Interrupted:
    """The Ctrl-C of a suite: the finished problems' runs and the interrupted one's, together."""
    parts = [*comps, *([exc.comparison] if len(exc.comparison) else [])]
    if not parts:
        return exc
    done = sum(len(c) for c in comps) + exc.done
    total = sum(len(c) for c in comps) + exc.total * (len(suite.problems) - len(comps))
    if store is None:
        how = ("kept in this exception's .comparison); the run(s) in progress were discarded. "
               + RESUME_WITHOUT_STORE)
    else:
        how = (f"kept in the store files of {os.fspath(store)!r}, one per problem); the run(s) "
               "in progress were discarded. " + RESUME_WITH_STORE.format(where=""))
    msg = (f"interrupted on problem {len(comps) + 1} of {len(suite.problems)} of suite "
           f"{suite.name!r}: {done} of {total} runs finished ({how}")
    return Interrupted(msg, suite_comparison(suite, parts), exc.store, done, total)
