"""Dolan-Moré performance profiles, Moré-Wild data profiles and COCO runtime ECDFs.

Why and how (relative to the set of solvers): see docs/statistics-and-plots.md, 'Performance
profiles'; the papers are in its 'References'. Every value they compare is the float64 judge's
(:func:`judged_trace`), never a value a float32 run computed itself.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from optcmp.analysis.stats.censor import METRICS, check_metric, ran, spent, to_target
from optcmp.analysis.stats.fairness import UnfairComparisonWarning, warn_unfair
from optcmp.analysis.stats.keys import instance_key, solver_key, solver_labels
from optcmp.results import ComparisonData, RunResult, Trace

#: Default tolerances of the runtime ECDF (relative suboptimality).
DEFAULT_ECDF_TOLS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
#: Units of each metric, in words.
UNITS = {"njev": "gradient evaluations", "nfev": "function evaluations", "nit": "iterations",
         "time": "seconds"}

Runs = Sequence[RunResult] | ComparisonData


@dataclass
class Profile:
    """A performance profile, data profile or runtime ECDF: one step curve per solver.

    Attributes
    ----------
    kind : str
        ``"performance"``, ``"data"`` or ``"ecdf"``.
    x : ndarray
        Increasing abscissae: ratio ``tau``, budget or runtime.
    y : dict of str to ndarray
        Per solver, the fraction solved at ``x``.
    solvers, problems : list of str
    values : ndarray, shape (n_problems, n_solvers)
        Ratios, costs or runtimes (``inf``: not solved; NaN: ECDF padding).
    metric, xlabel, note : str
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

        Returns
        -------
        dict of str to float
            NaN for a solver without values.
        """
        out = {}
        for j, s in enumerate(self.solvers):
            col = self.values[:, j]
            col = col[~np.isnan(col)]
            out[s] = float(np.mean(col <= x)) if col.size else math.nan
        return out


def judged_trace(run: RunResult) -> Trace:
    """The rows of a run's trace whose objective the float64 judge computed.

    All rows of a float64 run and of a minibatch run (its rows are full evaluations in float64
    on the host). A full-batch run in another dtype records the values it computed itself:
    only its start (``f0``) and the iterate it returned, re-evaluated in float64 (``fun``, at
    its confirmed target or its end), are the judge's.

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    Trace
    """
    tr = run.trace
    if run.dtype == "float64" or run.outcome.epochs is not None or len(tr) == 0:
        return tr
    end = {m: spent(run, m) for m in METRICS}
    return Trace(iteration=np.array([tr.iteration[0], end["nit"]], dtype=np.int64),
                 time=np.array([tr.time[0], end["time"]]), fun=np.array([run.f0, run.fun]),
                 grad_norm=np.array([tr.grad_norm[0], math.nan]),
                 nfev=np.array([tr.nfev[0], end["nfev"]], dtype=np.int64),
                 njev=np.array([tr.njev[0], end["njev"]], dtype=np.int64))


def _first(tr: Trace, ok: np.ndarray, metric: str) -> float:
    """``metric`` at the first row of ``tr`` where ``ok`` holds; ``inf`` if none."""
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return math.inf
    column = {"time": tr.time, "nit": tr.iteration, "nfev": tr.nfev, "njev": tr.njev}[metric]
    return float(column[idx[0]])


def first_hit(run: RunResult, tol: float, metric: str = "time") -> float:
    """Where a run's judged trace (:func:`judged_trace`) first reaches relative suboptimality
    ``tol``; ``inf`` if never.

    Parameters
    ----------
    run : RunResult
    tol : float
    metric : {"time", "nit", "nfev", "njev"}, default "time"

    Returns
    -------
    float
    """
    check_metric(metric)
    if run.fstar is None:
        raise ValueError(f"run {run.label} on {run.backend} has no known optimum f*; "
                         "tolerance-based profiles need one")
    tr = judged_trace(run)
    if len(tr) == 0:
        return math.inf
    gap0 = run.f0 - run.fstar
    with np.errstate(invalid="ignore"):
        return _first(tr, (tr.fun - run.fstar) <= (tol * gap0 if gap0 > 0 else 0.0), metric)


def best_found(runs: Sequence[RunResult]) -> dict[tuple[str, str, int], float]:
    """``f_L`` per problem instance: the smallest objective any of the runs reached on it (in
    their judged traces, :func:`judged_trace`).

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    dict
        By :func:`~optcmp.analysis.stats.keys.instance_key` (``inf`` when none is finite).
    """
    out: dict[tuple[str, str, int], float] = {}
    for r in ran(runs):
        vals = [float(v) for v in judged_trace(r).fun if math.isfinite(v)]
        vals += [float(v) for v in (r.fun, r.f0) if v is not None and math.isfinite(v)]
        key = instance_key(r)
        out[key] = min([out.get(key, math.inf), *vals])
    return out


def first_solved(run: RunResult, tau: float, f_low: float, metric: str = "nfev") -> float:
    """Where a run's judged trace (:func:`judged_trace`) first passes Moré and Wild's test
    ``f0 - f >= (1 - tau) (f0 - f_L)``.

    Parameters
    ----------
    run : RunResult
    tau : float
        In (0, 1).
    f_low : float
        ``f_L`` of the instance (:func:`best_found`).
    metric : {"time", "nit", "nfev", "njev"}, default "nfev"

    Returns
    -------
    float
        ``inf`` if no trace row passes (Moré and Wild 2009, eq. (2.2)).
    """
    check_metric(metric)
    tr = judged_trace(run)
    if len(tr) == 0 or not math.isfinite(f_low):
        return math.inf
    with np.errstate(invalid="ignore"):
        return _first(tr, (run.f0 - tr.fun) >= (1.0 - tau) * (run.f0 - f_low), metric)


def _check_tau(tau: float | None) -> float | None:
    """``tau`` checked to be in (0, 1), or None."""
    if tau is None:
        return None
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not 0.0 < tau < 1.0:
        raise ValueError(f"tau must be a float in (0, 1) (e.g. 1e-3), got {tau!r}")
    return float(tau)


def _cost(runs: Sequence[RunResult], metric: str, tol: float | None,
          tau: float | None) -> Callable[[RunResult], float]:
    """The per-run cost of a profile: to target, to ``tol`` on the trace, or Moré-Wild's test."""
    if tau is not None:
        lows = best_found(runs)
        return lambda r: first_solved(r, tau, lows[instance_key(r)], metric)
    if tol is not None:
        return lambda r: first_hit(r, tol, metric)
    return lambda r: to_target(r, metric)


