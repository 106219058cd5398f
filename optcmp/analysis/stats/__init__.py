"""Statistics over repetitions, one module per job; every public name is importable from here.

What each computes and why: docs/statistics-and-plots.md.
"""

from optcmp.analysis.format import NOT_REACHED
from optcmp.analysis.stats.bootstrap import MedianCI, factor_interval, median_ci, step_times
from optcmp.analysis.stats.censor import (
    BUDGET_STATUSES,
    METRICS,
    average_runtime,
    censored_median,
    check_metric,
    ran,
    spent,
    to_target,
)
from optcmp.analysis.stats.fairness import (
    COMPILED_KINDS,
    TIMER_FACTOR,
    UnfairComparisonWarning,
    check_fairness,
    comparison_issues,
    contended_issue,
    fairness_issues,
    shared_host_issue,
    warn_unfair,
)
from optcmp.analysis.stats.keys import (
    GROUP_KEYS,
    group_runs,
    instance_key,
    solver_key,
    solver_labels,
    spec_key,
)
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
    ci_methods,
    format_summary,
    median_cpu_time,
    summarize,
    summary,
    summary_table,
)
from optcmp.analysis.stats.tests import (
    NoiseWarning,
    PairwiseComparison,
    compare_optimizers,
    compare_pair,
    magnitude,
)

__all__ = [
    "BUDGET_STATUSES", "COMPILED_KINDS", "DEFAULT_ECDF_TOLS", "GROUP_KEYS", "METRICS",
    "NOT_REACHED", "PROFILE_BUDGETS", "PROFILE_RATIOS", "TIMER_FACTOR", "MedianCI",
    "NoiseWarning", "PairwiseComparison", "Profile", "UnfairComparisonWarning",
    "average_runtime", "best_found", "censored_median", "check_fairness", "check_metric",
    "ci_methods", "compare_optimizers", "compare_pair", "comparison_issues", "contended_issue",
    "data_profile", "factor_interval", "fairness_issues", "first_hit", "first_solved",
    "format_summary", "group_runs", "instance_key", "magnitude", "median_ci", "median_cpu_time",
    "performance_profile", "ran", "runtime_ecdf", "shared_host_issue", "solver_key",
    "solver_labels", "spec_key", "spent", "step_times", "suite_profile_table", "summarize",
    "summary", "summary_table", "to_target", "warn_unfair",
]
