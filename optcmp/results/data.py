"""The runs of a comparison as data: :class:`ComparisonData` (selection, per-problem views,
saving and loading); :class:`optcmp.Comparison` adds the analyses."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from typing_extensions import Self

from optcmp._io import jsonable, write_text_atomic
from optcmp.results.io import (
    FORMAT,
    FORMAT_VERSION,
    comparison_parts,
    is_store,
    read_json,
    store_parts,
)
from optcmp.results.run import RunResult
from optcmp.results.settings import Settings

#: The parts of a comparison (the arguments of :meth:`ComparisonData.replace`).
COMPARISON_PARTS = ("runs", "problem", "optimum", "settings", "environment", "verdict_runs",
                    "shared_host_warned")

#: What the analyses of :class:`optcmp.Comparison` are, for the message a data object gives.
ANALYSES = frozenset({
    "table", "rows", "to_frame", "verdict", "summary", "summary_table", "compare_optimizers",
    "fairness_issues", "performance_profile", "data_profile", "runtime_ecdf", "plot",
    "save_plots", "to_html", "to_csv", "to_parquet", "target_tol"})


class ComparisonData:
    """The runs of a comparison with what they ran on, as data (no analysis), never changed
    (:meth:`replace` returns a changed copy).

    Parameters
    ----------
    runs : sequence of RunResult
    problem : dict, optional
        The problem's spec.
    optimum : dict, optional
        ``{"fun", "method", "time", "kind"}`` of the known optimum (the direct-solve floor).
    settings : dict or Settings, optional
    environment : dict, optional
    verdict_runs : sequence of RunResult, optional
        Repetitions of the two fastest entries behind the verdict; not rows of the table.
    shared_host_warned : bool, default False
        The sweep warned already that runs shared their host (not saved).
    """

    runs: list[RunResult]
    problem: dict[str, Any]
    optimum: dict[str, Any] | None
    settings: Settings
    environment: dict[str, Any]
    verdict_runs: list[RunResult]
    shared_host_warned: bool

    def __init__(self, runs: Sequence[RunResult], problem: Mapping[str, Any] | None = None,
                 optimum: Mapping[str, Any] | None = None,
                 settings: Mapping[str, Any] | None = None,
                 environment: Mapping[str, Any] | None = None, *,
                 verdict_runs: Sequence[RunResult] = (), shared_host_warned: bool = False) -> None:
        for what, given in (("runs", runs), ("verdict_runs", verdict_runs)):
            bad = next(((i, r) for i, r in enumerate(given) if not isinstance(r, RunResult)),
                       None) if not isinstance(given, (str, bytes)) else (0, given)
            if bad is not None:
                raise TypeError(f"a comparison's {what} must be RunResults, got "
                                f"{type(bad[1]).__name__} at position {bad[0]}")
        if not isinstance(shared_host_warned, bool):
            raise TypeError(f"shared_host_warned must be True or False, got "
                            f"{shared_host_warned!r}")
        parts = {"runs": list(runs), "problem": dict(problem or {}),
                 "optimum": dict(optimum) if optimum else None,
                 "settings": Settings.from_dict(settings),
                 "environment": dict(environment or {}), "verdict_runs": list(verdict_runs),
                 "shared_host_warned": bool(shared_host_warned)}
        for name, value in parts.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a comparison is not changed after it is built; "
                             f"comp.replace({name}=...) returns a changed copy")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a comparison is not changed after it is built")

    def __getattr__(self, name: str) -> Any:
        if name in ANALYSES:
            raise AttributeError(
                f"{type(self).__name__} holds the data only; {name}() is a method of "
                f"optcmp.Comparison (from optcmp.comparison import Comparison; "
                f"Comparison.load(path) or Comparison.of(data)), or a function of "
                f"optcmp.analysis")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def parts(self) -> dict[str, Any]:
        """The parts of this comparison by name (the keywords of :meth:`replace`)."""
        return {name: getattr(self, name) for name in COMPARISON_PARTS}

    def replace(self, **changes: Any) -> Self:
        """A copy with some parts changed; this comparison is not changed.

        Parameters
        ----------
        **changes
            Parts by name (:data:`COMPARISON_PARTS`).

        Returns
        -------
        ComparisonData
        """
        unknown = sorted(set(changes) - set(COMPARISON_PARTS))
        if unknown:
            raise TypeError(f"{type(self).__name__}.replace() got unknown part(s) {unknown}; "
                            f"the parts are {sorted(COMPARISON_PARTS)}")
        return self.of({**self.parts(), **changes})

    @classmethod
    def of(cls, data: ComparisonData | Mapping[str, Any]) -> Self:
        """A comparison of this class holding the parts of another (or of a dict of parts).

        Parameters
        ----------
        data : ComparisonData or mapping

        Returns
        -------
        ComparisonData
        """
        if not isinstance(data, (ComparisonData, Mapping)):
            raise TypeError(f"Comparison.of() takes a comparison or a dict of its parts, got "
                            f"{type(data).__name__}")
        parts = dict(data.parts() if isinstance(data, ComparisonData) else data)
        runs = parts.pop("runs", [])
        return cls(runs, **parts)

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[RunResult]:
        return iter(self.runs)

    def __getitem__(self, i: int) -> RunResult:
        return self.runs[i]

    def __repr__(self) -> str:
        suite = self.settings.suite
        if isinstance(suite, dict) and "name" in suite:
            return (f"{type(self).__name__}({len(self.runs)} runs on suite {suite['name']!r}, "
                    f"{len(suite.get('problems', []))} problems)")
        return f"{type(self).__name__}({len(self.runs)} runs on {self.problem.get('problem', '?')})"

    def select(self, **criteria: Any) -> list[RunResult]:
        """Runs whose attributes equal every given value, e.g. ``select(backend="torch")``.

        Parameters
        ----------
        **criteria

        Returns
        -------
        list of RunResult
        """
        return [r for r in self.runs if all(getattr(r, k) == v for k, v in criteria.items())]

    def best(self) -> RunResult | None:
        """The converged run with the smallest time-to-target, or None."""
        ok = [r for r in self.runs if r.time_to_target is not None]
        return min(ok, key=lambda r: r.time_to_target or 0.0) if ok else None

    def problems(self) -> list[str]:
        """The problem names of the runs, in order of first appearance."""
        return list(dict.fromkeys(r.problem for r in self.runs))

    @property
    def problem_set(self) -> bool:
        """Whether this compares a set of problems (runs of several, no problem spec)."""
        return not self.problem and len(self.problems()) > 1

    def by_problem(self) -> dict[str, Self]:
        """One comparison per problem of the runs, in order of appearance (itself for one),
        with that problem's runs, spec and optimum.

        Returns
        -------
        dict of str to ComparisonData
        """
        names = self.problems()
        if len(names) <= 1:
            return {name: self for name in names}
        optima = self.settings.optima or {}
        out = {}
        for name in names:
            runs = [r for r in self.runs if r.problem == name]
            out[name] = self.replace(
                runs=runs, problem=runs[0].problem_spec, optimum=optima.get(name),
                settings=self.settings.drop("suite", "optima"),
                verdict_runs=[r for r in self.verdict_runs if r.problem == name])
        return out

    @property
    def timer_resolution(self) -> float | None:
        """Resolution in seconds of the clock the runs were timed with, if recorded."""
        v = self.environment.get("timer_resolution")
        return float(v) if isinstance(v, (int, float)) and v > 0 else None

    @classmethod
    def concat(cls, comparisons: Sequence[ComparisonData]) -> Self:
        """One comparison holding the runs of several; problem, optimum and settings kept where
        all agree (differing settings as ``settings["merged"]``).

        Parameters
        ----------
        comparisons : sequence of ComparisonData

        Returns
        -------
        ComparisonData
        """
        comps = list(comparisons)
        if not comps:
            raise ValueError("concat needs at least one Comparison")

        def same(attr: str) -> Any:
            vals = [getattr(c, attr) for c in comps]
            return vals[0] if all(v == vals[0] for v in vals) else None

        settings = same("settings")
        if settings is None:
            settings = {"merged": [c.settings.to_dict() for c in comps]}
        warned = all(c.shared_host_warned for c in comps
                     if any(r.conditions.shared_host for r in c.runs))
        return cls([r for c in comps for r in c.runs], same("problem"), same("optimum"),
                   settings, comps[0].environment,
                   verdict_runs=[r for c in comps for r in c.verdict_runs],
                   shared_host_warned=warned)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable dict of everything, traces included."""
        out = {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "problem": jsonable(self.problem), "optimum": jsonable(self.optimum),
            "settings": jsonable(self.settings.to_dict()),
            "environment": jsonable(self.environment),
            "runs": [r.to_dict() for r in self.runs],
        }
        if self.verdict_runs:
            out["verdict_runs"] = [r.to_dict() for r in self.verdict_runs]
        return out

    @classmethod
    def from_dict(cls, d: Any) -> Self:
        """Inverse of :meth:`to_dict` (``d``: a decoded JSON value).

        Parameters
        ----------
        d : Any

        Returns
        -------
        ComparisonData
        """
        parts = comparison_parts(d)
        try:
            return cls.of(parts)
        except ValueError as exc:  # the settings' types
            raise ValueError(f"not an optcmp comparison: {exc}") from None

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the comparison as JSON (lossless, traces included; NaN/inf kept), atomically.

        Parameters
        ----------
        path : str or path-like
        """
        write_text_atomic(path, json.dumps(self.to_dict(), allow_nan=True), what="comparison")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Read a comparison written by :meth:`save`, or a run store (:meth:`from_store`).

        Parameters
        ----------
        path : str or path-like

        Returns
        -------
        ComparisonData
        """
        if is_store(path):
            return cls.from_store(path, stacklevel=3)
        d = read_json(path)
        try:
            return cls.from_dict(d)
        except ValueError as exc:
            raise ValueError(f"{os.fspath(path)}: {exc}") from None

    @classmethod
    def from_store(cls, path: str | os.PathLike[str], *, stacklevel: int = 2) -> Self:
        """A run store read back as a comparison (:func:`optcmp.results.io.store_parts`).

        Parameters
        ----------
        path : str or path-like
        stacklevel : int, default 2
            Of warnings about skipped lines, as in ``warnings.warn`` from this method.

        Returns
        -------
        ComparisonData
        """
        return cls.of(store_parts(path, stacklevel=stacklevel))


def load_store(path: str | os.PathLike[str]) -> ComparisonData:
    """A run store read back as :class:`ComparisonData` (:meth:`ComparisonData.from_store`).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    ComparisonData
    """
    return ComparisonData.from_store(path, stacklevel=3)


__all__ = ["ANALYSES", "COMPARISON_PARTS", "ComparisonData", "load_store"]
