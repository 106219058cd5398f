"""Rankings as a function of the tuning budget: expected best score after K random trials.

Why: see docs/scaling-out.md, 'Tuning, fairly'. With the sorted scores ``x_(1) <= ... <=
x_(N)``, ``P(best of K = x_(i)) = ((N - i + 1) / N)**K - ((N - i) / N)**K`` with replacement,
``C(N - i, K - 1) / C(N, K)`` without.

References
----------
P. T. Sivaprasad et al., "Optimizer benchmarking needs to account for hyperparameter tuning",
ICML 2020. D. Choi et al., "On empirical comparisons of optimizers for deep learning",
arXiv:1910.05446, 2019.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optcmp.analysis.format import fixed_width


def _check_values(values: Any, what: str = "values") -> np.ndarray:
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if x.size == 0 or np.isnan(x).any():
        raise ValueError(f"{what} must be a non-empty list of numbers without NaN, got "
                         f"{len(x)} value(s)")
    return x


def _check_ks(ks: Any, n: int, replace: bool) -> np.ndarray:
    k = np.asarray(ks).reshape(-1)
    if k.size == 0 or not np.issubdtype(k.dtype, np.integer) or (k < 1).any():
        raise ValueError(f"ks must be positive integers, got {ks!r}")
    if not replace and (k > n).any():
        raise ValueError(f"without replacement K <= {n} (the number of trials), got "
                         f"K = {int(k.max())}")
    return k.astype(np.int64)


def best_of_k_weights(n: int, k: int, *, replace: bool = True) -> np.ndarray:
    """``P(best of K draws = x_(i))`` for the sorted trials ``x_(1) <= ... <= x_(n)``."""
    if n < 1 or k < 1 or (not replace and k > n):
        raise ValueError(f"need n >= 1 and 1 <= k{' <= n' if not replace else ''}, got n={n}, "
                         f"k={k}")
    i = np.arange(1, n + 1)
    if replace:
        return ((n - i + 1) / n) ** k - ((n - i) / n) ** k
    total = math.comb(n, k)
    return np.array([math.comb(n - j, k - 1) / total for j in i])


def expected_best(values: Sequence[float] | np.ndarray, ks: Sequence[int] | np.ndarray, *,
                  replace: bool = True) -> np.ndarray:
    """Expected minimum of K uniform draws from ``values``, for each K in ``ks`` (exact)."""
    x = np.sort(_check_values(values))
    out = []
    for k in _check_ks(ks, x.size, replace):
        w = best_of_k_weights(x.size, int(k), replace=replace)
        with np.errstate(invalid="ignore"):
            out.append(float(np.sum(w[w > 0] * x[w > 0])))
    return np.array(out)


def best_of_k_quantile(values: Sequence[float] | np.ndarray, ks: Sequence[int] | np.ndarray,
                       q: float, *, replace: bool = True) -> np.ndarray:
    """The ``q``-quantile of the best of K draws from ``values``, for each K (exact)."""
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    x = np.sort(_check_values(values))
    out = []
    for k in _check_ks(ks, x.size, replace):
        cdf = np.cumsum(best_of_k_weights(x.size, int(k), replace=replace))
        out.append(float(x[min(int(np.searchsorted(cdf, q - 1e-12)), x.size - 1)]))
    return np.array(out)


@dataclass
class BudgetCurve:
    """One optimizer's curves over the tuning budget K."""

    optimizer: str
    space: str
    unit: str
    n_trials: int
    ks: np.ndarray
    expected: np.ndarray
    low: np.ndarray
    high: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p_all_miss: np.ndarray
    objective: np.ndarray
    with_cost: np.ndarray
    trial_cost: float

    def at(self, k: int) -> float:
        """The expected best score at K = ``k`` (which must be one of :attr:`ks`)."""
        hit = np.flatnonzero(self.ks == k)
        if not hit.size:
            raise ValueError(f"K = {k!r} is not on the curve (K = {int(self.ks[0])} .. "
                             f"{int(self.ks[-1])})")
        return float(self.expected[hit[0]])


