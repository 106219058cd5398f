"""The user-facing :class:`Comparison`: :class:`~optcmp.results.ComparisonData` with a method
for each analysis, each importing its :mod:`optcmp.analysis` function when called (so importing
optcmp loads no analysis, no scipy submodule and no matplotlib).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from optcmp.results import ComparisonData


class Comparison(ComparisonData):
    """A table of runs: the result of :func:`optcmp.compare`; built, loaded and changed as
    :class:`~optcmp.results.ComparisonData` (same parameters)."""

    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per run (:func:`optcmp.analysis.tables.rows`)."""
        from optcmp.analysis.tables import rows
        return rows(self)

    def to_frame(self) -> Any:
        """A pandas DataFrame with one row per run (:func:`optcmp.analysis.tables.to_frame`)."""
        from optcmp.analysis.tables import to_frame
        return to_frame(self)

    def table(self, *, columns: Sequence[str] | None = None, wide: bool = False,
              per_run: bool = False) -> str:
        """A fixed-width table sorted by time-to-target (:func:`optcmp.analysis.tables.table`).

        Parameters
        ----------
        columns : sequence of str, optional
        wide : bool, default False
        per_run : bool, default False

        Returns
        -------
        str
        """
        from optcmp.analysis.tables import table
        return table(self, columns=columns, wide=wide, per_run=per_run)

    def __str__(self) -> str:
        return self.table()

    def verdict(self, *, equivalence: Any = None) -> str:
        """Who reaches the target first, by what factor, how sure
        (:func:`optcmp.analysis.verdict.verdict`).

        Parameters
        ----------
        equivalence : EquivalenceResult or list of them, optional

        Returns
        -------
        str
        """
        from optcmp.analysis.verdict import verdict
        return verdict(self, equivalence)

    def framework_factors(self, *, equivalence: Any = None) -> list[Any]:
        """For each optimizer that ran on several backends: the backends, fastest first
        (:func:`optcmp.analysis.framework.framework_factors`).

        Parameters
        ----------
        equivalence : EquivalenceResult or list of them, optional

        Returns
        -------
        list of FrameworkFactor
        """
        from optcmp.analysis.framework import framework_factors
        return list(framework_factors([*self.runs, *self.verdict_runs], equivalence))

    def target_tol(self) -> float | None:
        """``settings.target_tol``: the stopping rule's relative-suboptimality tolerance."""
        return self.settings.target_tol

    def fairness_issues(self) -> list[str]:
        """Why this table may compare unlike things
        (:func:`optcmp.analysis.stats.fairness.fairness_issues`)."""
        from optcmp.analysis.stats.fairness import comparison_issues
        return comparison_issues(self)

    def summary(self, *, as_frame: bool | None = None, confidence_level: float = 0.95,
                method: str = "order", n_resamples: int = 9999, seed: int = 0,
                warn: bool = True) -> Any:
        """Success rate, median time-to-target with its CI, counts to target and aRT
        per entry (:func:`optcmp.analysis.stats.summary.summary`).

        Parameters
        ----------
        as_frame : bool, optional
            None: a DataFrame when pandas is installed.
        confidence_level, method, n_resamples, seed, warn
            As in :func:`optcmp.analysis.stats.summary.summarize`.

        Returns
        -------
        pandas.DataFrame or list of dict
        """
        from optcmp.analysis.stats.summary import summary
        return summary(self, as_frame=as_frame, confidence_level=confidence_level,
                       method=method, n_resamples=n_resamples, seed=seed, warn=warn,
                       stacklevel=3)  # warnings point at the caller's line

    def summary_table(self, **kwargs: Any) -> str:
        """:meth:`summary` as fixed-width text with confidence intervals (kwargs passed on;
        :func:`optcmp.analysis.stats.summary.summary_table`)."""
        from optcmp.analysis.stats.summary import summary_table
        return summary_table(self, **{"stacklevel": 3, **kwargs})

    def compare_optimizers(self, a: str | dict[str, Any], b: str | dict[str, Any], *,
                           metric: str = "time", alpha: float = 0.05, warn: bool = True) -> Any:
        """Rank-sum test of two solvers' time-to-target
        (:func:`optcmp.analysis.stats.tests.compare_optimizers`).

        Parameters
        ----------
        a, b : str or dict
            An optimizer label, or criteria for :meth:`select`.
        metric, alpha, warn
            As in :func:`optcmp.analysis.stats.tests.compare_pair`.

        Returns
        -------
        optcmp.analysis.stats.tests.PairwiseComparison
        """
        from optcmp.analysis.stats.tests import compare_optimizers
        return compare_optimizers(self, a, b, metric=metric, alpha=alpha, warn=warn,
                                  stacklevel=3)

    def performance_profile(self, **kwargs: Any) -> Any:
        """Dolan-More performance profile
        (:func:`optcmp.analysis.stats.profiles.performance_profile`)."""
        from optcmp.analysis.stats.profiles import performance_profile
        return performance_profile(self, **kwargs)

    def data_profile(self, **kwargs: Any) -> Any:
        """More-Wild data profile in gradient evaluations
        (:func:`optcmp.analysis.stats.profiles.data_profile`)."""
        from optcmp.analysis.stats.profiles import data_profile
        return data_profile(self, **kwargs)

    def runtime_ecdf(self, **kwargs: Any) -> Any:
        """COCO-style runtime ECDF over tolerances
        (:func:`optcmp.analysis.stats.profiles.runtime_ecdf`)."""
        from optcmp.analysis.stats.profiles import runtime_ecdf
        return runtime_ecdf(self, **kwargs)

    def plot(self, kind: str = "convergence", **kwargs: Any) -> Any:
        """A matplotlib Figure (:func:`optcmp.analysis.plots.plot`; needs ``optcmp[plot]``).

        Parameters
        ----------
        kind : {"convergence", "time_to_target", "performance_profile", "data_profile", "ecdf"}
        **kwargs
            Passed to the plot function.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from optcmp.analysis.plots import plot
        return plot(self, kind, **kwargs)

    def save_plots(self, directory: str | os.PathLike[str], *,
                   formats: Sequence[str] = ("png",), kinds: Sequence[str] | None = None,
                   prefix: str | None = None) -> list[str]:
        """Write the standard plots to ``directory`` (:func:`optcmp.analysis.plots.save_plots`)."""
        from optcmp.analysis.plots import save_plots
        return save_plots(self, directory, formats=formats, kinds=kinds, prefix=prefix)

    def to_html(self, path: str | os.PathLike[str] | None = None, **kwargs: Any) -> str:
        """A self-contained offline HTML report (:func:`optcmp.analysis.report.to_html`)."""
        from optcmp.analysis.report import to_html
        return to_html(self, path, **kwargs)

    def to_csv(self, path: str | os.PathLike[str], *, kind: str = "traces") -> int:
        """Long-format CSV of the traces or runs; the row count
        (:func:`optcmp.analysis.export.to_csv`)."""
        from optcmp.analysis.export import to_csv
        return to_csv(self, path, kind=kind)

    def to_parquet(self, path: str | os.PathLike[str], *, kind: str = "traces") -> int:
        """Like :meth:`to_csv` in Parquet (needs pyarrow: ``optcmp[parquet]``)."""
        from optcmp.analysis.export import to_parquet
        return to_parquet(self, path, kind=kind)


__all__ = ["Comparison"]
