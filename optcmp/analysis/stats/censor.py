"""Censoring: a run that never reached the target counts as ``inf``, never as converged.

Why: see docs/statistics-and-plots.md, 'Censoring: runs that missed the target'. A run the
sweep stopped as ``censored`` (:mod:`optcmp.sweep.censor`) is one of them: it is "> its bound",
``inf`` here, so it ranks after every run that reached the target, and what it spent is what
it ran before its bound, not a budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from optcmp.results import RunResult

#: Statuses that mean "a budget ended the run" (statistics treat ``censored`` alike).
BUDGET_STATUSES = ("max_iter", "timeout", "max_evals", "max_cpu_time")
#: Metrics a time-to-target statistic can be computed in.
METRICS = ("time", "nit", "nfev", "njev")


def check_metric(metric: str) -> str:
    """``metric`` when it is one of :data:`METRICS` (else ValueError).

    Parameters
    ----------
    metric : str

    Returns
    -------
    str
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    return metric


def ran(runs: Iterable[RunResult]) -> list[RunResult]:
    """The runs that ran (``skipped`` ones left out).

    Parameters
    ----------
    runs : iterable of RunResult

    Returns
    -------
    list of RunResult
    """
    return [r for r in runs if r.status != "skipped"]


def to_target(run: RunResult, metric: str = "time") -> float:
    """A run's time (or ``nit``/``nfev``/``njev``) to target; ``inf`` when censored.

    Parameters
    ----------
    run : RunResult
    metric : {"time", "nit", "nfev", "njev"}, default "time"

    Returns
    -------
    float
    """
    check_metric(metric)
    v = run.time_to_target if metric == "time" else getattr(run, f"{metric}_to_target")
    if v is None or not run.success:
        return math.inf
    return float(v)


def spent(run: RunResult, metric: str = "time") -> float:
    """What a run spent toward the target: its value to target if reached, else its total.

    Parameters
    ----------
    run : RunResult
    metric : {"time", "nit", "nfev", "njev"}, default "time"

    Returns
    -------
    float
    """
    check_metric(metric)
    v = to_target(run, metric)
    if math.isfinite(v):
        return v
    return float(getattr(run, metric))


def censored_median(values: Sequence[float] | np.ndarray) -> float:
    """Median where ``inf`` marks a censored value.

    Parameters
    ----------
    values : sequence of float

    Returns
    -------
    float
        NaN for no values; ``inf`` when the upper middle value is censored.
    """
    a = np.sort(np.asarray(values, dtype=np.float64))
    n = a.size
    if n == 0:
        return math.nan
    if n % 2:
        return float(a[n // 2])
    lo, hi = a[n // 2 - 1], a[n // 2]
    return float(hi) if math.isinf(hi) else float((lo + hi) / 2)


def average_runtime(runs: Sequence[RunResult], metric: str = "time") -> float:
    """COCO's average runtime (aRT): everything the runs :func:`spent`, over the successes.

    Parameters
    ----------
    runs : sequence of RunResult
        Repetitions of one solver on one problem.
    metric : {"time", "nit", "nfev", "njev"}, default "time"

    Returns
    -------
    float
        ``inf`` without a success.

    References
    ----------
    N. Hansen et al., "COCO: performance assessment", arXiv:1605.03560, 2016.
    """
    used = ran(runs)
    succ = sum(1 for r in used if math.isfinite(to_target(r, metric)))
    if succ == 0:
        return math.inf
    return float(sum(spent(r, metric) for r in used) / succ)


__all__ = ["BUDGET_STATUSES", "METRICS", "average_runtime", "censored_median", "check_metric",
           "ran", "spent", "to_target"]
