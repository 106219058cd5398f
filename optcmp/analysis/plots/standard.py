"""The standard plots of a comparison: what a report shows and ``save_plots`` writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optcmp.analysis.plots.canvas import Plottable, runs_of, target_tol
from optcmp.analysis.plots.convergence import convergence, mixes_batch_sizes
from optcmp.analysis.plots.profiles import ecdf_tols, profile, suite_profiles
from optcmp.analysis.plots.styles import solver_styles
from optcmp.analysis.plots.time_to_target import time_to_target
from optcmp.analysis.stats import profiles as sp
from optcmp.analysis.stats.keys import solver_key
from optcmp.results import ComparisonData, RunResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Over more problems than this, the standard plots are the profiles over the suite only.
MAX_PANELS = 6

Plots = list[tuple[str, str, "Figure"]]


def _convergence_plots(src: Plottable, traced: list[RunResult]) -> Plots:
    """Convergence against time, iterations (or epochs) and gradient evaluations."""
    mixed = mixes_batch_sizes(traced)
    out = []
    for name, x, cap in (
            ("time", "time", "time"),
            ("iterations", "epochs" if mixed else "iterations",
             "epochs (minibatch and full-batch runs: a full-batch iteration is one epoch, "
             "a minibatch step a fraction of one)" if mixed else "iterations"),
            ("njev", "njev", "gradient evaluations" + (" (log axis: minibatch and "
                                                       "full-batch runs)" if mixed else ""))):
        out.append((f"convergence_{name}", f"Convergence against {cap}: median over the "
                    "repetitions still going (a run's curve stops where it stopped), band = "
                    "quartiles", convergence(src, x=x)))
    return out


def _ecdf_plot(comp: Plottable, traced: list[RunResult], styles: dict) -> Plots:
    """The runtime ECDF down to the comparison's target, when every traced run knows f*."""
    if not (traced and all(r.fstar is not None for r in traced)):
        return []
    target = target_tol(comp)
    tols = ecdf_tols(target)
    which = (f"down to the comparison's target {target:g}" if target is not None else
             "the default set")
    return [("ecdf", f"ECDF of runtimes over tolerances {tols[0]:g} ... {tols[-1]:g} "
             f"({len(tols)} tolerances, {which}; a curve ends below 1 when runs missed "
             "some of them)",
             profile(sp.runtime_ecdf(traced, tols=tols, warn=False), styles=styles))]


def standard_plots(comp: Plottable) -> Plots:
    """The plots a report shows: ``(name, caption, figure)`` for every plot that applies.

    Parameters
    ----------
    comp : ComparisonData or sequence of RunResult

    Returns
    -------
    list of (str, str, matplotlib.figure.Figure)
        A suite's :func:`~optcmp.analysis.plots.profiles.suite_profiles` (only those over more
        than :data:`MAX_PANELS` problems), convergence, time-to-target and profiles.
    """
    runs = runs_of(comp)
    out: Plots = []
    traced = [r for r in runs if len(r.trace)]
    styles = solver_styles(runs)
    nprob = len({r.problem for r in runs})
    if nprob > 1:  # several problems: the profiles over them first
        out.extend(suite_profiles(runs))
    if nprob > MAX_PANELS:  # per-problem panels would be unreadable: the tables show them
        return out
    if traced:
        out.extend(_convergence_plots(comp if isinstance(comp, ComparisonData) else traced,
                                      traced))
    if runs:
        out.append(("time_to_target", "Median time-to-target with bootstrap CIs",
                    time_to_target(runs)))
        if len({solver_key(r) for r in runs}) > 1:
            out.append(("performance_profile", "Performance profile over problems x "
                        "repetitions (time-to-target; relative to the solvers shown)",
                        profile(sp.performance_profile(runs, warn=False), styles=styles)))
        out.append(("data_profile", "Data profile in gradient evaluations",
                    profile(sp.data_profile(runs, warn=False), styles=styles)))
    out.extend(_ecdf_plot(comp, traced, styles))
    return out


__all__ = ["MAX_PANELS", "standard_plots"]
