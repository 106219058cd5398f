"""Rank tests of two solvers' time-to-target over repetitions (Mann-Whitney U, Vargha-Delaney A).

References
----------
H. B. Mann and D. R. Whitney, Ann. Math. Statist. 18(1), 1947. A. Vargha and H. D. Delaney,
J. Educ. Behav. Stat. 25(2), 101-132, 2000.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optcmp.analysis import format as fmt
from optcmp.analysis.stats.censor import censored_median, check_metric, ran, to_target
from optcmp.results import ComparisonData, RunResult


class NoiseWarning(UserWarning):
    """A difference between two optimizers is within the noise of the repetitions."""


@dataclass(frozen=True)
class PairwiseComparison:
    """Two solvers' time-to-target compared with a Mann-Whitney rank-sum test.

    Attributes
    ----------
    a, b, metric, message : str
    n_a, n_b : int
    median_a, median_b : float
        Censored medians.
    statistic, p_value : float
        Mann-Whitney ``U`` of ``a``, and the two-sided p-value.
    a_faster : float
        Vargha-Delaney ``A``: P(a run of ``a`` reaches the target sooner), ties half.
    rank_biserial : float
        The same effect as a rank-biserial correlation, ``2 A - 1``.
    magnitude : str
    significant : bool
        ``p_value < alpha`` and the effect is not negligible.
    """

    a: str
    b: str
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    statistic: float
    p_value: float
    a_faster: float
    rank_biserial: float
    magnitude: str
    significant: bool
    metric: str
    message: str = field(default="")

    def __str__(self) -> str:
        """The conclusion in one sentence (:attr:`message`): p-value and ``A``."""
        return self.message


def magnitude(a: float) -> str:
    """Vargha and Delaney's name of an effect ``A``: negligible, small, medium or large.

    Parameters
    ----------
    a : float

    Returns
    -------
    str
    """
    d = max(a, 1.0 - a)
    for limit, name in ((0.56, "negligible"), (0.64, "small"), (0.71, "medium")):
        if d < limit:
            return name
    return "large"


def _u_test(xa: np.ndarray, xb: np.ndarray) -> tuple[float, float]:
    """Mann-Whitney U of ``a`` and the two-sided p-value; censored values rank last."""
    from scipy import stats

    both = np.concatenate([xa, xb])
    big = max(np.abs(both[np.isfinite(both)]).max(initial=0.0) * 2 + 1, 1.0)
    ra, rb = np.where(np.isinf(xa), big, xa), np.where(np.isinf(xb), big, xb)
    pooled = np.concatenate([ra, rb])
    if np.all(pooled == ra[0]):
        return len(ra) * len(rb) / 2.0, 1.0
    exact = np.unique(pooled).size == pooled.size and pooled.size <= 40
    res = stats.mannwhitneyu(ra, rb, alternative="two-sided",
                             method="exact" if exact else "asymptotic")
    return float(res.statistic), float(res.pvalue)


def _message(labels: tuple[str, str], metric: str, medians: tuple[float, float], p: float,
             a_faster: float, mag: str, sig: bool, alpha: float, n: tuple[int, int]) -> str:
    """The comparison's conclusion in one sentence."""
    def fm(v: float) -> str:
        return fmt.seconds(v) if metric == "time" else f"{fmt.count(v)} {metric}"

    ma, mb = medians
    if sig:
        if a_faster > 0.5:
            fast, slow, mf, ms = labels[0], labels[1], ma, mb
        else:
            fast, slow, mf, ms = labels[1], labels[0], mb, ma
        return (f"{fast} reaches the target sooner than {slow} (medians {fm(mf)} vs "
                f"{fm(ms)}; p={p:.3g}, A={a_faster:.2f}, {mag} effect)")
    msg = (f"no significant difference between {labels[0]} (median {fm(ma)}) and "
           f"{labels[1]} (median {fm(mb)}): within noise at alpha={alpha:g} (p={p:.3g}, "
           f"A={a_faster:.2f}, {mag} effect, n={n[0]}+{n[1]})")
    # smallest two-sided p-value the exact test can give with these sample sizes
    p_min = min(1.0, 2.0 / math.comb(n[0] + n[1], n[0]))
    if p_min >= alpha:
        msg += (f"; with {n[0]}+{n[1]} repetitions the smallest attainable p is "
                f"{p_min:.3g}, so add repeats")
    return msg


