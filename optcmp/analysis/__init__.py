"""Analyses of results: functions of :class:`optcmp.results.ComparisonData` and of runs.

:class:`optcmp.Comparison` has a method for each; the modules import the results (never the
other way round) and each other's functions, never a comparison's methods:

* :mod:`~optcmp.analysis.format`: how numbers and seconds are written;
* :mod:`~optcmp.analysis.tables`: the fixed-width table and the flat rows;
* :mod:`~optcmp.analysis.verdict`: the one-line answer;
* :mod:`~optcmp.analysis.stats`: statistics over repetitions (censoring, bootstrap, rank
  tests, profiles, fairness checks, summaries, suites);
* :mod:`~optcmp.analysis.plots`: one module per plot kind behind the registry ``KINDS``
  (needs matplotlib);
* :mod:`~optcmp.analysis.report`: the offline HTML report;
* :mod:`~optcmp.analysis.export`: CSV and Parquet tables.

Importing this package imports none of them.
"""
