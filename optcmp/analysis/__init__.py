"""Analyses of results: functions of :class:`optcmp.results.ComparisonData` and of runs.

:class:`optcmp.Comparison` has a method for each; the modules import the results, never a
comparison's methods (docs/architecture.md). Importing this package imports none of them.
"""