def compare_pair(runs_a: Sequence[RunResult], runs_b: Sequence[RunResult], *,
                 metric: str = "time", alpha: float = 0.05, labels: tuple[str, str] | None = None,
                 warn: bool = True) -> PairwiseComparison:
    """Compare two solvers' time-to-target over repetitions (two-sided Mann-Whitney U test).

    The p-value is exact without ties up to 40 runs in all, else asymptotic.

    Parameters
    ----------
    runs_a, runs_b : sequence of RunResult
    metric : {"time", "nit", "nfev", "njev"}, default "time"
    alpha : float, default 0.05
    labels : (str, str), optional
    warn : bool, default True
        Emit a :class:`NoiseWarning` when the difference is within noise.

    Returns
    -------
    PairwiseComparison
    """
    check_metric(metric)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    ua, ub = ran(runs_a), ran(runs_b)
    if not ua or not ub:
        side = "a" if not ua else "b"
        raise ValueError(f"runs_{side} holds no run that ran (empty or all skipped)")
    if labels is None:
        labels = (f"{ua[0].label} ({ua[0].backend})", f"{ub[0].label} ({ub[0].backend})")
    xa = np.array([to_target(r, metric) for r in ua])
    xb = np.array([to_target(r, metric) for r in ub])
    u, p = _u_test(xa, xb)
    a_faster = 1.0 - u / (len(xa) * len(xb))
    mag = magnitude(a_faster)
    sig = bool(p < alpha and mag != "negligible")
    ma, mb = censored_median(xa), censored_median(xb)
    msg = _message(labels, metric, (ma, mb), p, a_faster, mag, sig, alpha, (len(xa), len(xb)))
    if not sig and warn:
        warnings.warn(msg, NoiseWarning, stacklevel=2)
    return PairwiseComparison(labels[0], labels[1], len(xa), len(xb), ma, mb, u, p, a_faster,
                              2 * a_faster - 1, mag, sig, metric, msg)


def compare_optimizers(comp: ComparisonData, a: str | dict[str, Any], b: str | dict[str, Any],
                       *, metric: str = "time", alpha: float = 0.05, warn: bool = True,
                       stacklevel: int = 2) -> PairwiseComparison:
    """:func:`compare_pair` of two solvers of a comparison, chosen by label or criteria.

    Parameters
    ----------
    comp : ComparisonData
    a, b : str or dict
        An optimizer label, or criteria for ``comp.select``.
    metric, alpha, warn
        As in :func:`compare_pair`.
    stacklevel : int, default 2
        Of the :class:`NoiseWarning`.

    Returns
    -------
    PairwiseComparison
    """
    sides = []
    for side in (a, b):
        crit = {"label": side} if isinstance(side, str) else dict(side)
        runs = comp.select(**crit)
        if not runs:
            labels = sorted({r.label for r in comp.runs})
            raise ValueError(f"no run matches {crit!r}; optimizer labels: {labels}")
        sides.append(runs)
    names = [side if isinstance(side, str) else " / ".join(str(v) for v in side.values())
             for side in (a, b)]
    pair = compare_pair(sides[0], sides[1], metric=metric, alpha=alpha, warn=False,
                        labels=(names[0], names[1]))
    if warn and not pair.significant:  # compare_pair's warning, pointing at the caller
        warnings.warn(pair.message, NoiseWarning, stacklevel=stacklevel)
    return pair


__all__ = ["NoiseWarning", "PairwiseComparison", "compare_optimizers", "compare_pair",
           "magnitude"]