@dataclass
class BudgetCurves:
    """Every optimizer's :class:`BudgetCurve` on the same K, and the ranking over K."""

    curves: list[BudgetCurve]
    level: float
    replace: bool
    miss: float
    notes: list[str] = field(default_factory=list)

    @property
    def ks(self) -> np.ndarray:
        """The tuning budgets K."""
        return self.curves[0].ks

    def curve(self, optimizer: str) -> BudgetCurve:
        """The curve of ``optimizer``."""
        for c in self.curves:
            if c.optimizer == optimizer:
                return c
        names = [c.optimizer for c in self.curves]
        raise ValueError(f"no curve for {optimizer!r}; there are {names}")

    def winners(self, *, cost: bool = False) -> list[str | None]:
        """The optimizer with the smallest expected best score at each K (None: a tie); one
        that never reached the target wins at no K."""
        vals = np.array([np.where(c.p_all_miss >= 1.0, np.inf,
                                  c.with_cost if cost else c.expected) for c in self.curves])
        out: list[str | None] = []
        for j in range(vals.shape[1]):
            col = vals[:, j]
            best = np.flatnonzero(col == col.min())
            out.append(self.curves[int(best[0])].optimizer
                       if best.size == 1 and np.isfinite(col.min()) else None)
        return out

    def crossings(self, *, cost: bool = False) -> list[int]:
        """The K at which the winner changes (the first K of each new winner)."""
        w = self.winners(cost=cost)
        return [int(self.ks[j]) for j in range(1, len(w)) if w[j] != w[j - 1]]

    def verdict(self, *, cost: bool = False) -> str:
        """Under which budget each ranking holds, e.g. ``"gd beats adam for K >= 16 trials;
        adam for K <= 8"``, with the search spaces."""
        ks = self.ks
        segs = _segments(ks, self.winners(cost=cost))
        first, last = int(ks[0]), int(ks[-1])
        names = [c.optimizer for c in self.curves]
        what = "expected best score plus tuning cost" if cost else "expected best score"
        spaces = "; ".join(f"{c.optimizer}: {c.space}" for c in self.curves)
        if len(names) == 2 and len(segs) >= 1 and all(w is not None for w, _, _ in segs):
            ordered = sorted(segs, key=lambda s: -s[2])  # the last segment speaks first
            top = ordered[0][0]
            other = [n for n in names if n != top][0]
            rest = "; ".join(f"{w} for {_span(lo, hi, first, last)}" for w, lo, hi in ordered[1:])
            span = _span(ordered[0][1], ordered[0][2], first, last)
            text = f"{top} beats {other} for {span} trials" + (f"; {rest}" if rest else "")
        else:
            text = "best: " + "; ".join(f"{w or 'tie'} for {_span(lo, hi, first, last)}"
                                        for w, lo, hi in segs)
        return (f"{text} (by {what}, {self.curves[0].unit}, trials drawn "
                f"{'with' if self.replace else 'without'} replacement; search spaces: {spaces})")

    def table(self, ks: Sequence[int] | None = None) -> str:
        """The curves at ``ks`` (default: powers of 2 and the largest K) as text, with the
        search spaces and the verdict."""
        pick = list(ks) if ks is not None else default_ks(self.ks)
        idx = [int(np.flatnonzero(self.ks == k)[0]) for k in pick if k in self.ks]
        unit = self.curves[0].unit
        pct = round(100 * self.level)
        lines = [["K", *(c.optimizer for c in self.curves)]]
        for j in idx:
            lines.append([str(int(self.ks[j]))] + [
                f"{_g(c.expected[j])} [{_g(c.low[j])}, {_g(c.high[j])}] "
                f"(+cost {_g(c.with_cost[j])}, P(all miss) {c.p_all_miss[j]:.3f})"
                for c in self.curves])
        out = [f"expected best {unit} to target after K random trials, [{pct}% band of the best "
               f"of K], +cost = plus the tuning spent (K x mean per trial):",
               *fixed_width(lines, left=len(lines[0]))]
        out += [f"search space of {c.optimizer}: {c.space} ({c.n_trials} trials, "
                f"{_g(c.trial_cost)} {unit} per trial)" for c in self.curves]
        out.append(f"a trial that missed the target scores {self.miss:g} {unit}")
        cross = self.crossings()
        out.append(f"crossing K: {', '.join(map(str, cross)) if cross else 'none'}")
        out.append("verdict: " + self.verdict())
        out.append("with the tuning cost counted: " + self.verdict(cost=True))
        out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable curves (``inf`` as None)."""
        def arr(a: np.ndarray) -> list[Any]:
            return [float(v) if np.isfinite(v) else None for v in np.asarray(a, dtype=float)]
        return {"level": self.level, "replace": self.replace, "miss": self.miss,
                "verdict": self.verdict(), "verdict_with_cost": self.verdict(cost=True),
                "notes": list(self.notes),
                "curves": [{"optimizer": c.optimizer, "space": c.space, "unit": c.unit,
                            "n_trials": c.n_trials, "ks": [int(k) for k in c.ks],
                            "expected": arr(c.expected), "low": arr(c.low),
                            "high": arr(c.high), "ci_low": arr(c.ci_low),
                            "ci_high": arr(c.ci_high), "p_all_miss": arr(c.p_all_miss),
                            "objective": arr(c.objective), "with_cost": arr(c.with_cost),
                            "trial_cost": c.trial_cost} for c in self.curves]}

    def __str__(self) -> str:
        return self.table()


def _segments(ks: np.ndarray, winners: list[str | None]) -> list[tuple[str | None, int, int]]:
    segs: list[tuple[str | None, int, int]] = []
    for k, w in zip(ks, winners):
        if segs and segs[-1][0] == w:
            segs[-1] = (w, segs[-1][1], int(k))
        else:
            segs.append((w, int(k), int(k)))
    return segs


def _span(lo: int, hi: int, first: int, last: int) -> str:
    if lo == first and hi == last:
        return f"every K from {first} to {last}"
    if lo == first:
        return f"K <= {hi}"
    if hi == last:
        return f"K >= {lo}"
    return f"K = {lo}" if lo == hi else f"{lo} <= K <= {hi}"


def _bootstrap(x: np.ndarray, ks: np.ndarray, replace: bool, level: float, n_boot: int,
               seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the expected best of K over the trials."""
    if n_boot == 0 or x.size < 2:
        return np.full(ks.size, np.nan), np.full(ks.size, np.nan)
    rng = np.random.default_rng(seed)
    samples = np.sort(x[rng.integers(0, x.size, size=(n_boot, x.size))], axis=1)
    w = np.stack([best_of_k_weights(x.size, int(k), replace=replace) for k in ks], axis=1)
    with np.errstate(invalid="ignore"):
        est = np.where(w[None, :, :] > 0, samples[:, :, None] * w[None, :, :], 0.0).sum(axis=1)
    a = (1 - level) / 2
    return np.quantile(est, a, axis=0), np.quantile(est, 1 - a, axis=0)


