"""Profile plots: step curves of the profiles of :mod:`optcmp.analysis.stats.profiles`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp.analysis.plots.canvas import Plottable, figure, legend, runs_of, target_tol, text
from optcmp.analysis.plots.styles import line_kw, solver_styles, style_from_name
from optcmp.analysis.stats import profiles as sp
from optcmp.results import RunResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Tolerance of Moré and Wild's convergence test in the suite profiles.
SUITE_TAU = 1e-3
#: Default title of each kind of profile.
TITLES = {"performance": "performance profile (Dolan-More)",
          "data": "data profile (More-Wild)", "ecdf": "ECDF of runtimes (COCO)"}
#: y-axis label of each kind of profile.
YLABELS = {"performance": "fraction within tau of the best",
           "data": "fraction of instances solved", "ecdf": "fraction of (run, tol.) pairs solved"}


def ecdf_tols(target: float | None) -> tuple[float, ...]:
    """ECDF tolerances: one per decade from 1e-1 down to the comparison's target, target included.

    Parameters
    ----------
    target : float, optional
        None gives :data:`optcmp.analysis.stats.profiles.DEFAULT_ECDF_TOLS`.

    Returns
    -------
    tuple of float
    """
    if target is None or not (0 < target < 1):
        return tuple(sp.DEFAULT_ECDF_TOLS)
    decades = [10.0 ** -k for k in range(1, 17) if 10.0 ** -k >= target * (1 + 1e-9)]
    return tuple(decades) + (float(target),)


def _limits(prof: sp.Profile, x: np.ndarray) -> tuple[float, float, bool]:
    """Start and end of the x-axis, and whether it is logarithmic (data profiles)."""
    if prof.kind == "performance":
        return 1.0, max(float(x.max()) * 1.5 if x.size else 2.0, 2.0), False
    pos = x[x > 0]
    if prof.kind == "data":
        logx = bool(pos.size and pos.max() > 20 * pos.min())
        right = float(x.max()) * (1.5 if logx else 1.1) if x.size and x.max() > 0 else 1.0
        return (float(pos.min()) / 2 if logx else 0.0), right, logx
    right = float(pos.max()) * 2 if pos.size else 1.0
    return (float(pos.min()) / 2 if pos.size else 1e-6), right, False


def _axes(ax: Axes, prof: sp.Profile, start: float, right: float, logx: bool) -> None:
    """The axes' scales, limits and labels for ``prof``."""
    if prof.kind == "performance":
        ax.set_xscale("log", base=2)
        ax.set_xlim(1, right)
    elif prof.kind == "data":
        if logx:
            ax.set_xscale("log")
        ax.set_xlim(start, right)
    else:
        ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(prof.xlabel)
    ax.set_ylabel(YLABELS[prof.kind])


def profile(prof: sp.Profile, *, title: str | None = None,
            styles: dict[Any, dict[str, Any]] | None = None) -> Figure:
    """Step curves of a :class:`~optcmp.analysis.stats.profiles.Profile`, one per solver.

    Parameters
    ----------
    prof : Profile
    title : str, optional
    styles : dict, optional
        By solver name (:func:`~optcmp.analysis.plots.styles.solver_styles`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (ax,) = figure(1)
    x = np.asarray(prof.x, dtype=np.float64)
    start, right, logx = _limits(prof, x)
    handles = []
    for s in prof.solvers:
        xs = np.concatenate([[start], x, [right]])
        ys = np.concatenate([[0.0 if prof.kind != "performance" else prof.at(1.0)[s]],
                             prof.y[s], [prof.y[s][-1] if x.size else 0.0]])
        if prof.kind == "ecdf" or (prof.kind == "data" and logx):
            keep = xs > 0
            xs, ys = xs[keep], ys[keep]
        st = (styles or {}).get(s) or style_from_name(s, prof.solvers)
        (line,) = ax.step(xs, ys, where="post", label=text(s), **line_kw(st, len(xs)))
        handles.append(line)
    _axes(ax, prof, start, right, logx)
    ax.set_title(text(title or f"{TITLES[prof.kind]}, {len(prof.problems)} "
                      f"{'targets' if prof.kind == 'ecdf' else 'problem instances'}"),
                 fontsize="medium")
    ax.grid(True, alpha=0.3)
    if prof.kind == "ecdf" and prof.note:
        ax.text(0.0, -0.16, text(prof.note), transform=ax.transAxes, fontsize="small",
                va="top", color="0.3", wrap=True)
    legend(ax, handles, list(prof.solvers))
    return fig


def performance_profile_plot(obj: Plottable, *, title: str | None = None,
                             **kwargs: Any) -> Figure:
    """Plot kind ``"performance_profile"``: the Dolan-Moré profile of ``obj``'s runs."""
    return _profile_of(obj, sp.performance_profile, title, kwargs)