def _matrix(runs: Sequence[RunResult], cost: Callable[[RunResult], float],
            warn: bool = True) -> tuple[np.ndarray, list[str], list[str]]:
    """Costs per (instance, solver), the solver names and the instance labels."""
    used = ran(runs)
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
    return M, [names[k] for k in skeys], plabels


def _steps(M: np.ndarray, solvers: list[str], extra: Sequence[float] = ()) -> tuple[
        np.ndarray, dict[str, np.ndarray]]:
    """The abscissae (every finite value and ``extra``) and each solver's step curve."""
    finite = M[np.isfinite(M)]
    x = np.unique(np.concatenate([finite, np.asarray(extra, dtype=np.float64)]))
    y = {}
    for j, s in enumerate(solvers):
        col = M[:, j]
        col = np.sort(col[~np.isnan(col)])
        y[s] = np.searchsorted(col, x, side="right") / max(col.size, 1)
    return x, y


def _start(runs: Runs, metric: str, warn: bool) -> list[RunResult]:
    """The runs of a profile, its metric checked and the fairness warnings emitted."""
    check_metric(metric)
    if warn:
        warn_unfair(runs, by_time=metric == "time", stacklevel=3)
    return list(runs)


def performance_profile(runs: Runs, *, metric: str = "time", tol: float | None = None,
                        warn: bool = True, tau: float | None = None) -> Profile:
    """Dolan-More performance profile over problem instances (problems x repetitions).

    Parameters
    ----------
    runs : sequence of RunResult or ComparisonData
    metric : {"time", "nit", "nfev", "njev"}, default "time"
    tol : float, optional
        Relative suboptimality read from the traces; default the runs' own target.
    warn : bool, default True
    tau : float, optional
        Use Moré and Wild's test instead (:func:`first_solved`).

    Returns
    -------
    Profile
        ``x`` holds ``tau`` (1 and every finite ratio); ``values`` the ratios.
    """
    runs = _start(runs, metric, warn)
    T, solvers, plabels = _matrix(runs, _cost(runs, metric, tol, _check_tau(tau)), warn)
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


def data_profile(runs: Runs, *, tol: float | None = None, metric: str = "njev",
                 per_dimension: bool = False, warn: bool = True,
                 tau: float | None = None) -> Profile:
    """More-Wild data profile: fraction of instances solved within a budget of evaluations.

    Parameters
    ----------
    runs : sequence of RunResult or ComparisonData
    tol, warn, tau
        As in :func:`performance_profile`.
    metric : {"njev", "nfev", "nit", "time"}, default "njev"
    per_dimension : bool, default False
        Divide the budget by ``n_params + 1``.

    Returns
    -------
    Profile
        ``x`` holds the budgets (0 and every finite cost); ``values`` the costs.
    """
    runs = _start(runs, metric, warn)
    base = _cost(runs, metric, tol, _check_tau(tau))

    def cost(r: RunResult) -> float:
        c = base(r)
        return c / (r.identity.n_params + 1) if per_dimension else c

    T, solvers, plabels = _matrix(runs, cost, warn)
    x, y = _steps(T, solvers, extra=(0.0,))
    unit = UNITS[metric]
    if per_dimension:
        unit = ("simplex gradients: (n + 1) function evaluations" if metric == "nfev"
                else unit + " / (n_params + 1)")
    return Profile("data", x, y, solvers, T, plabels, metric, f"budget ({unit})",
                   note="fraction of problem instances solved within the budget")


def runtime_ecdf(runs: Runs, *, tols: Sequence[float] = DEFAULT_ECDF_TOLS,
                 metric: str = "time", warn: bool = True) -> Profile:
    """COCO-style ECDF of runtimes (:func:`first_hit`) over (run, tolerance) pairs.

    Parameters
    ----------
    runs : sequence of RunResult or ComparisonData
    tols : sequence of float, default 1e-1 ... 1e-8
    metric : {"time", "nit", "nfev", "njev"}, default "time"
    warn : bool, default True

    Returns
    -------
    Profile
        One column of ``values`` per solver.
    """
    check_metric(metric)
    tols = [float(t) for t in tols]
    if not tols or any(not t > 0 for t in tols):
        raise ValueError(f"tols must be a non-empty sequence of positive floats, got {tols!r}")
    used = ran(runs)
    if not used:
        raise ValueError("no runs (empty, or every run was skipped)")
    if warn:
        warn_unfair(runs, by_time=metric == "time", stacklevel=2)
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
    return Profile("ecdf", x, y, solvers, V, [f"tol {t:g}" for t in tols], metric,
                   f"runtime ({UNITS[metric]})",
                   note="fraction of (run, tolerance) pairs solved; tolerances "
                        + ", ".join(f"{t:g}" for t in tols))


__all__ = ["DEFAULT_ECDF_TOLS", "Profile", "UNITS", "best_found", "data_profile", "first_hit",
           "first_solved", "judged_trace", "performance_profile", "runtime_ecdf"]
