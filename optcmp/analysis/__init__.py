"""Analyses of results: functions of :class:`optcmp.results.ComparisonData` and of runs.

:class:`optcmp.Comparison` has a method for each; the modules import the results (never the
other way round) and each other's functions, never a comparison's methods: formatting
(:mod:`~optcmp.analysis.format`), the table, ranking and verdict, statistics
(:mod:`~optcmp.analysis.stats`), plots (:mod:`~optcmp.analysis.plots`, needs matplotlib), the
offline HTML report and the CSV/Parquet exports. Importing this package imports none of them.
"""
