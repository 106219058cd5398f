"""Profiles over a problem set (a suite) as text, at a few budgets and ratios."""

from __future__ import annotations

from collections.abc import Sequence

from optcmp.analysis.format import fixed_width
from optcmp.analysis.stats.censor import ran
from optcmp.analysis.stats.profiles import data_profile, performance_profile
from optcmp.results import RunResult

#: Abscissae of :func:`suite_profile_table`: budgets in simplex gradients, performance ratios.
PROFILE_BUDGETS = (1.0, 10.0, 100.0, 1000.0)
PROFILE_RATIOS = (1.0, 2.0, 4.0, 16.0)


def suite_profile_table(runs: Sequence[RunResult], *, tau: float = 1e-3) -> str:
    """Data and performance profiles over a suite, in nfev to Moré and Wild's test, as text.

    Parameters
    ----------
    runs : sequence of RunResult
    tau : float, default 1e-3

    Returns
    -------
    str
    """
    data = data_profile(runs, metric="nfev", per_dimension=True, tau=tau, warn=False)
    perf = performance_profile(runs, metric="nfev", tau=tau, warn=False)
    nprob = len({r.problem for r in ran(runs)})
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


__all__ = ["PROFILE_BUDGETS", "PROFILE_RATIOS", "suite_profile_table"]
