"""Old home of the statistics over repetitions; the code lives in :mod:`optcmp.analysis.stats`
(split by job: censoring, bootstrap, tests, profiles, fairness, summary, suites). New code
imports those modules."""

from optcmp.analysis.stats.bootstrap import MedianCI, median_ci
from optcmp.analysis.stats.censor import (
    BUDGET_STATUSES,
    METRICS,
    average_runtime,
    censored_median,
    spent,
    to_target,
)
from optcmp.analysis.stats.fairness import (
    COMPILED_KINDS,
    TIMER_FACTOR,
    UnfairComparisonWarning,
    check_fairness,
    contended_issue,
    fairness_issues,
)
from optcmp.analysis.stats.keys import GROUP_KEYS, instance_key, solver_key, solver_labels
from optcmp.analysis.stats.profiles import (
    DEFAULT_ECDF_TOLS,
    Profile,
    best_found,
    data_profile,
    first_hit,
    first_solved,
    performance_profile,
    runtime_ecdf,
)
from optcmp.analysis.stats.suites import PROFILE_BUDGETS, PROFILE_RATIOS, suite_profile_table
from optcmp.analysis.stats.summary import (
    NOT_REACHED,
    ci_methods,
    format_summary,
    summarize,
    summary,
    summary_table,
)
from optcmp.analysis.stats.tests import (
    NoiseWarning,
    PairwiseComparison,
    compare_optimizers,
    compare_pair,
)

__all__ = [
    "BUDGET_STATUSES", "COMPILED_KINDS", "DEFAULT_ECDF_TOLS", "GROUP_KEYS", "METRICS",
    "NOT_REACHED", "PROFILE_BUDGETS", "PROFILE_RATIOS", "TIMER_FACTOR", "MedianCI",
    "NoiseWarning", "PairwiseComparison", "Profile", "UnfairComparisonWarning",
    "average_runtime", "best_found", "censored_median", "check_fairness", "ci_methods",
    "compare_optimizers", "compare_pair", "contended_issue", "data_profile", "fairness_issues",
    "first_hit", "first_solved", "format_summary", "instance_key", "median_ci",
    "performance_profile", "runtime_ecdf", "solver_key", "solver_labels", "spent",
    "suite_profile_table", "summarize", "summary", "summary_table", "to_target",
]