def curve_of(optimizer: str, scores: Sequence[float], *, ks: Sequence[int] | np.ndarray,
             space: str, unit: str, missed: Sequence[bool] | None = None,
             gaps: Sequence[float] | None = None, costs: Sequence[float] | None = None,
             replace: bool = True, level: float = 0.9, n_boot: int = 1000,
             seed: int = 0) -> BudgetCurve:
    """One optimizer's :class:`BudgetCurve` from its trials' scores."""
    x = _check_values(scores, f"the scores of {optimizer}")
    k = _check_ks(ks, x.size, replace)
    a = (1 - level) / 2
    miss = np.zeros(x.size, bool) if missed is None else np.asarray(missed, bool)
    p_miss = np.array([_p_all_miss(int(miss.sum()), x.size, int(kk), replace) for kk in k])
    gap = (np.full(k.size, np.nan) if gaps is None
           else expected_best(np.nan_to_num(np.asarray(gaps, float), nan=np.inf), k,
                              replace=replace))
    cost = float(np.mean(_check_values(costs if costs is not None else scores, "costs")))
    exp = expected_best(x, k, replace=replace)
    ci_lo, ci_hi = _bootstrap(x, k, replace, level, n_boot, seed)
    return BudgetCurve(optimizer, space, unit, x.size, k, exp,
                       best_of_k_quantile(x, k, a, replace=replace),
                       best_of_k_quantile(x, k, 1 - a, replace=replace), ci_lo, ci_hi,
                       p_miss, gap, exp + k * cost, cost)


def _p_all_miss(m: int, n: int, k: int, replace: bool) -> float:
    if replace:
        return (m / n) ** k
    return math.comb(m, k) / math.comb(n, k) if k <= m else 0.0


