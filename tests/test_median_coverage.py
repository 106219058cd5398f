"""A confidence interval of a median says the coverage it really has: from 5 runs no interval
inside their range covers more than 93.75%, so a "95%" one says so."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _handmade import comparison, make_run

from optcmp.analysis import stats
from optcmp.analysis.stats.bootstrap import order_coverage

FIVE = [1.2, 1.0, 1.1, 1.3, 0.9]


def test_order_statistic_coverage_is_the_binomial_sum():
    # [X_(1), X_(5)] misses the median only when all 5 fall on one side: 1 - 2/32
    assert order_coverage(5, 1, 5) == 0.9375
    assert order_coverage(5, 2, 4) == 20 / 32
    assert order_coverage(10, 2, 9) == 1 - 22 / 1024
    assert order_coverage(5, 3, 3) == 0.0


def test_the_exact_coverage_of_min_to_max_of_5_is_what_sampling_gives():
    """200,000 samples of 5 exponential runs (median ln 2): [min, max] holds the median in
    93.75% of them, within the sampling error (sd 0.054%)."""
    x = np.random.default_rng(0).exponential(size=(200_000, 5))
    covered = (x.min(axis=1) <= math.log(2)) & (math.log(2) <= x.max(axis=1))
    assert covered.mean() == pytest.approx(0.9375, abs=0.0025)


def test_a_95_percent_interval_of_5_runs_says_93_75():
    for method in ("order", "percentile", "BCa"):
        ci = stats.median_ci(FIVE, method=method)
        assert (ci.low, ci.high, ci.level, ci.coverage) == (0.9, 1.3, 0.95, 0.9375), method
    censored = stats.median_ci([1.0, 2.0, 3.0, math.inf, math.inf])
    assert (censored.low, censored.high, censored.coverage) == (1.0, math.inf, 0.9375)


def test_the_smallest_order_statistics_that_reach_the_level():
    # 6 runs: [min, max] covers 1 - 2/64 = 96.9%; 10 runs: [X_(2), X_(9)] covers 97.9% and
    # [X_(3), X_(8)] only 89.1%
    six = stats.median_ci(np.arange(6.0))
    assert (six.low, six.high, six.coverage, six.method) == (0.0, 5.0, 0.96875, "order")
    ten = stats.median_ci(np.arange(10.0))
    assert (ten.low, ten.high, ten.coverage) == (1.0, 8.0, 1 - 22 / 1024)
    assert stats.median_ci(np.arange(10.0), confidence_level=0.8).coverage == 0.890625


def test_tables_and_the_summary_state_the_shortfall():
    runs = [make_run("A", t, repeat=k) for k, t in enumerate(FIVE)]
    (row,) = stats.summarize(runs, warn=False)
    assert row["ci_coverage"] == 0.9375 and row["ci_method"] == "order"
    text = stats.format_summary([row])
    assert "95% CI" in text and "(93.75%)" in text
    assert "order-statistic interval of the median" in text
    assert "(93.75%)" in comparison(runs).table()
    six = [make_run("A", float(t), repeat=k) for k, t in enumerate(range(1, 7))]
    assert "%)" not in stats.format_summary(stats.summarize(six, warn=False)).splitlines()[2]
