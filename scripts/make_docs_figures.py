"""Regenerate the figures of docs/statistics-and-plots.md from a small real comparison.

Run from the repository root: ``python scripts/make_docs_figures.py``. It compares gd,
diag_newton and lbfgs on numpy (linear regression, 5,000 rows, random initial point, five
repetitions, one CPU thread) and writes ``docs/img/convergence.png`` (median and quartile band
of the relative suboptimality against time) and ``docs/img/performance_profile.png``. The
times are measured on the machine that runs the script, so the curves differ from run to run.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import optcmp
from optcmp.analysis.plots.files import save_figure

OUT = Path(__file__).resolve().parents[1] / "docs" / "img"


def main() -> None:
    problem = optcmp.problems.LinearRegression(n_samples=5_000, init="normal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # shared-host warnings on a busy machine
        comp = optcmp.compare(problem, [optcmp.gd, optcmp.diag_newton, optcmp.lbfgs],
                              repeats=5, max_iter=75_000, max_time=None, threads=1,
                              progress=False)
    print(comp.summary_table(warn=False))
    os.makedirs(OUT, exist_ok=True)
    fig = comp.plot("convergence", x="time", xscale="log")
    print(save_figure(fig, OUT / "convergence.png", dpi=80))
    fig = comp.plot("performance_profile")
    print(save_figure(fig, OUT / "performance_profile.png", dpi=80))


if __name__ == "__main__":
    main()