def data_profile_plot(obj: Plottable, *, title: str | None = None, **kwargs: Any) -> Figure:
    """Plot kind ``"data_profile"``: the Moré-Wild data profile of ``obj``'s runs.

    Parameters
    ----------
    obj : ComparisonData or sequence of RunResult
    title : str, optional
    **kwargs
        Passed to :func:`optcmp.analysis.stats.profiles.data_profile`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    return _profile_of(obj, sp.data_profile, title, kwargs)


def ecdf_plot(obj: Plottable, *, title: str | None = None, **kwargs: Any) -> Figure:
    """Plot kind ``"ecdf"``: the runtime ECDF of ``obj``'s runs over tolerances.

    Parameters
    ----------
    obj : ComparisonData or sequence of RunResult
    title : str, optional
    **kwargs
        Passed to :func:`optcmp.analysis.stats.profiles.runtime_ecdf` (``tols`` default
        :func:`ecdf_tols` of the target).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if "tols" not in kwargs:
        kwargs["tols"] = ecdf_tols(target_tol(obj))
    return _profile_of(obj, sp.runtime_ecdf, title, kwargs)


def _profile_of(obj: Plottable, compute: Callable[..., sp.Profile], title: str | None,
                kwargs: dict[str, Any]) -> Figure:
    """:func:`profile` of ``compute`` over ``obj``'s runs (``warn`` False unless given)."""
    kwargs.setdefault("warn", False)
    runs = runs_of(obj)
    return profile(compute(runs, **kwargs), title=title, styles=solver_styles(runs))


def suite_profiles(runs: Sequence[RunResult], *, tau: float = SUITE_TAU) -> list[
        tuple[str, str, Figure]]:
    """The performance and data profiles over a problem set (nfev to Moré and Wild's test).

    Parameters
    ----------
    runs : sequence of RunResult
    tau : float, default 1e-3

    Returns
    -------
    list of (str, str, matplotlib.figure.Figure)
        Name, caption and figure.
    """
    used = [r for r in runs if r.status != "skipped"]
    if not used:
        return []
    nprob = len({r.problem for r in used})
    perf = sp.performance_profile(used, metric="nfev", tau=tau, warn=False)
    data = sp.data_profile(used, metric="nfev", per_dimension=True, tau=tau, warn=False)
    styles = solver_styles(used)
    return [
        ("performance_profile_suite",
         f"Dolan-More performance profile over the {nprob} problems: function evaluations to "
         f"More and Wild's test f0 - f >= (1 - tau)(f0 - f_L), tau = {tau:g}",
         profile(perf, title=f"Performance profile, {nprob} problems (tau = {tau:g})",
                 styles=styles)),
        ("data_profile_suite",
         f"More-Wild data profile over the {nprob} problems: budget in simplex gradients "
         f"(n + 1 function evaluations), tau = {tau:g}",
         profile(data, title=f"Data profile, {nprob} problems (tau = {tau:g})", styles=styles)),
    ]


__all__ = ["SUITE_TAU", "data_profile_plot", "ecdf_plot", "ecdf_tols", "performance_profile_plot",
           "profile", "suite_profiles"]
