"""Intervals: of a censored median (:func:`median_ci`, with the coverage its order statistics
really have) and of the time-to-target factor between two solvers (:func:`factor_interval`,
behind the verdict).

References
----------
B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall, 1993.
H. A. David and H. N. Nagaraja, "Order Statistics", 3rd ed., Wiley, 2003, section 7.1
(distribution-free confidence intervals for quantiles).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from optcmp.analysis.stats.censor import censored_median
from optcmp.results import RunResult


@dataclass(frozen=True)
class MedianCI:
    """A median and its confidence interval.

    Attributes
    ----------
    median, low, high : float
        ``inf``: unbounded; NaN with fewer than 2 values.
    level : float
        The level asked for.
    method : str
        ``"percentile"``, ``"BCa"``, ``"order"`` or ``"none"``: what was used.
    n, n_censored : int
    coverage : float
        The distribution-free coverage of the order statistics the interval spans
        (:func:`order_coverage`; at least this much when a bound falls between two of them):
        below ``level`` when ``n`` values cannot reach it (5 values: at most 0.9375).
    """

    median: float
    low: float
    high: float
    level: float
    method: str
    n: int
    n_censored: int
    coverage: float = math.nan


def order_coverage(n: int, i: int, j: int) -> float:
    """The coverage of ``[X_(i), X_(j)]`` (order statistics of ``n`` values, from 1) for the
    median of a continuous distribution: ``P(i <= B < j)``, ``B ~ Binomial(n, 1/2)``.

    Parameters
    ----------
    n, i, j : int

    Returns
    -------
    float
        0 when ``j <= i``.
    """
    return sum(math.comb(n, k) for k in range(max(i, 0), min(j, n + 1))) / 2.0 ** n


#: How each method's interval is named in tables and reports.
METHOD_WORDS = {"order": "order-statistic", "percentile": "percentile bootstrap",
                "BCa": "BCa bootstrap"}


def coverage_note(coverage: float, level: float, sep: str = " ") -> str:
    """``" (93.75%)"``: the coverage after an interval that falls short of its level, else ``""``.

    Parameters
    ----------
    coverage, level : float
        :attr:`MedianCI.coverage` and :attr:`MedianCI.level`.
    sep : str, default " "
        Before the brackets.

    Returns
    -------
    str
    """
    return f"{sep}({coverage:.2%})" if coverage < level else ""


def _spanned(sorted_values: np.ndarray, low: float, high: float) -> float:
    """:func:`order_coverage` of the widest order-statistic interval inside ``[low, high]``."""
    i = int(np.searchsorted(sorted_values, low, side="left")) + 1
    j = int(np.searchsorted(sorted_values, high, side="right"))
    return order_coverage(sorted_values.size, i, j)


def _order_interval(a: np.ndarray, level: float) -> tuple[float, float]:
    """The narrowest symmetric ``[X_(k), X_(n+1-k)]`` that covers ``level``, else the widest."""
    n = a.size
    k = max([k for k in range(1, (n + 1) // 2 + 1) if order_coverage(n, k, n + 1 - k) >= level],
            default=1)
    return float(a[k - 1]), float(a[n - k])


def median_ci(values: Sequence[float] | np.ndarray, *, confidence_level: float = 0.95,
              method: str = "order", n_resamples: int = 9999,
              seed: int = 0) -> MedianCI:
    """Median with a confidence interval, censoring-aware, and the coverage it really has.

    Censored values (``inf``) rank above every finite one; a bound above the largest finite
    value is ``inf``. Whatever the method, the interval's bounds are (or lie between) order
    statistics, whose coverage of the median is known exactly (:attr:`MedianCI.coverage`):
    with 5 values no interval inside their range covers more than 93.75%.

    Parameters
    ----------
    values : sequence of float
    confidence_level : float, default 0.95
    method : {"order", "percentile", "BCa"}, default "order"
        ``"order"``: the narrowest symmetric order statistics whose coverage reaches the level
        (the widest, ``[min, max]``, when none does); or a bootstrap
        (:func:`scipy.stats.bootstrap`; ``"BCa"`` only without censored values, else
        percentile), whose bounds can fall between order statistics.
    n_resamples : int, default 9999
    seed : int, default 0
        Of a bootstrap.

    Returns
    -------
    MedianCI
    """
    if method not in ("percentile", "BCa", "order"):
        raise ValueError(f"method must be 'percentile', 'BCa' or 'order', got {method!r}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    a = np.asarray(values, dtype=np.float64).ravel()
    if np.isnan(a).any():
        raise ValueError("values contain NaN; mark censored runs with inf, not NaN")
    n = int(a.size)
    cens = int(np.isposinf(a).sum())
    med = censored_median(a)
    if n < 2:
        return MedianCI(med, math.nan, math.nan, confidence_level, "none", n, cens)
    ranked = np.sort(a)
    if np.all(a == a[0]):
        return MedianCI(med, med, med, confidence_level, "none", n, cens,
                        _spanned(ranked, med, med))
    if method == "order":
        lo, hi = _order_interval(ranked, confidence_level)
        return MedianCI(med, lo, hi, confidence_level, "order", n, cens, _spanned(ranked, lo, hi))
    from scipy import stats

    finite = a[np.isfinite(a)]
    if cens:
        hi_finite = float(finite.max()) if finite.size else 0.0
        data = np.where(np.isposinf(a), abs(hi_finite) * 2.0 + 1.0, a)
        used = "percentile"
    else:
        hi_finite = float(a.max())
        data = a
        used = method
    res = stats.bootstrap((data,), np.median, confidence_level=confidence_level,
                          n_resamples=int(n_resamples), method=used, vectorized=True,
                          rng=np.random.default_rng(seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if cens:
        lo = math.inf if lo > hi_finite else lo
        hi = math.inf if hi > hi_finite else hi
    return MedianCI(med, lo, hi, confidence_level, used, n, cens, _spanned(ranked, lo, hi))


def step_times(run: RunResult) -> list[float]:
    """Durations of a run's timed steps up to the target, from its trace (first row at 0).

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    list of float
        The time-to-target itself when the trace holds no step.
    """
    t = [float(v) for v in run.trace.time]
    upto = [v for v in t if v <= (run.time_to_target or 0.0) + 1e-12]
    steps = [b - a for a, b in zip([0.0, *upto[:-1]], upto)]
    return [s for s in steps if s >= 0] or [float(run.time_to_target or 0.0)]


def factor_interval(best: Sequence[RunResult], other: Sequence[RunResult], level: float = 0.95,
                    n_resamples: int = 2000, seed: int = 0,
                    clock: str = "wall") -> tuple[float, float, str]:
    """A bootstrap interval of the time-to-target factor ``other / best``.

    Resamples the medians, or with one run each the runs' step durations (timing noise only);
    ``clock="cpu"`` reads the CPU times-to-target (a run's step durations scaled by its CPU
    over its wall time-to-target).

    Parameters
    ----------
    best, other : sequence of RunResult
        Runs that reached the target.
    level : float, default 0.95
    n_resamples : int, default 2000
    seed : int, default 0
    clock : {"wall", "cpu"}, default "wall"
        The clock of the times-to-target the factor compares.

    Returns
    -------
    low, high : float
    how : str
        What was resampled, in words.
    """
    rng = np.random.default_rng(seed)

    def to_cpu(r: RunResult) -> float:  # the run's CPU over wall time-to-target
        return float(r.cpu_time_to_target or 0.0) / float(r.time_to_target or 1.0)

    scale = to_cpu if clock == "cpu" else (lambda r: 1.0)
    if len(best) > 1 and len(other) > 1:
        a = np.array([float(r.time_to_target or 0.0) * scale(r) for r in best])
        b = np.array([float(r.time_to_target or 0.0) * scale(r) for r in other])
        ra = np.median(rng.choice(a, (n_resamples, a.size)), axis=1)
        rb = np.median(rng.choice(b, (n_resamples, b.size)), axis=1)
        how = f"bootstrap of the medians of {a.size} and {b.size} repetitions"
    else:
        ra = _resampled_sums(rng, np.array(step_times(best[0])) * scale(best[0]), n_resamples)
        rb = _resampled_sums(rng, np.array(step_times(other[0])) * scale(other[0]),
                             n_resamples)
        how = ("bootstrap of the step times of one run each (timing noise only; "
               "--repeats N for repetitions)")
    ratio = rb / np.maximum(ra, 1e-300)
    lo, hi = np.quantile(ratio, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi), how


def _resampled_sums(rng: np.random.Generator, steps: np.ndarray, n: int) -> np.ndarray:
    """``rng.choice(steps, (n, steps.size)).sum(axis=1)``: the same draws and sums, gathered in
    blocks of rows that stay in the cache."""
    idx = rng.integers(0, steps.size, (n, steps.size))
    out = np.empty(n)
    for i in range(0, n, 256):
        np.sum(steps[idx[i:i + 256]], axis=1, out=out[i:i + 256])
    return out


__all__ = ["METHOD_WORDS", "MedianCI", "coverage_note", "factor_interval", "median_ci",
           "order_coverage", "step_times"]
