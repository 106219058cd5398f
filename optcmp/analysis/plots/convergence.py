"""Convergence curves: the median over repetitions of the traces, and a band."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp.analysis.plots.canvas import Plottable, figure, legend, runs_of, target_tol, text
from optcmp.analysis.plots.styles import line_kw, solver_styles
from optcmp.analysis.stats.keys import solver_key, solver_labels
from optcmp.results import RunResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: x-axes of a convergence plot, and the trace column each reads.
X_AXES = {"time": "time", "iterations": "iteration", "nit": "iteration", "njev": "njev",
          "gradient_evaluations": "njev", "nfev": "nfev", "function_evaluations": "nfev",
          "epochs": "epoch"}
X_LABELS = {"time": "time (s, optimizer steps only)", "iteration": "iterations",
            "njev": "gradient evaluations", "nfev": "function evaluations",
            "epoch": "epochs (a full-batch iteration is one)"}
Y_AXES = ("auto", "relative_suboptimality", "suboptimality", "fun")
Y_LABELS = {"relative_suboptimality": "relative suboptimality (f - f*) / (f0 - f*)",
            "suboptimality": "suboptimality f - f*", "fun": "objective f"}
#: Most points drawn per curve (traces are resampled on a common grid).
MAX_POINTS = 400

Key = tuple[str, str, str, str]


def epochs_per_iteration(run: RunResult) -> float:
    """Passes over the training data per iteration: 1 for full batch, 1/steps for minibatches.

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    float
    """
    b = run.hyperparameters.get("batch_size") if run.hyperparameters else None
    n = int(run.identity.n_samples or 0)
    if isinstance(b, (int, float)) and 0 < b < n:
        return 1.0 / -(-n // int(b))
    return 1.0


def mixes_batch_sizes(runs: Sequence[RunResult]) -> bool:
    """Whether ``runs`` hold both minibatch and full-batch runs (their iterations differ in cost).

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    bool
    """
    return len({epochs_per_iteration(r) < 1.0 for r in runs}) > 1


def _curve(run: RunResult, xcol: str, y: str) -> tuple[np.ndarray, np.ndarray]:
    """The run's trace as ``(x, y)``, sorted by ``x``."""
    tr = run.trace
    if xcol == "epoch":
        xs = np.asarray(tr.iteration, dtype=np.float64) * epochs_per_iteration(run)
    else:
        xs = np.asarray(getattr(tr, xcol), dtype=np.float64)
    if y == "relative_suboptimality":
        ys = tr.relative_suboptimality(run.f0, run.fstar)
    elif y == "suboptimality":
        ys = tr.fun - (run.fstar if run.fstar is not None else np.nan)
    else:
        ys = np.asarray(tr.fun, dtype=np.float64)
    order = np.argsort(xs, kind="stable")
    return xs[order], np.asarray(ys, dtype=np.float64)[order]


