"""Repetitions and report: medians with confidence intervals, a rank-sum test, an HTML report.

Runs diagonal-Newton-scaled GD, L-BFGS and minibatch SGD on numpy on a linear regression
(100,000 rows and 10 repetitions; 5,000 rows and 5 repetitions with ``OPTCMP_QUICK=1``) from a
random initial point (``init="normal"``), one CPU thread for every run, at most 100,000
iterations each and every run measured to its end (``censor_ratio=None``: a study of repetitions
wants SGD's own distribution, not only that it is over 10x slower than L-BFGS). Each repetition changes
the seed of the initial point and of SGD's minibatch order; the data stay the same. It prints
the summary (success count, median time-to-target with its 95% confidence interval,
median iterations and evaluations to target, aRT), the fairness checks, a two-sided
Mann-Whitney test of L-BFGS against diag_newton with the Vargha-Delaney effect size, and writes
a self-contained HTML report to a temporary folder (removed at the end in quick mode, kept
otherwise so you can open it).

Expected output: the summary table (L-BFGS and diag_newton reach the target in every
repetition, L-BFGS an order of magnitude faster; SGD, whose path depends on the minibatch order,
reaches it in most repetitions and runs out of its iteration budget in others: those runs are
censored in the statistics, so its CI's upper end may print as ``inf``), the fairness checks (a note that some
SGD runs were stopped by a budget; on a busy machine, also that runs shared the host), then
lines such as::

    pairwise: lbfgs reaches the target sooner than diag_newton (medians 1.08ms vs 28ms; p=0.00794, A=1.00, large effect)
    wrote the HTML report: /tmp/optcmp-report-etosz9m3/report.html (15 runs, 655 kB)
"""

from __future__ import annotations

import os
import tempfile
import warnings

import optcmp

QUICK = os.environ.get("OPTCMP_QUICK") == "1"


def main() -> None:
    problem = optcmp.problems.LinearRegression(n_samples=5_000 if QUICK else 100_000,
                                               init="normal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fairness checks are printed below instead
        cmp = optcmp.compare(problem, [optcmp.diag_newton, optcmp.lbfgs, optcmp.sgd],
                             repeats=5 if QUICK else 10, max_iter=100_000, censor_ratio=None,
                             threads=1, progress=False)
    print(cmp.summary_table(warn=False))
    print()
    for issue in cmp.fairness_issues():
        print(f"fairness: {issue}")
    pair = cmp.compare_optimizers("lbfgs", "diag_newton", warn=False)
    print(f"pairwise: {pair.message}")

    if QUICK:
        with tempfile.TemporaryDirectory(prefix="optcmp-report-") as folder:
            _report(cmp, folder)
    else:
        _report(cmp, tempfile.mkdtemp(prefix="optcmp-report-"))


def _report(cmp: optcmp.Comparison, folder: str) -> None:
    path = os.path.join(folder, "report.html")
    cmp.to_html(path)
    size = os.path.getsize(path) / 1024
    print(f"wrote the HTML report: {path} ({len(cmp)} runs, {size:.0f} kB)")


if __name__ == "__main__":
    main()
