"""Statistics over repetitions: censored medians with bootstrap CIs, aRT, rank tests, profiles.

Conventions
-----------
* A run that never reached the target is **censored**: its time-to-target (and iterations,
  ``nfev``, ``njev`` to target) is only known to exceed what it spent. Censored values enter
  every statistic as ``+inf``: a median is finite only when more than half the runs reached the
  target, a rank test ranks them behind every success, a profile never counts them as solved.
  They are never averaged as if they had converged.
* ``skipped`` runs (a backend that is not installed) never ran and are left out of every
  statistic; ``failed`` runs (a crash) count as unsuccessful attempts.
* A *solver* is an (optimizer label, backend, device, dtype) combination; a *problem instance*
  is a (problem, problem spec, repetition) combination, so repetitions count as separate
  instances in profiles ("problems x repetitions").
* Profiles are relative to the set of solvers: a performance profile divides by the best
  solver on each instance, so adding or removing a solver changes every other solver's curve.

References
----------
E. D. Dolan and J. J. More, "Benchmarking optimization software with performance profiles",
Math. Program. 91, 201-213, 2002.

J. J. More and S. M. Wild, "Benchmarking derivative-free optimization algorithms",
SIAM J. Optim. 20(1), 172-191, 2009.

N. Hansen, A. Auger, D. Brockhoff, T. Tusar, "Anytime performance assessment in blackbox
optimization benchmarking", IEEE Trans. Evol. Comput. 26(6), 2022 (COCO: aRT, runtime ECDFs).

A. Vargha and H. D. Delaney, "A critique and improvement of the CL common language effect size
statistics of McGraw and Wong", J. Educ. Behav. Stat. 25(2), 101-132, 2000.

B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall, 1993.
"""

from __future__ import annotations

import json
import math
import warnings
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp.tables import fixed_width

if TYPE_CHECKING:
    from optcmp.results import Comparison, RunResult

#: Columns identifying one row of :func:`summarize`.
GROUP_KEYS = ("problem", "optimizer", "backend", "device", "dtype")
#: Statuses that mean "a budget ended the run".
BUDGET_STATUSES = ("max_iter", "timeout", "max_evals")
#: Metrics a time-to-target statistic can be computed in.
METRICS = ("time", "nit", "nfev", "njev")
#: Default tolerances of the runtime ECDF (relative suboptimality).
DEFAULT_ECDF_TOLS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
#: Per-step time below this multiple of the timer resolution triggers a warning.
TIMER_FACTOR = 100.0


class UnfairComparisonWarning(UserWarning):
    """The runs compared differ in something other than the optimizer (see :func:`fairness_issues`)."""


class NoiseWarning(UserWarning):
    """A difference between two optimizers is within the noise of the repetitions."""


# ---------------------------------------------------------------------------- helpers
def _check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    return metric


def _used(runs: Iterable[RunResult]) -> list[RunResult]:
    return [r for r in runs if r.status != "skipped"]


def to_target(run: RunResult, metric: str = "time") -> float:
    """A run's time (or ``nit``/``nfev``/``njev``) to target; ``inf`` when censored.

    Parameters
    ----------
    run : RunResult
    metric : {"time", "nit", "nfev", "njev"}, default "time"
        Seconds, iterations, function or gradient evaluations.

    Returns
    -------
    float
        ``inf`` when the run did not reach the target.

    Raises
    ------
    ValueError
        Unknown ``metric``.
    """
    _check_metric(metric)
    v = run.time_to_target if metric == "time" else getattr(run, f"{metric}_to_target")
    if v is None or not run.success:
        return math.inf
    return float(v)


def spent(run: RunResult, metric: str = "time") -> float:
    """What a run spent toward the target: its value to target if reached, else its total.

    This is the cost a run contributes to COCO's average runtime (:func:`average_runtime`):
    a successful run counts up to the moment it reached the target, an unsuccessful one counts
    everything it spent before it stopped.

    Parameters
    ----------
    run : RunResult
    metric : {"time", "nit", "nfev", "njev"}, default "time"
        Seconds (optimizer steps only), iterations, function or gradient evaluations.

    Returns
    -------
    float
        Value to target when the target was reached, else the run's total (``run.time``,
        ``run.nit``, ``run.nfev`` or ``run.njev``), in ``metric`` units.

    Raises
    ------
    ValueError
        Unknown ``metric``.

    References
    ----------
    N. Hansen et al., "COCO: performance assessment", arXiv:1605.03560, 2016 (aRT).
    """
    _check_metric(metric)
    v = to_target(run, metric)
    if math.isfinite(v):
        return v
    return float(getattr(run, metric))