def _on_grid(xs: np.ndarray, ys: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The step function ``(xs, ys)`` read at ``grid``: NaN before its first observation and
    after its last (a run that stopped has no value there, not its last one)."""
    idx = np.searchsorted(xs, grid, side="right") - 1
    out = ys[np.clip(idx, 0, None)].astype(np.float64)
    out[(idx < 0) | (grid > xs[-1])] = np.nan
    return out


def _curves(pruns: Sequence[RunResult], xcol: str, y: str) -> tuple[
        dict[Key, list[tuple[np.ndarray, np.ndarray]]], float]:
    """Each solver's curves, and the floor for non-positive values on a log axis."""
    per_solver: dict[Key, list[RunResult]] = {}
    for r in pruns:
        per_solver.setdefault(solver_key(r), []).append(r)
    floor = np.inf
    curves = {}
    for key, srs in per_solver.items():
        cs = [_curve(r, xcol, y) for r in srs]
        curves[key] = cs
        for _, ys in cs:
            pos = ys[np.isfinite(ys) & (ys > 0)]
            if pos.size:
                floor = min(floor, float(pos.min()))
    return curves, floor / 2 if np.isfinite(floor) else 1e-300


def median_curve(cs: list[tuple[np.ndarray, np.ndarray]], floor: float | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid, the values of each curve on it (NaN where a run was not going) and their
    median over the runs still going (NaN where none is).

    Parameters
    ----------
    cs : list of (ndarray, ndarray)
        Each run's ``(x, y)``, sorted by ``x``.
    floor : float, optional
        Replaces values ``<= 0`` (a log axis).

    Returns
    -------
    (ndarray, ndarray, ndarray)
        ``grid``, ``Y`` (runs x grid) and ``median``.
    """
    allx = np.unique(np.concatenate([c[0] for c in cs]))
    grid = allx if allx.size <= MAX_POINTS else np.unique(np.concatenate([
        np.quantile(allx, np.linspace(0, 1, MAX_POINTS)), [c[0][-1] for c in cs if c[0].size]]))
    Y = np.vstack([_on_grid(xs, ys, grid) for xs, ys in cs])
    if floor is not None:
        Y = np.where(np.isfinite(Y) & (Y <= 0), floor, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return grid, Y, np.nanmedian(Y, axis=0)


def _median_line(ax: Axes, cs: list[tuple[np.ndarray, np.ndarray]], name: str,
                 st: dict[str, Any], band: str | None, floor: float | None) -> Any:
    """Draw one solver's median over the runs still going (and band) on ``ax``; return the
    line."""
    grid, Y, med = median_curve(cs, floor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if len(cs) > 1 and band is not None:
            lo, hi = ((np.nanpercentile(Y, 25, axis=0), np.nanpercentile(Y, 75, axis=0))
                      if band == "quartiles" else (np.nanmin(Y, axis=0), np.nanmax(Y, axis=0)))
    (line,) = ax.plot(grid, med, drawstyle="steps-post", label=text(name),
                      **line_kw(st, len(grid)))
    if len(cs) > 1 and band is not None:
        ax.fill_between(grid, lo, hi, step="post", alpha=0.2, color=line.get_color(), lw=0)
    return line


def _convergence_panel(ax: Axes, pruns: Sequence[RunResult], names: dict[Key, str], *,
                       styles: dict[Any, dict[str, Any]], xcol: str, y: str,
                       band: str | None, target: float | None, xscale: str, title: str) -> None:
    """Draw one problem's panel of :func:`convergence` on ``ax``."""
    logy = y != "fun"
    handles, labels = [], []
    curves, floor = _curves(pruns, xcol, y)
    for key, cs in curves.items():
        handles.append(_median_line(ax, cs, names[key], styles[key], band,
                                    floor if logy else None))
        labels.append(names[key] + _how_many(cs))
    if target is not None:
        handles.append(ax.axhline(target, color="k", ls="--", lw=1))
        labels.append(f"target {target:g}")
    if logy:
        ax.set_yscale("log")
    ax.set_xscale(xscale)
    ax.set_xlabel(X_LABELS[xcol])
    ax.set_ylabel(Y_LABELS[y])
    ax.set_title(text(title), fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    legend(ax, handles, labels)


def _how_many(cs: list[tuple[np.ndarray, np.ndarray]]) -> str:
    """How many runs a median line is over: ``" (median of 5; 1 at the end)"``."""
    if len(cs) < 2:
        return ""
    ends = [c[0][-1] for c in cs if c[0].size]
    last = sum(1 for e in ends if e == max(ends))
    return f" (median of {len(cs)}" + (f"; {last} at the end)" if last < len(cs) else ")")


def _log_time(runs: Sequence[RunResult]) -> bool:
    """Whether the runs' times span more than 100x (their last observations)."""
    ends = [float(r.trace.time[-1]) for r in runs if len(r.trace) and r.trace.time[-1] > 0]
    return bool(ends) and max(ends) > 100 * min(ends)


def _check(x: str, y: str, band: str | None) -> None:
    """Raise ValueError for an unknown axis or band."""
    if x not in X_AXES:
        raise ValueError(f"x must be one of {sorted(X_AXES)}, got {x!r}")
    if y not in Y_AXES:
        raise ValueError(f"y must be one of {Y_AXES}, got {y!r}")
    if band not in ("quartiles", "minmax", None):
        raise ValueError(f"band must be 'quartiles', 'minmax' or None, got {band!r}")


def convergence(obj: Plottable, *, x: str = "time", y: str = "auto",
                band: str | None = "quartiles", target: float | None = None,
                xscale: str | None = None, title: str | None = None) -> Figure:
    """Convergence curves, one panel per problem: per solver, the median over repetitions of
    the runs' traces (step functions on a common grid) and a band, each over the runs still
    going: a run's curve stops where its run stopped (its last observation).

    Parameters
    ----------
    obj : ComparisonData or sequence of RunResult
    x : {"time", "iterations", "njev", "nfev", "epochs"}, default "time"
    y : {"auto", "relative_suboptimality", "suboptimality", "fun"}, default "auto"
        ``"auto"``: the relative suboptimality when every run knows ``f*``, else the loss.
    band : {"quartiles", "minmax", None}, default "quartiles"
    target : float, optional
        Horizontal line; default the comparison's tolerance.
    xscale : {"linear", "log", "symlog"}, optional
        Default ``"log"`` for a count axis when :func:`mixes_batch_sizes`, and for the time
        axis when the runs' times span more than 100x; else ``"linear"``.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    _check(x, y, band)
    runs = [r for r in runs_of(obj) if len(r.trace)]
    if not runs:
        raise ValueError("no run with a trace to plot")
    known = all(r.fstar is not None for r in runs)
    if y == "auto":
        y = "relative_suboptimality" if known else "fun"
    elif y != "fun" and not known:
        raise ValueError(f"y={y!r} needs the optimum f*, which some runs do not know; use y='fun'")
    if target is None and y == "relative_suboptimality":
        target = target_tol(obj)
    xcol = X_AXES[x]
    if xscale is None:
        counts = xcol in ("iteration", "njev", "nfev", "epoch")
        xscale = ("log" if (counts and mixes_batch_sizes(runs))
                  or (xcol == "time" and _log_time(runs)) else "linear")
    names = solver_labels(runs)
    styles = solver_styles(runs_of(obj))
    groups: dict[str, list[RunResult]] = {}
    for r in runs:
        groups.setdefault(r.problem, []).append(r)
    fig, axes = figure(len(groups))
    for ax, (prob, pruns) in zip(axes, groups.items()):
        _convergence_panel(ax, pruns, names, styles=styles, xcol=xcol, y=y, band=band,
                           target=target, xscale=xscale, title=title or prob)
    return fig


__all__ = ["MAX_POINTS", "X_AXES", "X_LABELS", "Y_AXES", "Y_LABELS", "convergence",
           "epochs_per_iteration", "median_curve", "mixes_batch_sizes"]
