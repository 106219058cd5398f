"""What the statistics call a solver and a problem instance, and their display names.

A *solver* is an (optimizer label, backend, device, dtype) combination; a *problem instance* is
a (problem, problem spec, repetition) combination, so repetitions count as separate instances in
profiles ("problems x repetitions").
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
    """``(optimizer label, backend, device, dtype)``: what a profile calls a solver.

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    tuple of (str, str, str, str)
        ``(run.label, run.backend, run.device, run.dtype)``.
    """
    return (run.label, run.backend, run.device, run.dtype)


def instance_key(run: RunResult) -> tuple[str, str, int]:
    """``(problem, problem spec, repetition)``: what a profile calls a problem.

    Repetitions are separate instances ("problems x repetitions"); two runs of the same problem
    and repetition on different data (another problem spec) are separate instances too.

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    tuple of (str, str, int)
        Problem name, the problem spec as canonical JSON (sorted keys), repetition index.
    """
    return (run.problem, spec_key(run), int(run.repeat))


def solver_labels(runs: Sequence[RunResult]) -> dict[tuple[str, str, str, str], str]:
    """Short display names of the solvers: the parts that vary among ``runs`` only.

    The optimizer label is always kept; backend, device and dtype are added only when runs
    differ in them (e.g. ``"gd / torch"`` when several backends ran).

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    dict of (str, str, str, str) to str
        :func:`solver_key` -> label, in order of first appearance.
    """
    keys = list(dict.fromkeys(solver_key(r) for r in runs))
    vary = [len({k[i] for k in keys}) > 1 for i in range(4)]
    vary[0] = True
    out = {}
    for k in keys:
        parts = [k[i] for i in range(4) if vary[i]]
        out[k] = " / ".join(parts)
    return out


def group_runs(runs: Iterable[RunResult]) -> dict[tuple[str, ...], list[RunResult]]:
    """The runs of each (problem, optimizer label, backend, device, dtype), in order.

    Parameters
    ----------
    runs : iterable of RunResult

    Returns
    -------
    dict of tuple to list of RunResult
        Keys in the order of :data:`GROUP_KEYS`.
    """
    groups: dict[tuple[str, ...], list[RunResult]] = {}
    for r in runs:
        k = (r.problem, r.label, r.backend, r.device, r.dtype)
        groups.setdefault(k, []).append(r)
    return groups


__all__ = ["GROUP_KEYS", "group_runs", "instance_key", "solver_key", "solver_labels",
           "spec_key"]