def censored_median(values: Sequence[float] | np.ndarray) -> float:
    """Median where ``inf`` marks a censored value (finite only if most values are finite).

    Parameters
    ----------
    values : sequence of float, shape (n,)
        Observations, ``inf`` for censored ones.

    Returns
    -------
    float
        NaN for an empty input; ``inf`` when half or more of the values are censored (for an
        even count, when the upper middle value is censored).

    Examples
    --------
    >>> censored_median([1.0, 2.0, float("inf")])
    2.0
    >>> censored_median([1.0, float("inf"), float("inf")])
    inf
    """
    a = np.sort(np.asarray(values, dtype=np.float64))
    n = a.size
    if n == 0:
        return math.nan
    if n % 2:
        return float(a[n // 2])
    lo, hi = a[n // 2 - 1], a[n // 2]
    return float(hi) if math.isinf(hi) else float((lo + hi) / 2)


@dataclass(frozen=True)
class MedianCI:
    """A median and its bootstrap confidence interval.

    Attributes
    ----------
    median, low, high : float
        ``inf`` where censored values make the bound unbounded; NaN when undefined (< 2 values).
    level : float
        Confidence level (e.g. 0.95).
    method : str
        ``"percentile"`` or ``"BCa"`` (what was used), or ``"none"``.
    n : int
        Number of observations.
    n_censored : int
        How many of them are censored (``inf``).
    """

    median: float
    low: float
    high: float
    level: float
    method: str
    n: int
    n_censored: int


def median_ci(values: Sequence[float] | np.ndarray, *, confidence_level: float = 0.95,
              method: str = "percentile", n_resamples: int = 9999,
              seed: int = 0) -> MedianCI:
    """Median with a bootstrap confidence interval (:func:`scipy.stats.bootstrap`), censoring-aware.

    Censored values (``inf``) are kept in the resamples: they are replaced by a sentinel larger
    than every finite value (the median is order-based, so this changes nothing), and a bound
    that lands above the largest finite value is reported as ``inf`` (unbounded above).

    Parameters
    ----------
    values : sequence of float, shape (n,)
        Observations (seconds, iterations, ...), ``inf`` for censored ones.
    confidence_level : float, default 0.95
        Coverage of the interval, in (0, 1).
    method : {"percentile", "BCa"}, default "percentile"
        ``"BCa"`` is used only without censored values (its jackknife needs finite data);
        otherwise the percentile interval is computed and ``method`` says so.
    n_resamples : int, default 9999
        Bootstrap resamples.
    seed : int, default 0
        Seed of the resampling (the interval is reproducible).

    Returns
    -------
    MedianCI

    Raises
    ------
    ValueError
        Bad ``method``, ``confidence_level`` outside (0, 1), or NaN values.

    References
    ----------
    B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13-14.
    """
    from scipy import stats

    if method not in ("percentile", "BCa"):
        raise ValueError(f"method must be 'percentile' or 'BCa', got {method!r}")
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
    if np.all(a == a[0]):
        return MedianCI(med, med, med, confidence_level, "none", n, cens)
    finite = a[np.isfinite(a)]
    if cens:
        hi_finite = float(finite.max()) if finite.size else 0.0
        sentinel = abs(hi_finite) * 2.0 + 1.0
        data = np.where(np.isposinf(a), sentinel, a)
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
    return MedianCI(med, lo, hi, confidence_level, used, n, cens)


def average_runtime(runs: Sequence[RunResult], metric: str = "time") -> float:
    """COCO's average runtime (aRT): everything spent, over the number of successes.

    ``aRT = (sum over successful runs of their cost to target + sum over unsuccessful runs of
    their total cost) / (number of successful runs)``; ``inf`` without a success.

    Parameters
    ----------
    runs : sequence of RunResult
        Repetitions of one solver on one problem (``skipped`` runs are ignored).
    metric : {"time", "nit", "nfev", "njev"}, default "time"
        Seconds or counts.

    Returns
    -------
    float
        aRT in ``metric`` units; ``inf`` when no run succeeded.

    Raises
    ------
    ValueError
        Unknown ``metric``.

    References
    ----------
    N. Hansen et al., "COCO: performance assessment", arXiv:1605.03560, 2016 (aRT).
    """
    used = _used(runs)
    succ = sum(1 for r in used if math.isfinite(to_target(r, metric)))
    if succ == 0:
        return math.inf
    return float(sum(spent(r, metric) for r in used) / succ)


# ---------------------------------------------------------------------------- keys
def _spec_key(run: RunResult) -> str:
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
    return (run.problem, _spec_key(run), int(run.repeat))


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


def _group(runs: Iterable[RunResult]) -> dict[tuple[str, ...], list[RunResult]]:
    groups: dict[tuple[str, ...], list[RunResult]] = {}
    for r in runs:
        k = (r.problem, r.label, r.backend, r.device, r.dtype)
        groups.setdefault(k, []).append(r)
    return groups


# ---------------------------------------------------------------------------- fairness
#: Runs whose shared-host contention :func:`optcmp.compare` has already warned about, by id
#: (weak references: an entry goes with its run). :func:`check_fairness` does not repeat it.
_SHARED_HOST_WARNED: weakref.WeakValueDictionary[int, RunResult] = weakref.WeakValueDictionary()


def mark_shared_host_warned(runs: Iterable[RunResult]) -> None:
    """Record that a warning about ``runs`` sharing their host was emitted already.

    :func:`optcmp.compare` warns once about the runs it executed that shared their host (worded
    by cause); :func:`check_fairness` on the same run objects then leaves that issue out of its
    warnings (it stays in :func:`fairness_issues`). Runs loaded from a file are new objects and
    are warned about again.

    Parameters
    ----------
    runs : iterable of RunResult
    """
    for r in runs:
        _SHARED_HOST_WARNED[id(r)] = r


def _shared_host_warned(runs: Sequence[RunResult]) -> bool:
    return all(_SHARED_HOST_WARNED.get(id(r)) is r for r in runs)


def fairness_issues(runs: Sequence[RunResult], *, timer_resolution: float | None = None,
                    by_time: bool = True) -> list[str]:
    """Reasons why comparing ``runs`` in one table may be unfair (empty when none).

    Checks: different dtypes, devices, CPU thread counts, targets, or data (the problem spec of
    runs of the same problem and repetition); solvers not run on the same instances; runs that
    shared their host while timed; runs ended by a budget when compared by time; a per-step time
    too close to the timer resolution (below ``TIMER_FACTOR`` ticks per step: each step's
    measurement may be off by one tick, so the sum may be off by more than 1%).

    Parameters
    ----------
    runs : sequence of RunResult
    timer_resolution : float, optional
        Clock resolution in seconds; measured now (:meth:`Stopwatch.timer_resolution`) when
        omitted.
    by_time : bool, default True
        Whether runs are compared by time (enables the budget and timer checks).

    Returns
    -------
    list of str
        One human-readable message per issue.
    """
    used = _used(runs)
    out: list[str] = []
    if not used:
        return out
    for attr, why in (("dtype", "precision changes both the speed and the accuracy reachable"),
                      ("device", "a device changes the cost of every operation")):
        vals = sorted({getattr(r, attr) for r in used})
        if len(vals) > 1:
            out.append(f"runs with different {attr}s ({', '.join(vals)}) are compared in one "
                       f"table: {why}; compare within one {attr}, or read the rows apart")
    threads = sorted({int(r.threads) for r in used if r.threads is not None})
    if len(threads) > 1:
        out.append(f"runs with different CPU thread counts ({', '.join(map(str, threads))}) are "
                   "compared in one table: threads change the cost of every step; pass "
                   "threads=N to compare() (optcmp run --threads N) to give every backend the "
                   "same count")
    mixed = _compiled_and_eager(used)
    if mixed:
        out.append(mixed)
    shared = [r for r in used if getattr(r, "shared_host", False)]
    if shared and by_time:
        out.append(_shared_host_issue(shared))
    busy = [r for r in used if getattr(r, "contended", False)]
    if busy and by_time:
        out.append(contended_issue(busy, len(used)))
    targets = sorted({r.target for r in used if r.target})
    if len(targets) > 1:
        out.append(f"runs with different targets ({'; '.join(targets)}) are compared in one "
                   "table: time-to-target is not comparable across targets")
    by_inst: dict[tuple[str, int], set[str]] = {}
    for r in used:
        if r.problem_spec:
            by_inst.setdefault((r.problem, int(r.repeat)), set()).add(_spec_key(r))
    diff = sorted(f"{p} (repetition {rep})" for (p, rep), specs in by_inst.items()
                  if len(specs) > 1)
    if diff:
        out.append("runs on different data are compared in one table: " + ", ".join(diff[:5])
                   + (" ..." if len(diff) > 5 else "") + "; every optimizer of a repetition "
                   "should see the same problem spec (data seed or fingerprint)")
    insts = {instance_key(r) for r in used}
    solvers = {solver_key(r) for r in used}
    pairs = {(instance_key(r), solver_key(r)) for r in used}
    if len(pairs) < len(insts) * len(solvers):
        out.append(f"{len(insts) * len(solvers) - len(pairs)} (problem instance, solver) "
                   "pairs have no run: solvers were not run on the same problems and "
                   "repetitions; profiles count a missing run as not solved")
    if by_time:
        budget = [r for r in used if r.status in BUDGET_STATUSES]
        if budget:
            counts = {s: sum(1 for r in budget if r.status == s) for s in BUDGET_STATUSES}
            what = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
            whole = sorted({f"{r.label} on {r.backend}" for r in budget
                            if all(x.status in BUDGET_STATUSES
                                   for x in used if solver_key(x) == solver_key(r))})
            msg = (f"{len(budget)} of {len(used)} runs were stopped by a budget ({what}): their "
                   "time measures the budget, not a time to the target; they are censored here "
                   "(never averaged as if they had converged)")
            if whole:
                msg += ("; every run of " + ", ".join(whole) + " hit a budget, so comparing its "
                        "time compares a fixed amount of work, not time-to-target")
            out.append(msg)
        if timer_resolution is None:
            from optcmp.timing import Stopwatch

            timer_resolution = Stopwatch().timer_resolution()
        per_step = [(r.time / r.nit, r) for r in used if r.nit > 0 and r.time >= 0]
        coarse = [(t, r) for t, r in per_step if t < TIMER_FACTOR * timer_resolution]
        if coarse:
            t, r = min(coarse, key=lambda p: p[0])
            out.append(
                f"timer resolution {timer_resolution:.3g}s is coarse for {len(coarse)} run(s): "
                f"e.g. {r.label} on {r.backend} took {t:.3g}s per step (fewer than "
                f"{TIMER_FACTOR:.0f} clock ticks), so its time may be off by more than 1%; use "
                "a larger problem or a finer clock")
    return out


def contended_issue(busy: Sequence[RunResult], n: int) -> str:
    """The message about contended runs (:attr:`RunResult.contended`).

    Parameters
    ----------
    busy : sequence of RunResult
        The contended runs.
    n : int
        Runs considered.

    Returns
    -------
    str
    """
    from optcmp.timing import CONTENTION_MARGIN

    loads = [x for r in busy for x in (r.load_start, r.load_end) if x is not None]
    load = f" (host load average up to {max(loads):.2f})" if loads else ""
    return (f"{len(busy)} of {n} runs were contended{load}: their timed wall time exceeds "
            f"their process CPU time by more than {CONTENTION_MARGIN:.0%}, so other work took "
            "the CPU and their times are inflated; compare cpu_time_to_target, or run again "
            "on a quiet host")


#: ``RunResult.compiled`` values of steps compiled by a framework (issue 11, field case FC-27).
COMPILED_KINDS = frozenset({"xla", "tf.function", "torch.compile"})


def _compiled_and_eager(used: Sequence[RunResult]) -> str:
    """The issue when one optimizer ran compiled on some runs and eagerly on others, or ''."""
    kinds: dict[str, set[str]] = {}
    for r in used:
        how = getattr(r, "compiled", "")
        if how:
            kinds.setdefault(r.optimizer, set()).add(how)
    mixed = sorted(o for o, k in kinds.items() if "eager" in k and k & COMPILED_KINDS)
    if not mixed:
        return ""
    detail = "; ".join(f"{o}: " + ", ".join(sorted(kinds[o])) for o in mixed)
    return (f"compiled and eager runs of the same optimizer are compared in one table ({detail}): "
            "a compiled step fuses the per-operation dispatch an eager one pays (field case "
            "FC-27), so the difference measures the execution, not the framework; compare "
            "like with like, or read RunResult.compiled")


def _shared_host_issue(shared: Sequence[RunResult]) -> str:
    peak = max(int(getattr(r, "concurrency", 2) or 2) for r in shared)
    return (f"{len(shared)} run(s) shared their host with other optcmp runs while timed (up to "
            f"{peak} at once, from an executor or from other optcmp processes): their timings "
            "contend; time comparisons need one run at a time on the host")


def check_fairness(runs: Sequence[RunResult], *, timer_resolution: float | None = None,
                   by_time: bool = True, stacklevel: int = 2) -> list[str]:
    """Emit an :class:`UnfairComparisonWarning` for each of :func:`fairness_issues`; return them.

    Parameters
    ----------
    runs : sequence of RunResult
    timer_resolution : float, optional
        Clock resolution in seconds; measured now when omitted.
    by_time : bool, default True
        Whether runs are compared by time (enables the budget and timer checks).
    stacklevel : int, default 2
        Passed to :func:`warnings.warn` (plus one for this function), so the warning points at
        the caller's caller.

    Returns
    -------
    list of str
        The messages warned about (empty when the comparison looks fair). The shared-host
        issue is left out when :func:`optcmp.compare` already warned about those very runs
        (:func:`mark_shared_host_warned`).
    """
    issues = fairness_issues(runs, timer_resolution=timer_resolution, by_time=by_time)
    shared = [r for r in _used(runs) if getattr(r, "shared_host", False)]
    if shared and _shared_host_warned(shared):
        skip = _shared_host_issue(shared)
        issues = [m for m in issues if m != skip]
    for msg in issues:
        warnings.warn(msg, UnfairComparisonWarning, stacklevel=stacklevel + 1)
    return issues


# ---------------------------------------------------------------------------- summary
def summarize(runs: Sequence[RunResult], *, confidence_level: float = 0.95,
              method: str = "percentile", n_resamples: int = 9999, seed: int = 0,
              warn: bool = True, timer_resolution: float | None = None) -> list[dict[str, Any]]:
    """One row per (problem, optimizer, backend, device, dtype) over its repetitions.

    Parameters
    ----------
    runs : sequence of RunResult
    confidence_level : float, default 0.95
        Level of the bootstrap interval of the median time-to-target.
    method : {"percentile", "BCa"}, default "percentile"
        Bootstrap interval (see :func:`median_ci`).
    n_resamples : int, default 9999
    seed : int, default 0
        Seed of the bootstrap.
    warn : bool, default True
        Emit :class:`UnfairComparisonWarning` for :func:`fairness_issues`.
    timer_resolution : float, optional
        Seconds; see :func:`fairness_issues`.

    Returns
    -------
    list of dict
        Keys: ``problem, optimizer, backend, device, dtype`` (the group), ``runs`` (not
        skipped), ``skipped``, ``successes``, ``success_rate`` (0..1), ``median_time``,
        ``ci_low``, ``ci_high`` (seconds; ``inf`` = censored/unbounded, NaN = undefined),
        ``ci_level``, ``ci_method``, ``median_nit``, ``median_nfev``, ``median_njev`` (to
        target, censored), ``art`` (aRT in seconds), ``art_njev`` (aRT in gradient
        evaluations), ``statuses`` (e.g. ``"converged:3, max_iter:2"``).

    Raises
    ------
    ValueError
        Bad ``method`` or ``confidence_level`` (see :func:`median_ci`).

    References
    ----------
    B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap", 1993 (the CI);
    N. Hansen et al., "COCO: performance assessment", arXiv:1605.03560, 2016 (aRT).
    """
    if warn:
        check_fairness(runs, timer_resolution=timer_resolution, stacklevel=2)
    rows = []
    for (prob, label, backend, device, dtype), group in _group(runs).items():
        used = _used(group)
        times = [to_target(r, "time") for r in used]
        ci = median_ci(times, confidence_level=confidence_level, method=method,
                       n_resamples=n_resamples, seed=seed)
        statuses: dict[str, int] = {}
        for r in group:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        succ = sum(1 for t in times if math.isfinite(t))
        rows.append({
            "problem": prob, "optimizer": label, "backend": backend, "device": device,
            "dtype": dtype, "runs": len(used), "skipped": len(group) - len(used),
            "successes": succ, "success_rate": succ / len(used) if used else math.nan,
            "median_time": ci.median, "ci_low": ci.low, "ci_high": ci.high,
            "ci_level": ci.level, "ci_method": ci.method,
            "median_nit": censored_median([to_target(r, "nit") for r in used]),
            "median_nfev": censored_median([to_target(r, "nfev") for r in used]),
            "median_njev": censored_median([to_target(r, "njev") for r in used]),
            "art": average_runtime(used, "time") if used else math.nan,
            "art_njev": average_runtime(used, "njev") if used else math.nan,
            "statuses": ", ".join(f"{k}:{v}" for k, v in statuses.items()),
            # issue 12: load-independent CPU figure and contended runs
            "median_cpu_time": _median_cpu_time(used),
            "contended": sum(1 for r in used if getattr(r, "contended", False)),
        })
    return rows


def _median_cpu_time(runs: Sequence[RunResult]) -> float:
    """Censored median CPU time to target; NaN (unknown) when a run that reached the target has
    none recorded (results saved before CPU time was measured), never ``inf`` (QA)."""
    vals = []
    for r in runs:
        if math.isinf(to_target(r, "time")):
            vals.append(math.inf)
        elif r.cpu_time_to_target is None:
            return math.nan
        else:
            vals.append(float(r.cpu_time_to_target))
    return censored_median(vals) if vals else math.nan


#: What the plain-text summary shows for a median (time, iterations) of runs that mostly missed
#: the target (a censored, infinite median).
NOT_REACHED = "not reached"


def _fmt_t(t: float | None, *, sep: str = "", micro: str = "u", inf: str = "inf") -> str:
    """Seconds as ``1.23ms``; ``sep``/``micro``/``inf`` let the HTML report use entities."""
    if t is None or math.isnan(t):
        return "-"
    if math.isinf(t):
        return inf
    if t < 1e-3:
        return f"{t * 1e6:.3g}{sep}{micro}s"
    if t < 1:
        return f"{t * 1e3:.3g}{sep}ms"
    return f"{t:.4g}{sep}s"


def _fmt_n(v: float | None, *, inf: str = "inf") -> str:
    """A count (a median may be a half-integer)."""
    if v is None or math.isnan(v):
        return "-"
    if math.isinf(v):
        return inf
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def ci_methods(rows: Sequence[dict[str, Any]]) -> str:
    """The bootstrap method(s) the rows' intervals used (``"percentile"`` when none was run).

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`summarize` (their ``ci_method`` key).

    Returns
    -------
    str
        E.g. ``"percentile"`` or ``"BCa, percentile"`` (``"none"`` entries, for groups of fewer
        than two runs or all-equal values, are left out).
    """
    used = sorted({r.get("ci_method", "") for r in rows} - {"none", ""})
    return ", ".join(used) or "percentile"


def format_summary(rows: Sequence[dict[str, Any]]) -> str:
    """Fixed-width text of :func:`summarize` rows, sorted by median time-to-target.

    Columns: problem, optimizer, backend (``/device`` when not the CPU), dtype, successes/runs,
    median time-to-target, its bootstrap CI, median iterations, nfev and njev to target, and
    aRT; a closing line explains censoring and aRT. Times are shown with a unit (``us``,
    ``ms``, ``s``); ``inf`` marks a censored median or an unbounded interval.

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`summarize`.

    Returns
    -------
    str
        The table, ``"(no runs)"`` for no rows.
    """
    if not rows:
        return "(no runs)"
    level = rows[0].get("ci_level", 0.95)
    header = ["problem", "optimizer", "backend", "dtype", "success", "median time-to-target",
              f"{level:.0%} CI", "iters", "nfev", "njev", "aRT", "cpu-to-target", "contended"]
    lines = [header]
    for r in sorted(rows, key=lambda r: (r["problem"], r["median_time"]
                                         if not math.isnan(r["median_time"]) else math.inf)):
        lines.append([
            r["problem"], r["optimizer"],
            r["backend"] + ("" if r["device"] == "cpu" else f"/{r['device']}"), r["dtype"],
            f"{r['successes']}/{r['runs']}", _fmt_t(r["median_time"], inf=NOT_REACHED),
            f"[{_fmt_t(r['ci_low'])}, {_fmt_t(r['ci_high'])}]",
            *(_fmt_n(r[k], inf=NOT_REACHED) for k in ("median_nit", "median_nfev",
                                                      "median_njev")),
            _fmt_t(r["art"], inf=NOT_REACHED),
            _fmt_t(r.get("median_cpu_time", math.nan), inf=NOT_REACHED),
            f"{r.get('contended', 0)}/{r['runs']}",
        ])
    out = fixed_width(lines, left=4)
    method = ci_methods(rows)
    out.append(f"medians over repetitions; CI: bootstrap ({method}) of the median; runs that "
               "missed the target are censored (inf), so a median is 'not reached' when half or "
               "more missed it (a CI bound of 'inf' is unbounded); aRT = total time spent / successes (COCO); cpu-to-target: median "
               "process CPU time to the target (load-independent); contended: runs whose wall "
               "time exceeded their CPU time by more than 20% (other work took the CPU)")
    return "\n".join(out)


# ---------------------------------------------------------------------------- pairwise
@dataclass(frozen=True)
class PairwiseComparison:
    """Two solvers' time-to-target compared with a Mann-Whitney rank-sum test.

    Attributes
    ----------
    a, b : str
        Labels.
    n_a, n_b : int
        Runs compared (censored ones included, ranked last).
    median_a, median_b : float
        Censored medians (``metric`` units).
    statistic : float
        Mann-Whitney ``U`` of ``a``.
    p_value : float
        Two-sided p-value.
    a_faster : float
        Vargha-Delaney ``A``: probability that a run of ``a`` reaches the target sooner than a
        run of ``b`` (ties count half); 0.5 means no difference.
    rank_biserial : float
        ``2 A - 1`` in [-1, 1]; positive when ``a`` is faster.
    magnitude : str
        ``"negligible"``, ``"small"``, ``"medium"`` or ``"large"`` (Vargha-Delaney thresholds
        0.56, 0.64, 0.71 on ``max(A, 1 - A)``).
    significant : bool
        ``p_value < alpha`` and the effect is not negligible.
    metric : str
    message : str
        One sentence saying what to conclude.
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


def _magnitude(a: float) -> str:
    d = max(a, 1.0 - a)
    if d < 0.56:
        return "negligible"
    if d < 0.64:
        return "small"
    if d < 0.71:
        return "medium"
    return "large"


def compare_pair(runs_a: Sequence[RunResult], runs_b: Sequence[RunResult], *,
                 metric: str = "time", alpha: float = 0.05, labels: tuple[str, str] | None = None,
                 warn: bool = True) -> PairwiseComparison:
    """Compare two solvers' time-to-target over repetitions (two-sided Mann-Whitney U test).

    Censored runs rank behind every successful run (ties among themselves). The p-value is
    exact without ties up to 40 runs in all, else the normal approximation with tie and
    continuity corrections.

    Parameters
    ----------
    runs_a, runs_b : sequence of RunResult
        Repetitions of each solver (``skipped`` runs are ignored).
    metric : {"time", "nit", "nfev", "njev"}, default "time"
    alpha : float, default 0.05
        Significance level.
    labels : (str, str), optional
        Names; default the runs' labels (with backend).
    warn : bool, default True
        Emit a :class:`NoiseWarning` when the difference is within noise.

    Returns
    -------
    PairwiseComparison

    Raises
    ------
    ValueError
        A side has no (non-skipped) run, or ``alpha`` is not in (0, 1).

    References
    ----------
    H. B. Mann and D. R. Whitney, Ann. Math. Statist. 18(1), 1947; A. Vargha and
    H. D. Delaney, J. Educ. Behav. Stat. 25(2), 2000.
    """
    from scipy import stats

    _check_metric(metric)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    ua, ub = _used(runs_a), _used(runs_b)
    if not ua or not ub:
        side = "a" if not ua else "b"
        raise ValueError(f"runs_{side} holds no run that ran (empty or all skipped)")
    if labels is None:
        labels = (f"{ua[0].label} ({ua[0].backend})", f"{ub[0].label} ({ub[0].backend})")
    xa = np.array([to_target(r, metric) for r in ua])
    xb = np.array([to_target(r, metric) for r in ub])
    # ranks are all the test needs: censored values (inf) tie behind every finite value
    big = max(np.abs(np.concatenate([xa, xb])[np.isfinite(np.concatenate([xa, xb]))]).max(
        initial=0.0) * 2 + 1, 1.0)
    ra, rb = np.where(np.isinf(xa), big, xa), np.where(np.isinf(xb), big, xb)
    if np.all(np.concatenate([ra, rb]) == ra[0]):
        u, p = len(ra) * len(rb) / 2.0, 1.0
    else:
        pooled = np.concatenate([ra, rb])
        exact = np.unique(pooled).size == pooled.size and pooled.size <= 40
        res = stats.mannwhitneyu(ra, rb, alternative="two-sided",
                                 method="exact" if exact else "asymptotic")
        u, p = float(res.statistic), float(res.pvalue)
    a_faster = 1.0 - u / (len(ra) * len(rb))
    mag = _magnitude(a_faster)
    sig = bool(p < alpha and mag != "negligible")
    ma, mb = censored_median(xa), censored_median(xb)

    def fm(v: float) -> str:
        return _fmt_t(v) if metric == "time" else f"{_fmt_n(v)} {metric}"

    # smallest two-sided p-value the exact test can give with these sample sizes
    p_min = min(1.0, 2.0 / math.comb(len(ra) + len(rb), len(ra)))
    if sig:
        if a_faster > 0.5:
            fast, slow, mf, ms = labels[0], labels[1], ma, mb
        else:
            fast, slow, mf, ms = labels[1], labels[0], mb, ma
        msg = (f"{fast} reaches the target sooner than {slow} (medians {fm(mf)} vs {fm(ms)}; "
               f"p={p:.3g}, A={a_faster:.2f}, {mag} effect)")
    else:
        msg = (f"no significant difference between {labels[0]} (median {fm(ma)}) and "
               f"{labels[1]} (median {fm(mb)}): within noise at alpha={alpha:g} (p={p:.3g}, "
               f"A={a_faster:.2f}, {mag} effect, n={len(ra)}+{len(rb)})")
        if p_min >= alpha:
            msg += (f"; with {len(ra)}+{len(rb)} repetitions the smallest attainable p is "
                    f"{p_min:.3g}, so add repeats")
        if warn:
            warnings.warn(msg, NoiseWarning, stacklevel=2)
    return PairwiseComparison(labels[0], labels[1], len(ra), len(rb), ma, mb, u, p, a_faster,
                              2 * a_faster - 1, mag, sig, metric, msg)


# ---------------------------------------------------------------------------- profiles
@dataclass
class Profile:
    """A performance profile, data profile or runtime ECDF: one step curve per solver.

    Attributes
    ----------
    kind : str
        ``"performance"``, ``"data"`` or ``"ecdf"``.
    x : ndarray of float64, shape (m,)
        Abscissae, increasing: performance ratio ``tau`` (>= 1), budget in ``metric`` units, or
        runtime.
    y : dict of str to ndarray of float64, shape (m,)
        Fraction (0..1) of problems (or problem-target pairs) solved at each ``x``, per solver.
    solvers : list of str
        Solver labels, in order.
    values : ndarray of float64, shape (n_problems, n_solvers)
        The raw per-instance figures (ratios, costs or runtimes; ``inf`` = not solved). For an
        ECDF: shape (n_runs_max * n_tols, n_solvers), padded with NaN.
    problems : list of str
        Instance labels (rows of ``values``).
    metric : str
        ``"time"``, ``"nit"``, ``"nfev"`` or ``"njev"``.
    xlabel : str
    note : str
    """

    kind: str
    x: np.ndarray
    y: dict[str, np.ndarray]
    solvers: list[str]
    values: np.ndarray
    problems: list[str]
    metric: str
    xlabel: str
    note: str = ""

    def at(self, x: float) -> dict[str, float]:
        """Each solver's fraction solved at abscissa ``x`` (right-continuous steps).

        Parameters
        ----------
        x : float
            Abscissa in the profile's units (``tau``, budget, or runtime).

        Returns
        -------
        dict of str to float
            Solver label -> fraction in [0, 1] (NaN for a solver without values).
        """
        out = {}
        for j, s in enumerate(self.solvers):
            col = self.values[:, j]
            col = col[~np.isnan(col)]
            out[s] = float(np.mean(col <= x)) if col.size else math.nan
        return out


def first_hit(run: RunResult, tol: float, metric: str = "time") -> float:
    """Where a run's trace first reaches relative suboptimality ``tol``; ``inf`` if never.

    Parameters
    ----------
    run : RunResult
        Needs ``fstar`` and a trace.
    tol : float
        Relative suboptimality ``(f - f*) / (f0 - f*)`` to reach.
    metric : {"time", "nit", "nfev", "njev"}, default "time"
        ``"nit"`` reads the trace's iterate index.

    Returns
    -------
    float
        Seconds (or count) at the first trace row meeting the tolerance.

    Raises
    ------
    ValueError
        The run has no known optimum.
    """
    _check_metric(metric)
    if run.fstar is None:
        raise ValueError(f"run {run.label} on {run.backend} has no known optimum f*; "
                         "tolerance-based profiles need one")
    tr = run.trace
    if len(tr) == 0:
        return math.inf
    gap0 = run.f0 - run.fstar
    with np.errstate(invalid="ignore"):
        ok = (tr.fun - run.fstar) <= (tol * gap0 if gap0 > 0 else 0.0)
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return math.inf
    col = {"time": tr.time, "nit": tr.iteration, "nfev": tr.nfev, "njev": tr.njev}[metric]
    return float(col[idx[0]])


def best_found(runs: Sequence[RunResult]) -> dict[tuple[str, str, int], float]:
    """``f_L`` per problem instance: the smallest objective any of the runs reached on it.

    Parameters
    ----------
    runs : sequence of RunResult
        ``skipped`` runs are left out.

    Returns
    -------
    dict
        :func:`instance_key` -> the smallest finite value over the runs' traces and final
        ``fun`` (``inf`` when none is finite).
    """
    out: dict[tuple[str, str, int], float] = {}
    for r in _used(runs):
        vals = [float(v) for v in r.trace.fun if math.isfinite(v)]
        vals += [float(v) for v in (r.fun, r.f0) if v is not None and math.isfinite(v)]
        key = instance_key(r)
        out[key] = min([out.get(key, math.inf), *vals])
    return out


def first_solved(run: RunResult, tau: float, f_low: float, metric: str = "nfev") -> float:
    """Where a run first passes Moré and Wild's test ``f0 - f >= (1 - tau) (f0 - f_L)``.

    Parameters
    ----------
    run : RunResult
    tau : float
        Tolerance in (0, 1): the run must achieve ``1 - tau`` of the best reduction
        ``f0 - f_L``.
    f_low : float
        ``f_L``, the smallest value any solver obtained on the instance (:func:`best_found`).
    metric : {"time", "nit", "nfev", "njev"}, default "nfev"

    Returns
    -------
    float
        The run's ``metric`` at the first trace row passing the test; ``inf`` if none.

    References
    ----------
    J. J. Moré and S. M. Wild, "Benchmarking derivative-free optimization algorithms", SIAM J.
    Optim. 20(1), 172-191, 2009, eq. (2.2).
    """
    _check_metric(metric)
    tr = run.trace
    if len(tr) == 0 or not math.isfinite(f_low):
        return math.inf
    with np.errstate(invalid="ignore"):
        ok = (run.f0 - tr.fun) >= (1.0 - tau) * (run.f0 - f_low)
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return math.inf
    col = {"time": tr.time, "nit": tr.iteration, "nfev": tr.nfev, "njev": tr.njev}[metric]
    return float(col[idx[0]])


def _check_tau(tau: float | None) -> float | None:
    if tau is None:
        return None
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not 0.0 < tau < 1.0:
        raise ValueError(f"tau must be a float in (0, 1) (e.g. 1e-3), got {tau!r}")
    return float(tau)


def _cost(runs: Sequence[RunResult], metric: str, tol: float | None,
          tau: float | None) -> Any:
    """The per-run cost of a profile: to target, to ``tol`` on the trace, or Moré-Wild's test."""
    if tau is not None:
        lows = best_found(runs)
        return lambda r: first_solved(r, tau, lows[instance_key(r)], metric)
    if tol is not None:
        return lambda r: first_hit(r, tol, metric)
    return lambda r: to_target(r, metric)


def _matrix(runs: Sequence[RunResult], cost: Any, warn: bool = True) -> tuple[np.ndarray, list[str], list[str],
                                                           list[RunResult]]:
    used = _used(runs)
    if not used:
        raise ValueError("no runs to profile (empty, or every run was skipped)")
    names = solver_labels(used)
    skeys = list(names)
    ikeys = list(dict.fromkeys(instance_key(r) for r in used))
    M = np.full((len(ikeys), len(skeys)), math.inf)
    seen = np.zeros(M.shape, dtype=bool)
    si = {k: j for j, k in enumerate(skeys)}
    ii = {k: i for i, k in enumerate(ikeys)}
    for r in used:
        i, j = ii[instance_key(r)], si[solver_key(r)]
        if seen[i, j]:
            raise ValueError(f"two runs of {names[solver_key(r)]} on {r.problem} repetition "
                             f"{r.repeat} with the same problem spec; give each run its own "
                             "repetition index")
        seen[i, j] = True
        M[i, j] = cost(r)
    if warn and not seen.all():
        warnings.warn(f"{int((~seen).sum())} (problem, solver) pairs have no run; they count "
                      "as not solved", UnfairComparisonWarning, stacklevel=3)
    plabels = [f"{p} #{rep}" for p, _, rep in ikeys]
    if len(set(plabels)) < len(plabels):  # same name and repetition, different data
        plabels = [f"{lab} [{i}]" for i, lab in enumerate(plabels)]
    return M, [names[k] for k in skeys], plabels, used


def _steps(M: np.ndarray, solvers: list[str], extra: Sequence[float] = ()) -> tuple[
        np.ndarray, dict[str, np.ndarray]]:
    finite = M[np.isfinite(M)]
    x = np.unique(np.concatenate([finite, np.asarray(extra, dtype=np.float64)]))
    y = {}
    for j, s in enumerate(solvers):
        col = M[:, j]
        col = np.sort(col[~np.isnan(col)])
        y[s] = np.searchsorted(col, x, side="right") / max(col.size, 1)
    return x, y


def performance_profile(runs: Sequence[RunResult], *, metric: str = "time",
                        tol: float | None = None, warn: bool = True,
                        tau: float | None = None) -> Profile:
    """Dolan-More performance profile over problem instances (problems x repetitions).

    For instance ``p`` and solver ``s`` with cost ``t[p, s]`` (``inf`` if not solved), the
    ratio is ``r[p, s] = t[p, s] / min_s t[p, s]`` and the profile is
    ``rho_s(tau) = |{p : r[p, s] <= tau}| / |P|``. An instance no solver solves counts in
    ``|P|`` with ratio ``inf`` for everyone. The curve depends on the set of solvers: adding a
    faster one lowers everyone else's.

    Parameters
    ----------
    runs : sequence of RunResult
    metric : {"time", "nit", "nfev", "njev"}, default "time"
    tol : float, optional
        Relative suboptimality to reach, read from the traces (:func:`first_hit`); default the
        runs' own target (``*_to_target``).
    warn : bool, default True
        Emit fairness warnings.
    tau : float, optional
        Use Moré and Wild's convergence test instead: solved once
        ``f0 - f >= (1 - tau) (f0 - f_L)``, ``f_L`` the best value any solver found on the
        instance (:func:`first_solved`); for problem sets without known optima.

    Returns
    -------
    Profile
        ``x`` holds ``tau`` (1 and every finite ratio); ``values`` the ratios.

    Raises
    ------
    ValueError
        No run to profile.

    References
    ----------
    E. D. Dolan and J. J. More, Math. Program. 91, 201-213, 2002.
    """
    _check_metric(metric)
    if warn:
        check_fairness(runs, by_time=metric == "time", stacklevel=2)
    T, solvers, plabels, _ = _matrix(runs, _cost(runs, metric, tol, _check_tau(tau)), warn)
    best = T.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        R = np.where(np.isfinite(T), T / best, math.inf)
    # a zero cost (target met at the start) is a tie for everyone at zero: ratio 1
    R = np.where((T == 0) & (best == 0), 1.0, R)
    x, y = _steps(R, solvers, extra=(1.0,))
    x = x[x >= 1.0]
    y = {s: v[-x.size:] for s, v in y.items()}
    return Profile("performance", x, y, solvers, R, plabels, metric,
                   f"performance ratio tau ({metric} / best {metric} on the instance)",
                   note="relative to the solvers shown: adding or removing one changes "
                        "every curve")


def data_profile(runs: Sequence[RunResult], *, tol: float | None = None,
                 metric: str = "njev", per_dimension: bool = False,
                 warn: bool = True, tau: float | None = None) -> Profile:
    """More-Wild data profile: fraction of instances solved within a budget of evaluations.

    ``d_s(alpha) = |{p : t[p, s] / c_p <= alpha}| / |P|`` where ``t[p, s]`` is the number of
    gradient evaluations (``metric="njev"``) solver ``s`` needed on instance ``p`` and
    ``c_p = 1``, or ``n_params + 1`` with ``per_dimension=True`` (More and Wild's "simplex
    gradients": with ``metric="nfev"`` the budget is counted in groups of ``n + 1`` function
    evaluations). The convergence test is the runs' own target, the relative suboptimality
    ``tol`` against the known ``f*``, or with ``tau`` More and Wild's own test
    ``f0 - f >= (1 - tau) (f0 - f_L)``, ``f_L`` the best value any solver found on the
    instance.

    Parameters
    ----------
    runs : sequence of RunResult
    tol : float, optional
        Tolerance read from the traces; default the runs' own target.
    metric : {"njev", "nfev", "nit", "time"}, default "njev"
    per_dimension : bool, default False
        Divide by ``n_params + 1``.
    warn : bool, default True
        Emit fairness warnings (:func:`check_fairness`).
    tau : float, optional
        Moré and Wild's tolerance in (0, 1) (see :func:`first_solved`).

    Returns
    -------
    Profile
        ``x`` holds the budgets (0 and every finite cost); ``values`` the costs, shape
        (n_instances, n_solvers), ``inf`` = not solved.

    Raises
    ------
    ValueError
        Unknown ``metric``, no run to profile, or ``tol`` given and a run lacks ``f*``.

    References
    ----------
    J. J. More and S. M. Wild, SIAM J. Optim. 20(1), 172-191, 2009.
    """
    _check_metric(metric)
    if warn:
        check_fairness(runs, by_time=metric == "time", stacklevel=2)

    base = _cost(runs, metric, tol, _check_tau(tau))

    def cost(r: RunResult) -> float:
        c = base(r)
        return c / (r.n_params + 1) if per_dimension else c

    T, solvers, plabels, _ = _matrix(runs, cost, warn)
    x, y = _steps(T, solvers, extra=(0.0,))
    unit = {"njev": "gradient evaluations", "nfev": "function evaluations",
            "nit": "iterations", "time": "seconds"}[metric]
    if per_dimension:
        unit = ("simplex gradients: (n + 1) function evaluations" if metric == "nfev"
                else unit + " / (n_params + 1)")
    return Profile("data", x, y, solvers, T, plabels, metric, f"budget ({unit})",
                   note="fraction of problem instances solved within the budget")


def runtime_ecdf(runs: Sequence[RunResult], *, tols: Sequence[float] = DEFAULT_ECDF_TOLS,
                 metric: str = "time", warn: bool = True) -> Profile:
    """COCO-style ECDF of runtimes over (run, tolerance) pairs, from the traces.

    For each solver, every run and every tolerance in ``tols`` gives one runtime: where the
    trace first reaches that relative suboptimality (:func:`first_hit`, ``inf`` if never). The
    ECDF at ``t`` is the fraction of those pairs with runtime ``<= t``; repetitions are pooled
    (no simulated restarts).

    Parameters
    ----------
    runs : sequence of RunResult
        Runs with a known optimum.
    tols : sequence of float, default 1e-1 ... 1e-8
        Relative suboptimality targets.
    metric : {"time", "nit", "nfev", "njev"}, default "time"
        Seconds, iterations, function or gradient evaluations.
    warn : bool, default True
        Emit fairness warnings (:func:`check_fairness`).

    Returns
    -------
    Profile
        ``values`` has one column per solver: its runtimes (``inf`` unsolved, NaN padding).

    Raises
    ------
    ValueError
        Empty ``tols``, a non-positive tolerance, or runs without a known optimum.

    References
    ----------
    N. Hansen, A. Auger, D. Brockhoff, T. Tusar, IEEE Trans. Evol. Comput. 26(6), 2022.
    """
    _check_metric(metric)
    tols = [float(t) for t in tols]
    if not tols or any(not t > 0 for t in tols):
        raise ValueError(f"tols must be a non-empty sequence of positive floats, got {tols!r}")
    used = _used(runs)
    if not used:
        raise ValueError("no runs (empty, or every run was skipped)")
    if warn:
        check_fairness(used, by_time=metric == "time", stacklevel=2)
    names = solver_labels(used)
    cols: dict[str, list[float]] = {names[k]: [] for k in names}
    for r in used:
        cols[names[solver_key(r)]].extend(first_hit(r, t, metric) for t in tols)
    solvers = list(cols)
    m = max(len(v) for v in cols.values())
    V = np.full((m, len(solvers)), math.nan)
    for j, s in enumerate(solvers):
        V[: len(cols[s]), j] = cols[s]
    x, y = _steps(V, solvers)
    unit = {"njev": "gradient evaluations", "nfev": "function evaluations",
            "nit": "iterations", "time": "seconds"}[metric]
    return Profile("ecdf", x, y, solvers, V, [f"tol {t:g}" for t in tols], metric,
                   f"runtime ({unit})",
                   note="fraction of (run, tolerance) pairs solved; tolerances "
                        + ", ".join(f"{t:g}" for t in tols))


# ---------------------------------------------------------------------------- a Comparison
# The statistics methods of optcmp.results.Comparison call these (comp is a Comparison).
def summary(comp: Comparison, *, as_frame: bool | None = None, confidence_level: float = 0.95,
            method: str = "percentile", n_resamples: int = 9999, seed: int = 0,
            warn: bool = True, stacklevel: int = 2) -> Any:
    """:func:`summarize` of a comparison's runs, as a DataFrame when pandas is installed.

    The timer resolution of the fairness checks is the one recorded in
    ``comp.environment``.

    Parameters
    ----------
    comp : Comparison
    as_frame : bool, optional
        True: a pandas DataFrame (ImportError without pandas); False: a list of dicts;
        None (default): a DataFrame when pandas is installed, else a list of dicts.
    confidence_level, method, n_resamples, seed, warn
        As in :func:`summarize`.
    stacklevel : int, default 2
        As in :func:`check_fairness`: the warnings point at the caller's caller (the
        :class:`~optcmp.results.Comparison` method).

    Returns
    -------
    pandas.DataFrame or list of dict
        The rows of :func:`summarize`.

    Raises
    ------
    ImportError
        ``as_frame=True`` without pandas.
    ValueError
        Bad ``method`` or ``confidence_level`` (see :func:`median_ci`).
    """
    resolution = comp._timer_resolution()
    if warn:
        check_fairness(comp.runs, timer_resolution=resolution, stacklevel=stacklevel)
    rows = summarize(comp.runs, confidence_level=confidence_level, method=method,
                     n_resamples=n_resamples, seed=seed, warn=False, timer_resolution=resolution)
    if as_frame is False:
        return rows
    try:
        import pandas as pd
    except ImportError as exc:
        if as_frame:
            raise ImportError("summary(as_frame=True) needs pandas: "
                              "pip install 'optcmp[pandas]'") from exc
        return rows
    return pd.DataFrame(rows)


def summary_table(comp: Comparison, **kwargs: Any) -> str:
    """:func:`summary` of a comparison as fixed-width text (:func:`format_summary`).

    Parameters
    ----------
    comp : Comparison
    **kwargs
        Passed to :func:`summary` (``confidence_level``, ``method``, ``n_resamples``,
        ``seed``, ``warn``); its warnings point at this function's caller.

    Returns
    -------
    str
        One line per solver with the median time-to-target and its confidence interval.
    """
    text = format_summary(summary(comp, as_frame=False, stacklevel=3, **kwargs))
    if comp.settings.get("suite"):  # issue 13: the profiles over the suite, in figures
        text += "\n\n" + suite_profile_table(comp.runs)
    return text


#: Abscissae of :func:`suite_profile_table`: budgets in simplex gradients, performance ratios.
PROFILE_BUDGETS = (1.0, 10.0, 100.0, 1000.0)
PROFILE_RATIOS = (1.0, 2.0, 4.0, 16.0)


def suite_profile_table(runs: Sequence[RunResult], *, tau: float = 1e-3) -> str:
    """Moré-Wild data profile and Dolan-Moré performance profile over a suite, as text.

    Both use Moré and Wild's convergence test with ``tau`` (:func:`first_solved`) and count
    function evaluations; the data profile's budget is in simplex gradients (``n + 1``
    function evaluations).

    Parameters
    ----------
    runs : sequence of RunResult
        Runs over several problems.
    tau : float, default 1e-3

    Returns
    -------
    str
        One line per solver: the fraction of problems solved within 1, 10, 100 and 1000
        simplex gradients, and the fraction within a factor 1, 2, 4 and 16 of the fewest
        evaluations any solver needed.

    Raises
    ------
    ValueError
        No run to profile, or a bad ``tau``.

    References
    ----------
    J. J. Moré and S. M. Wild, SIAM J. Optim. 20(1), 172-191, 2009; E. D. Dolan and J. J. Moré,
    Math. Program. 91, 201-213, 2002.
    """
    data = data_profile(runs, metric="nfev", per_dimension=True, tau=tau, warn=False)
    perf = performance_profile(runs, metric="nfev", tau=tau, warn=False)
    nprob = len({r.problem for r in _used(runs)})
    header = ["solver", *[f"d({a:g})" for a in PROFILE_BUDGETS],
              *[f"rho({t:g})" for t in PROFILE_RATIOS]]
    lines = [header]
    for s in data.solvers:
        d = [data.at(a)[s] for a in PROFILE_BUDGETS]
        p = [perf.at(t)[s] for t in PROFILE_RATIOS]
        lines.append([s, *[f"{v:.2f}" for v in d + p]])
    return "\n".join([
        f"profiles over {nprob} problems (Moré-Wild test, tau = {tau:g}): d(a) = fraction "
        "solved within a simplex gradients (n + 1 function evaluations); rho(t) = fraction "
        "solved within t times the fewest function evaluations of any solver",
        *fixed_width(lines, left=1)])


def compare_optimizers(comp: Comparison, a: str | dict[str, Any], b: str | dict[str, Any], *,
                       metric: str = "time", alpha: float = 0.05,
                       warn: bool = True) -> PairwiseComparison:
    """:func:`compare_pair` of two solvers of a comparison, chosen by label or criteria.

    Parameters
    ----------
    comp : Comparison
    a, b : str or dict
        An optimizer label, or criteria for ``comp.select`` (e.g.
        ``{"label": "gd", "backend": "torch"}``).
    metric, alpha, warn
        As in :func:`compare_pair`.

    Returns
    -------
    PairwiseComparison
        Labelled with ``a`` and ``b`` (a dict's values joined by ``" / "``).

    Raises
    ------
    ValueError
        A side selects no run.
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
    if warn and not pair.significant:  # compare_pair's warning, pointing at comp's method
        warnings.warn(pair.message, NoiseWarning, stacklevel=2)
    return pair


__all__ = [
    "BUDGET_STATUSES", "DEFAULT_ECDF_TOLS", "GROUP_KEYS", "METRICS", "MedianCI",
    "NoiseWarning", "PairwiseComparison", "Profile", "UnfairComparisonWarning",
    "average_runtime", "best_found", "censored_median", "check_fairness", "ci_methods",
    "compare_optimizers", "compare_pair", "contended_issue", "data_profile", "fairness_issues",
    "first_hit", "first_solved", "format_summary", "instance_key",
    "mark_shared_host_warned", "median_ci",
    "performance_profile", "runtime_ecdf", "suite_profile_table", "solver_key", "solver_labels", "spent", "summarize",
    "summary", "summary_table", "to_target",
]
