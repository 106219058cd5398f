"""What the statistics call a solver and a problem instance, and their display names.

A problem instance includes the spec and the repetition: repetitions, and runs on other data,
count as separate instances in profiles.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from optcmp.results import RunResult

#: Columns identifying one row of :func:`optcmp.analysis.stats.summary.summarize`.
GROUP_KEYS = ("problem", "optimizer", "backend", "device", "dtype")


def spec_key(run: RunResult) -> str:
    """The run's problem spec as canonical JSON (sorted keys): its data, as a key.

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    str
    """
    return json.dumps(run.problem_spec or {}, sort_keys=True, default=str)


def solver_key(run: RunResult) -> tuple[str, str, str, str]:
    """``(label, backend, device, dtype)``: what a profile calls a solver.

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    tuple of (str, str, str, str)
    """
    return (run.label, run.backend, run.device, run.dtype)


def instance_key(run: RunResult) -> tuple[str, str, int]:
    """``(problem, spec_key, repeat)``: what a profile calls a problem instance.

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    tuple of (str, str, int)
    """
    return (run.problem, spec_key(run), int(run.repeat))


def solver_labels(runs: Sequence[RunResult]) -> dict[tuple[str, str, str, str], str]:
    """Display names of the solvers: the label, plus what differs (``"gd / torch"``).

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    dict of (str, str, str, str) to str
        By :func:`solver_key`, in order of first appearance.
    """
    keys = list(dict.fromkeys(solver_key(r) for r in runs))
    vary = [i == 0 or len({k[i] for k in keys}) > 1 for i in range(4)]
    return {k: " / ".join(k[i] for i in range(4) if vary[i]) for k in keys}


def group_runs(runs: Iterable[RunResult]) -> dict[tuple[str, ...], list[RunResult]]:
    """The runs of each :data:`GROUP_KEYS` combination, in order.

    Parameters
    ----------
    runs : iterable of RunResult

    Returns
    -------
    dict of tuple to list of RunResult
    """
    groups: dict[tuple[str, ...], list[RunResult]] = {}
    for r in runs:
        groups.setdefault((r.problem, r.label, r.backend, r.device, r.dtype), []).append(r)
    return groups


__all__ = ["GROUP_KEYS", "group_runs", "instance_key", "solver_key", "solver_labels",
           "spec_key"]
