"""Results: :class:`Trace`, :class:`RunResult` (scipy's field names) and :class:`Comparison`.

The classes hold data: their dict/JSON round trip, :meth:`Comparison.save` and
:meth:`Comparison.load` (a JSON file or a run store) live here. Each analysis method of
:class:`Comparison` delegates to a function of its own module, imported when called:
:mod:`optcmp.tables` (``table``, ``rows``, ``to_frame``), :mod:`optcmp.stats` (summaries,
tests, profiles, fairness checks), :mod:`optcmp.plot`, :mod:`optcmp.report` and
:mod:`optcmp.export`. None of those imports this module at run time.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

# Leaf helpers only at module level; check_output_path, write_text_atomic and
# environment were defined here and stay importable from here.
from optcmp._io import check_output_path, json_kind, jsonable, write_text_atomic  # noqa: F401
from optcmp._storefile import STORE_FORMAT, StoreError, check_store_version, read_store
from optcmp.environment import environment  # noqa: F401

#: Every status a run can end with.
STATUSES = ("converged", "max_iter", "timeout", "max_evals", "diverged", "stalled", "stopped",
            "failed", "skipped", "projected")

#: Version of the JSON layout written by :meth:`Comparison.save`.
FORMAT_VERSION = 1


@dataclass
class Trace:
    """Observations of one run, one row per observed iterate.

    Attributes
    ----------
    iteration : ndarray of int64, shape (m,)
        Index of the observed iterate.
    time : ndarray of float64, shape (m,)
        Timed seconds when its objective value was known.
    fun : ndarray of float64, shape (m,)
        Full objective at that iterate (working precision of the backend; row 0 in float64).
    grad_norm : ndarray of float64, shape (m,)
        2-norm of the gradient there (NaN where not computed).
    nfev, njev : ndarray of int64, shape (m,)
        Evaluations spent by then.
    """

    iteration: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fun: np.ndarray = field(default_factory=lambda: np.zeros(0))
    grad_norm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    nfev: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    njev: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    COLUMNS = ("iteration", "time", "fun", "grad_norm", "nfev", "njev")

    def __len__(self) -> int:
        return int(self.iteration.shape[0])

    def relative_suboptimality(self, f0: float, fstar: float | None) -> np.ndarray:
        """``(fun - f*) / (f0 - f*)`` per row (NaN without a known optimum)."""
        if fstar is None:
            return np.full(len(self), np.nan)
        gap0 = f0 - fstar
        return (self.fun - fstar) / gap0 if gap0 > 0 else np.full(len(self), np.nan)

    def to_dict(self) -> dict[str, list[Any]]:
        """Columns as lists (NaN kept)."""
        return {c: getattr(self, c).tolist() for c in self.COLUMNS}

    @classmethod
    def from_dict(cls, d: dict[str, list[Any]]) -> Trace:
        """Inverse of :meth:`to_dict`."""
        ints = {"iteration", "nfev", "njev"}
        return cls(**{c: np.asarray(d.get(c, []), dtype=np.int64 if c in ints else np.float64)
                      for c in cls.COLUMNS})


@dataclass
class RunResult:
    """The outcome of one run (one optimizer on one backend with one seed).

    Field names follow :class:`scipy.optimize.OptimizeResult` where they exist.

    Attributes
    ----------
    x : ndarray of float64, shape (n_params,)
        Final iterate.
    fun : float
        Objective at ``x``, re-evaluated in numpy float64 off the clock.
    success : bool
        Whether the target was reached.
    status : str
        One of :data:`STATUSES`.
    message : str
        Why the run stopped (and the error for ``failed`` runs).
    nit, nfev, njev : int
        Iterations, function and gradient evaluations spent in total.
    time : float
        Timed seconds (optimizer steps only).
    time_to_target : float or None
        Timed seconds until an objective value meeting the target was known.
    nit_to_target, nfev_to_target, njev_to_target : int or None
        Iterate index and evaluations at that moment.
    warmup_time : float
        Wall seconds of untimed warm-up (tracing, compilation, first call).
    setup_time : float
        Wall seconds of data placement and setup (untimed).
    wall_time : float
        Wall seconds of the whole run, monitoring included.
    f0 : float
        Objective at the initial point (float64).
    fstar : float or None
        Known optimum ``f*``.
    problem, optimizer, label, impl, implementation, backend, device, dtype : str
        What ran.
    hyperparameters : dict
        Every hyperparameter as used (``"auto"`` values resolved).
    seed, repeat : int
        The run's seed and repetition index.
    problem_spec : dict
        The spec of the problem instance the run used (its data seed or data fingerprint);
        it differs between repetitions only with ``compare(redraw_data=True)``.
    threads : int or None
        CPU threads of the backend's compute pool during the run (BLAS for numpy).
    host : str
        Host name of the machine that ran it.
    concurrency : int
        Most optcmp runs active on that host at once while this run ran (itself included);
        1 for the default sequential execution.
    shared_host : bool
        ``concurrency > 1``: other runs competed for the host's CPU and memory bandwidth, so the
        timings are not comparable with sequential ones.
    started_at, finished_at : float or None
        Wall-clock (Unix, seconds) start and end of the run on its host.
    cpu_time : float or None
        Process CPU seconds over the timed steps (:attr:`time` is their wall time).
    cpu_time_to_target : float or None
        Process CPU seconds until the target was known: a second figure next to
        ``time_to_target`` that other work on the host does not inflate.
    load_start, load_end : float or None
        The host's 1-minute load average when the run started and ended.
    contended : bool
        The timed wall time exceeds the CPU time by more than
        :data:`optcmp.timing.CONTENTION_MARGIN` (other work took the CPU; see
        :func:`optcmp.timing.contended`): its times are not comparable with quiet runs.
    projected_time_to_target, projected_nit_to_target : float, int or None
        For a run stopped as ``projected`` (or any run that missed the target and showed a
        linear rate): the time and iterations its observed rate projects to reach the target.
        A projection, never a measured result.
    compiled : str
        How the timed step was compiled (issue 11, field case FC-27): ``"xla"`` (TensorFlow
        ``tf.function(jit_compile=True)``), ``"tf.function"`` (a graph without XLA),
        ``"torch.compile"``, ``"eager"`` (framework operations one by one) or ``"numpy"`` (no
        compiler: numpy's compiled kernels called from Python); ``""`` when the run never started.
    layout : str
        Memory layout the backend chose for the training data at placement: ``"row-major"`` or
        ``"column-major"`` (numpy's BLAS on full-batch steps).
    execution : str
        How the timed steps were driven: ``"step"`` (one framework call per step, the harness
        in between) or ``"fused"`` (the steps between two observations in one call: one
        compiled loop on TensorFlow, one Python loop with no harness work in between on numpy
        and PyTorch). A run asked for ``"fused"`` or ``"auto"`` whose stopping rule or callback
        needs every iterate falls back to ``"step"``; :attr:`message` then says why.
    compiles_in_timed : int or None
        Compilations and traces (TensorFlow tracing and XLA compilations for a new shape,
        ``torch.compile`` graphs) that happened inside the timed region; any other value than
        0 means compile time is part of :attr:`time` and a warning was emitted. ``None``: not
        counted (the run never started).
    gradient : str
        The gradient the timed steps computed (issue 11b, ``RunConfig.gradient``):
        ``"analytic"`` (numpy's, or the problem's gradient written against ops on torch and
        TensorFlow) or ``"autodiff"`` (the framework's autodiff); ``""`` when the run never
        started.
    """

    problem: str
    optimizer: str
    label: str
    backend: str
    device: str = "cpu"
    dtype: str = "float64"
    impl: str = ""
    implementation: str = ""
    framework_version: str = ""
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    repeat: int = 0
    x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fun: float = math.nan
    success: bool = False
    status: str = "failed"
    message: str = ""
    nit: int = 0
    nfev: int = 0
    njev: int = 0
    epochs: float | None = None
    time: float = 0.0
    time_to_target: float | None = None
    nit_to_target: int | None = None
    nfev_to_target: int | None = None
    njev_to_target: int | None = None
    warmup_time: float = 0.0
    setup_time: float = 0.0
    wall_time: float = 0.0
    f0: float = math.nan
    fstar: float | None = None
    target: str = ""
    reduction: str = "mean"
    n_params: int = 0
    n_samples: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    threads: int | None = None
    host: str = ""
    concurrency: int = 1
    shared_host: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    trace: Trace = field(default_factory=Trace)
    problem_spec: dict[str, Any] = field(default_factory=dict)
    # issue 12: CPU time, load, contention, projections
    cpu_time: float | None = None
    cpu_time_to_target: float | None = None
    load_start: float | None = None
    load_end: float | None = None
    contended: bool = False
    projected_time_to_target: float | None = None
    projected_nit_to_target: int | None = None
    # issue 11: how the step executed
    compiled: str = ""
    layout: str = ""
    execution: str = ""
    compiles_in_timed: int | None = None
    # issue 11b: which gradient the timed steps computed
    gradient: str = ""

    @property
    def relative_suboptimality(self) -> float | None:
        """Final ``(fun - f*) / (f0 - f*)`` in float64, or None without a known optimum."""
        if self.fstar is None:
            return None
        if not math.isfinite(self.fun):
            return math.inf
        gap0 = self.f0 - self.fstar
        # f* itself is a rounded float64 solve: a final value below it is rounding, shown as 0
        return max((self.fun - self.fstar) / gap0, 0.0) if gap0 > 0 else 0.0

    def replace(self, **changes: Any) -> RunResult:
        """A copy with some fields changed; the result itself is never changed.

        Parameters
        ----------
        **changes
            Field values by name, e.g. ``label="gd (tuned)", repeat=2``.

        Returns
        -------
        RunResult
        """
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable dict (lossless: floats keep all digits, arrays become lists)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "x":
                v = np.asarray(v, dtype=np.float64).tolist()
            elif f.name == "trace":
                v = v.to_dict()
            out[f.name] = jsonable(v)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunResult:
        """Inverse of :meth:`to_dict` (types checked, so a hand-edited file fails here).

        Raises
        ------
        ValueError
            A field of the wrong type or an unknown status; the message names the field.
        """
        kw = dict(d)
        try:
            kw["x"] = np.asarray(kw.get("x", []), dtype=np.float64)
            kw["trace"] = Trace.from_dict(kw.get("trace", {}))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"run field 'x' or 'trace' is malformed: {exc}") from None
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in kw.items() if k in names}
        for name, kind in _FIELD_TYPES.items():
            if name in kw:
                kw[name] = _coerce(name, kw[name], kind)
        if "status" in kw and kw["status"] not in STATUSES:
            raise ValueError(f"run field 'status' must be one of {STATUSES}, got {kw['status']!r}")
        for name in ("time", "time_to_target", "warmup_time", "setup_time", "wall_time"):
            v = kw.get(name)
            if v is not None and v < 0:
                raise ValueError(f"run field {name!r} must be >= 0 seconds, got {v!r}")
        return cls(**kw)

    def __repr__(self) -> str:
        ttt = "-" if self.time_to_target is None else f"{self.time_to_target:.4g}s"
        return (f"RunResult({self.label} on {self.backend}/{self.device}/{self.dtype}, "
                f"status={self.status!r}, time_to_target={ttt}, nit={self.nit}, fun={self.fun:.6g})")


#: Field -> (python type, optional) for RunResult.from_dict's checks.
_FIELD_TYPES: dict[str, tuple[type, bool]] = {
    **{n: (int, False) for n in ("nit", "nfev", "njev", "seed", "repeat", "n_params",
                                 "n_samples", "concurrency")},
    **{n: (int, True) for n in ("nit_to_target", "nfev_to_target", "njev_to_target",
                                "threads", "projected_nit_to_target", "compiles_in_timed")},
    **{n: (float, False) for n in ("fun", "time", "warmup_time", "setup_time", "wall_time",
                                   "f0")},
    **{n: (float, True) for n in ("time_to_target", "fstar", "epochs", "started_at",
                                  "finished_at", "cpu_time", "cpu_time_to_target",
                                  "load_start", "load_end", "projected_time_to_target")},
    **{n: (str, False) for n in ("problem", "optimizer", "label", "backend", "device", "dtype",
                                 "impl", "implementation", "framework_version", "status",
                                 "message", "target", "reduction", "host", "compiled",
                                 "layout", "execution", "gradient")},
    **{n: (bool, False) for n in ("success", "shared_host", "contended")},
    **{n: (dict, False) for n in ("hyperparameters", "metrics", "problem_spec")},
}


def _coerce(name: str, v: Any, kind: tuple[type, bool]) -> Any:
    typ, optional = kind
    if v is None:
        if optional:
            return None
        if typ is float:  # JSON has no NaN literal in strict readers; None stands for it
            return math.nan
        raise ValueError(f"run field {name!r} must be {typ.__name__}, got null")
    if typ is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"run field {name!r} must be a number, got {v!r}")
        return float(v)
    if typ is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"run field {name!r} must be an integer, got {v!r}")
        return int(v)
    if not isinstance(v, typ):
        raise ValueError(f"run field {name!r} must be {typ.__name__}, got {v!r}")
    return v


class Comparison:
    """A table of runs: the result of :func:`optcmp.compare`.

    Parameters
    ----------
    runs : sequence of RunResult
    problem : dict, optional
        The problem's spec.
    optimum : dict, optional
        ``{"fun", "method", "time"}`` of the known optimum (the direct-solve floor).
    settings : dict, optional
        Stopping rule, budgets, seeds.
    environment : dict, optional
        Versions and hardware (see :func:`optcmp.environment.environment`).
    verdict_runs : sequence of RunResult, optional
        Runs behind the verdict beyond the table's: more repetitions of the two fastest entries
        (:func:`optcmp.sweep.confirm_leaders`); not rows of the table.
    """

    def __init__(self, runs: Sequence[RunResult], problem: dict[str, Any] | None = None,
                 optimum: dict[str, Any] | None = None, settings: dict[str, Any] | None = None,
                 environment: dict[str, Any] | None = None, *,  # noqa: F811
                 verdict_runs: Sequence[RunResult] = ()) -> None:
        self.runs = list(runs)
        self.problem = dict(problem or {})
        self.optimum = dict(optimum) if optimum else None
        self.settings = dict(settings or {})
        self.environment = dict(environment or {})
        self.verdict_runs = list(verdict_runs)

    def replace(self, **changes: Any) -> Comparison:
        """A copy with some parts changed (``runs``, ``problem``, ``optimum``, ``settings``,
        ``environment``, ``verdict_runs``); this comparison is not changed.

        Returns
        -------
        Comparison
            Of the same class as this one.
        """
        parts: dict[str, Any] = {
            "runs": self.runs, "problem": self.problem, "optimum": self.optimum,
            "settings": self.settings, "environment": self.environment,
            "verdict_runs": self.verdict_runs}
        unknown = sorted(set(changes) - set(parts))
        if unknown:
            raise TypeError(f"Comparison.replace() got unknown part(s) {unknown}; the parts are "
                            f"{sorted(parts)}")
        parts.update(changes)
        vr = parts.pop("verdict_runs")
        return type(self)(**parts, verdict_runs=vr)

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[RunResult]:
        return iter(self.runs)

    def __getitem__(self, i: int) -> RunResult:
        return self.runs[i]

    def __repr__(self) -> str:
        suite = self.settings.get("suite")
        if isinstance(suite, dict) and "name" in suite:  # QA: a suite's comparison said "on ?"
            return (f"Comparison({len(self.runs)} runs on suite {suite['name']!r}, "
                    f"{len(suite.get('problems', []))} problems)")
        return f"Comparison({len(self.runs)} runs on {self.problem.get('problem', '?')})"

    def select(self, **criteria: Any) -> list[RunResult]:
        """Runs whose attributes equal every given value, e.g. ``select(backend="torch")``."""
        return [r for r in self.runs if all(getattr(r, k) == v for k, v in criteria.items())]

    def best(self) -> RunResult | None:
        """The converged run with the smallest time-to-target, or None."""
        ok = [r for r in self.runs if r.time_to_target is not None]
        return min(ok, key=lambda r: r.time_to_target or 0.0) if ok else None

    # ------------------------------------------------------------------ tables
    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per run (no trace or iterate): the table's data
        (:func:`optcmp.tables.rows`)."""
        from optcmp.tables import rows

        return rows(self)

    def to_frame(self) -> Any:
        """A pandas DataFrame with one row per run (:func:`optcmp.tables.to_frame`).

        Raises
        ------
        ImportError
            pandas is not installed (``pip install 'optcmp[pandas]'``).
        """
        from optcmp.tables import to_frame

        return to_frame(self)

    def table(self) -> str:
        """A readable fixed-width table sorted by time-to-target (:func:`optcmp.tables.table`).

        Runs that reached the target come first (fastest first), then the runs that stopped
        on a budget, divergence or callback (by timed seconds), then failed and skipped runs.

        For problems with a closed form, the direct solve time is shown as a floor row.
        """
        from optcmp.tables import table

        return table(self)

    def __str__(self) -> str:
        return self.table()

    def verdict(self) -> str:
        """Who reaches the target first, by what factor, how sure (:func:`optcmp.tables.verdict`).

        Returns
        -------
        str
            One line beginning ``"verdict: "``.
        """
        from optcmp.tables import verdict

        return verdict(self)

    # ------------------------------------------------------------------ statistics
    @classmethod
    def concat(cls, comparisons: Sequence[Comparison]) -> Comparison:
        """One comparison holding the runs of several (e.g. several problems, for profiles).

        The problem, optimum and settings are kept when every comparison agrees on them, and
        emptied otherwise (each run keeps its own ``problem_spec``).

        Raises
        ------
        ValueError
            ``comparisons`` is empty.
        """
        comps = list(comparisons)
        if not comps:
            raise ValueError("concat needs at least one Comparison")

        def same(attr: str) -> Any:
            vals = [getattr(c, attr) for c in comps]
            return vals[0] if all(v == vals[0] for v in vals) else None

        runs = [r for c in comps for r in c.runs]
        settings = same("settings")
        if settings is None:
            settings = {"merged": [c.settings for c in comps]}
        return cls(runs, same("problem"), same("optimum"), settings, comps[0].environment)

    def target_tol(self) -> float | None:
        """The relative-suboptimality tolerance of the stopping rule, if it has one."""
        rules = self.settings.get("stopping", {})
        leaves = rules.get("rules", [rules]) if isinstance(rules, dict) else []
        for leaf in leaves:
            if isinstance(leaf, dict) and leaf.get("rule") == "RelativeSuboptimality":
                return float(leaf["tol"])
        return None

    def _timer_resolution(self) -> float | None:
        v = self.environment.get("timer_resolution")
        return float(v) if isinstance(v, (int, float)) and v > 0 else None

    def fairness_issues(self) -> list[str]:
        """Why this table may compare unlike things (see :func:`optcmp.stats.fairness_issues`)."""
        from optcmp.stats import fairness_issues

        return fairness_issues(self.runs, timer_resolution=self._timer_resolution())

    def summary(self, *, as_frame: bool | None = None, confidence_level: float = 0.95,
                method: str = "percentile", n_resamples: int = 9999, seed: int = 0,
                warn: bool = True) -> Any:
        """Per (problem, optimizer, backend, device, dtype): success rate, median
        time-to-target with a bootstrap CI, median iterations/nfev/njev to target, aRT.

        See :func:`optcmp.stats.summarize` for the columns and the treatment of runs that
        missed the target (censored, never averaged); computed by :func:`optcmp.stats.summary`.

        Parameters
        ----------
        as_frame : bool, optional
            True: a pandas DataFrame (ImportError without pandas); False: a list of dicts;
            None (default): a DataFrame when pandas is installed, else a list of dicts.
        confidence_level, method, n_resamples, seed, warn
            As in :func:`optcmp.stats.summarize`.

        Returns
        -------
        pandas.DataFrame or list of dict
        """
        from optcmp.stats import summary

        return summary(self, as_frame=as_frame, confidence_level=confidence_level,
                       method=method, n_resamples=n_resamples, seed=seed, warn=warn)

    def summary_table(self, **kwargs: Any) -> str:
        """:meth:`summary` as fixed-width text with confidence intervals (kwargs passed on;
        :func:`optcmp.stats.summary_table`)."""
        from optcmp.stats import summary_table

        return summary_table(self, **kwargs)

    def compare_optimizers(self, a: str | dict[str, Any], b: str | dict[str, Any], *,
                           metric: str = "time", alpha: float = 0.05, warn: bool = True) -> Any:
        """Rank-sum test of two solvers' time-to-target (:func:`optcmp.stats.compare_pair`,
        through :func:`optcmp.stats.compare_optimizers`).

        Parameters
        ----------
        a, b : str or dict
            An optimizer label, or criteria for :meth:`select` (e.g.
            ``{"label": "gd", "backend": "torch"}``).
        metric, alpha, warn
            As in :func:`optcmp.stats.compare_pair`.

        Returns
        -------
        optcmp.stats.PairwiseComparison

        Raises
        ------
        ValueError
            A side selects no run.
        """
        from optcmp.stats import compare_optimizers

        return compare_optimizers(self, a, b, metric=metric, alpha=alpha, warn=warn)

    def performance_profile(self, **kwargs: Any) -> Any:
        """Dolan-More performance profile (:func:`optcmp.stats.performance_profile`)."""
        from optcmp.stats import performance_profile

        return performance_profile(self.runs, **kwargs)

    def data_profile(self, **kwargs: Any) -> Any:
        """More-Wild data profile in gradient evaluations (:func:`optcmp.stats.data_profile`)."""
        from optcmp.stats import data_profile

        return data_profile(self.runs, **kwargs)

    def runtime_ecdf(self, **kwargs: Any) -> Any:
        """COCO-style runtime ECDF over tolerances (:func:`optcmp.stats.runtime_ecdf`)."""
        from optcmp.stats import runtime_ecdf

        return runtime_ecdf(self.runs, **kwargs)

    # ------------------------------------------------------------------ plots and reports
    def plot(self, kind: str = "convergence", **kwargs: Any) -> Any:
        """A matplotlib Figure (:func:`optcmp.plot.plot`; needs ``optcmp[plot]``).

        Parameters
        ----------
        kind : {"convergence", "time_to_target", "performance_profile", "data_profile", "ecdf"}
        **kwargs
            Passed to the plot function (e.g. ``x="njev"`` for convergence).

        Returns
        -------
        matplotlib.figure.Figure
        """
        from optcmp.plot import plot

        return plot(self, kind, **kwargs)

    def save_plots(self, directory: str | os.PathLike[str], *,
                   formats: Sequence[str] = ("png",), kinds: Sequence[str] | None = None,
                   prefix: str | None = None) -> list[str]:
        """Write the standard plots to ``directory`` (:func:`optcmp.plot.save_plots`)."""
        from optcmp.plot import save_plots

        return save_plots(self, directory, formats=formats, kinds=kinds, prefix=prefix)

    def to_html(self, path: str | os.PathLike[str] | None = None, **kwargs: Any) -> str:
        """A self-contained offline HTML report (:func:`optcmp.report.to_html`); returns it."""
        from optcmp.report import to_html

        return to_html(self, path, **kwargs)

    def to_csv(self, path: str | os.PathLike[str], *, kind: str = "traces") -> int:
        """Long-format CSV: one row per trace point (``kind="traces"``) or per run
        (``kind="runs"``), with run identifiers; returns the row count
        (:func:`optcmp.export.to_csv`)."""
        from optcmp.export import to_csv

        return to_csv(self, path, kind=kind)

    def to_parquet(self, path: str | os.PathLike[str], *, kind: str = "traces") -> int:
        """Like :meth:`to_csv` in Parquet (needs pyarrow: ``optcmp[parquet]``)."""
        from optcmp.export import to_parquet

        return to_parquet(self, path, kind=kind)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable dict of everything, traces included."""
        out = {
            "format": "optcmp.Comparison", "format_version": FORMAT_VERSION,
            "problem": jsonable(self.problem), "optimum": jsonable(self.optimum),
            "settings": jsonable(self.settings), "environment": jsonable(self.environment),
            "runs": [r.to_dict() for r in self.runs],
        }
        if self.verdict_runs:
            out["verdict_runs"] = [r.to_dict() for r in self.verdict_runs]
        return out

    @classmethod
    def from_dict(cls, d: Any) -> Comparison:
        """Inverse of :meth:`to_dict`.

        Raises
        ------
        ValueError
            Not an optcmp comparison (any JSON value other than an object with
            ``"format": "optcmp.Comparison"``, or malformed runs), or a newer format version.
        """
        if not isinstance(d, dict):
            raise ValueError(f"not an optcmp comparison: expected a JSON object with format "
                             f"'optcmp.Comparison', got a JSON {json_kind(d)}")
        if d.get("format") != "optcmp.Comparison":
            raise ValueError("not an optcmp comparison (missing format 'optcmp.Comparison')")
        try:
            version = int(d.get("format_version", 0))
        except (TypeError, ValueError):
            raise ValueError(f"not an optcmp comparison: format_version "
                             f"{d.get('format_version')!r} is not an integer") from None
        if version > FORMAT_VERSION:
            raise ValueError(f"comparison format version {d.get('format_version')} is newer than "
                             f"this optcmp reads ({FORMAT_VERSION}); upgrade optcmp")
        runs = d.get("runs", [])
        extra = d.get("verdict_runs", [])
        for key, value in (("runs", runs), ("verdict_runs", extra)):
            if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
                raise ValueError(f"not an optcmp comparison: {key!r} must be a list of JSON "
                                 "objects")
        for key in ("problem", "optimum", "settings", "environment"):
            if d.get(key) is not None and not isinstance(d.get(key), dict):
                raise ValueError(f"not an optcmp comparison: {key!r} must be a JSON object, got "
                                 f"a JSON {json_kind(d.get(key))}")
        try:
            results = [RunResult.from_dict(r) for r in runs]
            confirm = [RunResult.from_dict(r) for r in extra]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not an optcmp comparison: a run is malformed ({exc})") from None
        return cls(results, d.get("problem"), d.get("optimum"), d.get("settings"),
                   d.get("environment"), verdict_runs=confirm)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the comparison as JSON (lossless, traces included; NaN/inf kept).

        The file is written next to ``path`` under a temporary name and then renamed, so a
        crash never leaves a half-written file; the temporary file is removed on any error.

        Parameters
        ----------
        path : str or path-like
            The JSON file to write (replaced if it exists).

        Raises
        ------
        IsADirectoryError
            ``path`` is a directory.
        FileNotFoundError
            The directory of ``path`` does not exist.
        """
        write_text_atomic(path, json.dumps(self.to_dict(), allow_nan=True), what="comparison")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Comparison:
        """Read a comparison written by :meth:`save`, or a run store (``.jsonl``).

        The format is detected from the first line: a run store written by
        ``compare(..., store=path)`` starts with an ``optcmp.store`` header record (see
        :mod:`optcmp.store`); anything else is read as one JSON document.

        Raises
        ------
        FileNotFoundError
        IsADirectoryError
            ``path`` is a directory.
        ValueError
            Not UTF-8, not valid JSON, not an optcmp comparison or store (the message starts
            with the path), or a newer format version.
        """
        with open(path, "rb") as fh:
            first = fh.readline()
        try:
            head = json.loads(first)
        except (json.JSONDecodeError, UnicodeDecodeError):
            head = None
        if isinstance(head, dict) and head.get("format") == STORE_FORMAT:
            return Comparison._from_store(path)
        with open(path, "rb") as fh:
            raw = fh.read()
        try:
            d = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ValueError(f"{os.fspath(path)}: not an optcmp comparison (not UTF-8 text: "
                             f"byte 0x{raw[exc.start]:02x} at position {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{os.fspath(path)}: not valid JSON ({exc})") from None
        try:
            return cls.from_dict(d)
        except ValueError as exc:
            raise ValueError(f"{os.fspath(path)}: {exc}") from None

    @staticmethod
    def _from_store(path: str | os.PathLike[str], *, stacklevel: int = 3) -> Comparison:
        """A run store as a Comparison (:func:`optcmp.store.load_store` documents it).

        Warnings about skipped lines are attributed ``stacklevel`` frames up from the store
        reader (3: the caller of this function).
        """
        p = os.fspath(path)
        c = read_store(p, RunResult.from_dict, stacklevel=stacklevel)
        if c.header is None:
            raise StoreError(f"{p} is empty: no store header")
        check_store_version(p, c.header)
        last = c.sessions[-1] if c.sessions else {}
        settings = dict(last.get("settings") or {})
        settings["store"] = {"path": os.path.abspath(p), "runs": len(c.runs),
                             "sessions": len(c.sessions)}
        return Comparison(list(c.runs.values()), problem=c.header.get("problem"),
                          optimum=last.get("optimum"), settings=settings,
                          environment=last.get("environment"))