def describe_space(points: Sequence[Mapping[str, Any]]) -> str:
    """A search space in words from its points: each hyperparameter's values and range."""
    keys = list(dict.fromkeys(k for p in points for k in p))
    if not keys:
        return "defaults"
    out = []
    for k in keys:
        vals = list(dict.fromkeys(p[k] for p in points if k in p))
        nums = sorted(v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool))
        if len(nums) == len(vals) and len(nums) >= 2:
            spacing = ""
            if len(nums) >= 3 and nums[0] > 0:
                r = np.diff(np.log(nums))
                spacing = " (log-spaced)" if np.allclose(r, r[0], rtol=0.02) else ""
                d = np.diff(nums)
                spacing = spacing or (" (evenly spaced)" if np.allclose(d, d[0], rtol=0.02)
                                      else "")
            out.append(f"{k}: {len(nums)} values, {nums[0]:.4g} .. {nums[-1]:.4g}{spacing}")
        else:
            out.append(f"{k}: {', '.join(map(repr, vals[:6]))}{' ...' if len(vals) > 6 else ''}")
    return "; ".join(out)


def budget_curves(tuning: Any, *, ks: Sequence[int] | None = None, replace: bool = True,
                  level: float = 0.9, n_boot: int = 1000, seed: int = 0) -> BudgetCurves:
    """Each optimizer's expected best score after K random trials of a tuning, K = 1 .. N."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 0:
        raise ValueError(f"n_boot must be an integer >= 0, got {n_boot!r}")
    configs = list(getattr(tuning, "configs", []) or [])
    if not configs:
        raise ValueError("budget_curves needs a tuning result with configurations (from "
                         "optcmp.tune)")
    by, budget = str(tuning.by), float(tuning.budget)
    miss = budget + 1 if by == "iterations" else budget
    unit = "iterations" if by == "iterations" else "seconds"
    names = list(dict.fromkeys(c.optimizer for c in configs))
    trials = {n: [c for c in configs if c.optimizer == n] for n in names}
    n_max = max(len(t) for t in trials.values())
    kk = np.arange(1, (n_max if replace else min(len(t) for t in trials.values())) + 1) \
        if ks is None else np.asarray(ks)
    curves = [_from_configs(n, trials[n], kk, miss, budget, unit, replace, level, n_boot, seed)
              for n in names]
    notes = [f"{c.optimizer}: {c.n_trials} trial(s) only" for c in curves if c.n_trials < 2]
    cut = sum(any(getattr(c, "censored", []) or ()) for c in configs)
    if cut:
        notes.append(f"{cut} configuration(s) with censored runs: those count at their bound "
                     "(they were slower), so an expected best that draws them is a lower bound")
    return BudgetCurves(curves, float(level), bool(replace), float(miss), notes)


def _from_configs(name: str, configs: list[Any], ks: np.ndarray, miss: float, budget: float,
                  unit: str, replace: bool, level: float, n_boot: int, seed: int
                  ) -> BudgetCurve:
    """One optimizer's curve from its ConfigScore rows."""
    scores, missed, costs = [], [], []
    for c in configs:
        reached = list(getattr(c, "reached", []) or [s < budget for s in c.scores])
        cut = list(getattr(c, "censored", []) or [False] * len(reached))
        # a censored run counts at its bound (it was slower): never a hit, never a miss
        per = [s if ok or out else miss for s, ok, out in zip(c.scores, reached, cut)]
        scores.append(float(np.median(per)))
        missed.append(scores[-1] >= miss)
        spent = getattr(c, "spent", None)
        costs.append(float(spent) if spent is not None else float(np.sum(np.minimum(
            c.scores, budget))))
    gaps = [float(getattr(c, "final_gap", np.nan)) for c in configs]
    return curve_of(name, scores, ks=ks, space=describe_space([c.point for c in configs]),
                    unit=unit, missed=missed, gaps=gaps, costs=costs, replace=replace,
                    level=level, n_boot=n_boot, seed=seed)


def default_ks(ks: np.ndarray) -> list[int]:
    """Powers of 2 within ``ks`` and the largest K (the rows of :meth:`BudgetCurves.table`)."""
    last = int(ks[-1])
    out = [k for k in (2 ** i for i in range(40)) if k <= last and k in set(ks.tolist())]
    return out + ([last] if last not in out else [])


def _g(v: float) -> str:
    return f"{v:.4g}" if np.isfinite(v) else "-"


__all__ = ["BudgetCurve", "BudgetCurves", "best_of_k_quantile", "best_of_k_weights",
           "budget_curves", "curve_of", "default_ks", "describe_space", "expected_best"]
