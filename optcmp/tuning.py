"""A fair tuning protocol: every configuration gets the same budget and the same target.

:func:`tune` runs each configuration of a grid to the target under one budget, ``repeats``
times (seeds ``seed, seed + 1, ...``), scores every run by its time-to-target (``by="time"``,
seconds) or its iterations-to-target (``by="iterations"``, deterministic), counts a run that does
not reach the target (budget exhausted, diverged, failed) as the full budget, and picks the
configuration with the smallest median score. The chosen settings come back as
:class:`~optcmp.optimizers.OptimizerSpec` objects that feed :func:`optcmp.compare` directly, and
the tuning cost (runs, timed and wall seconds) is reported, since a method that needs a large
grid to work is more expensive than its best run suggests.

Default grids
-------------
Log-spaced, two points per decade (values rounded to 3 significant digits):

============  ===================  ====================================
optimizer     hyperparameter       values
============  ===================  ====================================
gd            learning_rate        1e-4 ... 10 (11 values)
diag_newton   learning_rate        0.01 ... 10 (7 values)
adadelta      learning_rate        1e-3 ... 10 (9 values)
sgd           learning_rate        1e-5 ... 1 (11 values)
lbfgs         history_size         3, 5, 10, 20, 50
============  ===================  ====================================

``mode="defaults"`` skips the grid and runs each optimizer once per repetition with its
documented defaults (``optcmp list``), scored the same way: the baseline a tuned configuration
has to beat.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optcmp._io import write_text_atomic
from optcmp.comparison import Comparison
from optcmp.optimizers.base import (
    OptimizerSpec,
    as_spec,
    canonical_optimizer,
    get_optimizer,
)
from optcmp.problems.base import Problem
from optcmp.results import RunResult
from optcmp.stopping import Rule, default_stopping


def _log_grid(lo: int, hi: int, per_decade: int = 2) -> tuple[float, ...]:
    n = (hi - lo) * per_decade + 1
    return tuple(float(f"{v:.3g}") for v in np.logspace(lo, hi, n))


#: Default grid of each optimizer (see the module docstring).
DEFAULT_GRIDS: dict[str, dict[str, tuple[Any, ...]]] = {
    "gd": {"learning_rate": _log_grid(-4, 1)},
    "diag_newton": {"learning_rate": _log_grid(-2, 1)},
    "adadelta": {"learning_rate": _log_grid(-3, 1)},
    "sgd": {"learning_rate": _log_grid(-5, 0)},
    "lbfgs": {"history_size": (3, 5, 10, 20, 50)},
}

#: Default budget per scoring: timed seconds, or iterations.
DEFAULT_BUDGET = {"time": 10.0, "iterations": 10_000}

BY = ("time", "iterations")
MODES = ("grid", "defaults")


@dataclass
class ConfigScore:
    """The score of one configuration.

    Attributes
    ----------
    optimizer : str
        Canonical optimizer name.
    spec : OptimizerSpec
        The configuration (every hyperparameter).
    point : dict
        The grid values of this configuration (empty in ``"defaults"`` mode).
    scores : list of float
        One score per repetition: seconds (``by="time"``) or iterations (``by="iterations"``)
        to the target, the budget for a run that did not reach it.
    median : float
        Median of ``scores`` (the selection criterion).
    successes : int
        Repetitions that reached the target.
    statuses : list of str
        Status of each repetition.
    best : bool
        Whether this configuration was chosen for its optimizer.
    final_gap : float
        Median over repetitions of the final relative suboptimality (the final objective when
        the optimum is unknown; inf for non-finite values): the tie-break between
        configurations with the same median score, so when no configuration reaches the target
        the one that got closest is chosen.
    """

    optimizer: str
    spec: OptimizerSpec
    point: dict[str, Any]
    scores: list[float]
    median: float
    successes: int
    statuses: list[str]
    best: bool = False
    final_gap: float = float("inf")


@dataclass
class TuneResult:
    """What :func:`tune` found.

    Attributes
    ----------
    specs : list of OptimizerSpec
        The chosen configuration of each optimizer, in the order given: pass them to
        :func:`optcmp.compare` as they are.
    configs : list of ConfigScore
        Every configuration with its scores.
    by : {"time", "iterations"}
    budget : float
        Seconds or iterations allowed to every run.
    repeats : int
    mode : {"grid", "defaults"}
    cost : dict
        ``runs`` (in the sweep), ``executed`` (not read back from a store), ``timed`` (sum of
        timed seconds), ``run_wall`` (sum of the runs' wall seconds) and ``elapsed`` (wall
        seconds of the whole call).
    comparison : Comparison
        Every tuning run.
    """

    specs: list[OptimizerSpec]
    configs: list[ConfigScore]
    by: str
    budget: float
    repeats: int
    mode: str
    cost: dict[str, float]
    comparison: Comparison = field(repr=False)

    @property
    def best(self) -> OptimizerSpec:
        """The chosen spec (with several optimizers: the one with the smallest median score)."""
        chosen = [c for c in self.configs if c.best]
        top = min(chosen, key=lambda c: (c.median, -c.successes))
        return self.specs[[s.name for s in self.specs].index(top.optimizer)]

    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per configuration."""
        unit = "seconds" if self.by == "time" else "iterations"
        return [{"optimizer": c.optimizer, **{f"hp_{k}": v for k, v in c.point.items()},
                 f"median_{unit}_to_target": c.median, "successes": c.successes,
                 "repeats": len(c.scores), "best": c.best, "spec": c.spec.describe()}
                for c in self.configs]

    def to_frame(self) -> Any:
        """A pandas DataFrame of :meth:`rows` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.rows())

    def table(self) -> str:
        """A readable table of every configuration, the choices and the tuning cost."""
        unit = "s" if self.by == "time" else "it"
        head = ["optimizer", "configuration", f"median to target ({unit})", "reached", ""]
        lines = [head]
        for c in self.configs:
            point = ", ".join(f"{k}={v!r}" for k, v in c.point.items()) or "defaults"
            med = (f"{c.median:.4g}" if c.successes else f">= {c.median:.4g} (budget)")
            lines.append([c.optimizer, point, med, f"{c.successes}/{len(c.scores)}",
                          "<- best" if c.best else ""])
        widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
        out = ["  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip() for r in lines]
        out.insert(1, "  ".join("-" * w for w in widths[:-1]))  # the marker column has no head
        budget = (f"{self.budget:g} s timed" if self.by == "time"
                  else f"{int(self.budget)} iterations")
        out.append(f"budget per run: {budget}; a run that misses the target scores the budget; "
                   f"best = smallest median over {self.repeats} repetition(s)")
        k = self.cost
        out.append(f"tuning cost: {int(k['runs'])} runs ({int(k['executed'])} executed), "
                   f"{k['timed']:.3g} s timed, {k['run_wall']:.3g} s run wall time, "
                   f"{k['elapsed']:.3g} s elapsed")
        out.extend(f"chosen: {s.describe()}" for s in self.specs)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable summary (specs, configurations, cost; not the runs)."""
        return {"format": "optcmp.tune", "by": self.by, "budget": self.budget,
                "repeats": self.repeats, "mode": self.mode,
                "specs": [s.to_dict() for s in self.specs],
                "configs": [{"optimizer": c.optimizer, "spec": c.spec.to_dict(),
                             "point": c.point, "scores": c.scores, "median": c.median,
                             "successes": c.successes, "statuses": c.statuses, "best": c.best}
                            for c in self.configs],
                "cost": self.cost}

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_dict` as JSON (read the specs back with :func:`load_specs`).

        Written through a temporary file next to ``path`` (removed on any error).

        Raises
        ------
        IsADirectoryError
            ``path`` is a directory.
        FileNotFoundError
            The directory of ``path`` does not exist.
        """
        write_text_atomic(path, json.dumps(self.to_dict(), indent=1), what="tuning result")


def load_specs(path: str | os.PathLike[str]) -> list[OptimizerSpec]:
    """The chosen specs of a :meth:`TuneResult.save` file.

    Parameters
    ----------
    path : str or path-like
        JSON file written by ``TuneResult.save`` (or ``optcmp tune --out``).

    Returns
    -------
    list of OptimizerSpec
        The chosen setting of each tuned optimizer, ready for :func:`optcmp.compare`.

    Raises
    ------
    FileNotFoundError
    IsADirectoryError
        ``path`` is a directory.
    ValueError
        Not a tuning result (not UTF-8 or not JSON included), or an invalid spec in it.
    """
    p = os.fspath(path)
    with open(p, "rb") as fh:
        raw = fh.read()
    try:
        d = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p} is not an optcmp tuning result (not JSON: {exc})") from None
    specs = d.get("specs") if isinstance(d, dict) else None
    if (not isinstance(d, dict) or d.get("format") != "optcmp.tune"
            or not isinstance(specs, list) or not all(isinstance(x, dict) for x in specs)):
        raise ValueError(f"{p} is not an optcmp tuning result (format optcmp.tune)")
    try:
        return [OptimizerSpec.from_dict(x) for x in specs]
    except KeyError as exc:
        raise ValueError(f"{p}: a spec lacks {exc}") from None


def _grids_for(specs: list[OptimizerSpec], grid: Mapping[str, Any] | None
               ) -> list[dict[str, Sequence[Any]]]:
    per_opt: dict[str, Mapping[str, Any]] | None = None
    if grid is not None:
        if not isinstance(grid, Mapping) or not grid:
            raise ValueError(f"grid must be a non-empty dict of hyperparameter -> values, got "
                             f"{grid!r}")
        if all(isinstance(v, Mapping) for v in grid.values()):
            per_opt = {canonical_optimizer(k): v for k, v in grid.items()}
    out = []
    for s in specs:
        if grid is None:
            g: Mapping[str, Any] | None = DEFAULT_GRIDS.get(s.name)
            if g is None:
                raise ValueError(f"optimizer {s.name!r} has no default grid; pass grid=... "
                                 f"(defaults exist for {', '.join(DEFAULT_GRIDS)})")
        elif per_opt is not None:
            g = per_opt.get(s.name)
            if g is None:
                raise ValueError(f"grid has no entry for optimizer {s.name!r}; it has "
                                 f"{sorted(per_opt)}")
        else:
            g = grid
        checked: dict[str, Sequence[Any]] = {}
        for name, values in g.items():
            if name not in s.hyperparameters:
                raise TypeError(f"grid hyperparameter {name!r} is not one of {s.name}'s: "
                                f"{sorted(s.hyperparameters)}")
            if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
                raise ValueError(f"grid[{name!r}] must be a list of values, got {values!r}")
            vals = [v.item() if isinstance(v, np.generic) else v for v in values]
            if not vals:
                raise ValueError(f"grid[{name!r}] is empty")
            checked[name] = vals
        out.append(checked)
    return out


def _final_gap(runs: Sequence[RunResult]) -> float:
    vals = []
    for r in runs:
        g = r.relative_suboptimality if r.fstar is not None else r.fun
        vals.append(float(g) if g is not None and np.isfinite(g) else float("inf"))
    return float(np.median(vals)) if vals else float("inf")


def tune(
    problem: Problem,
    optimizer: OptimizerSpec | str | Callable[..., OptimizerSpec]
    | Sequence[OptimizerSpec | str | Callable[..., OptimizerSpec]],
    grid: Mapping[str, Any] | None = None,
    *,
    budget: float | None = None,
    by: str = "time",
    repeats: int = 3,
    tol: float = 1e-6,
    mode: str = "grid",
    backend: str = "numpy",
    device: str | None = None,
    dtype: str = "float64",
    seed: int = 0,
    max_time: float | None = None,
    executor: Any = None,
    store: str | os.PathLike[str] | None = None,
    progress: bool = True,
    target: Rule | None = None,
    threads: int | None = 1,
) -> TuneResult:
    """Tune hyperparameters fairly: same target and budget for every configuration.

    Parameters
    ----------
    problem : Problem
    optimizer : OptimizerSpec, factory, str, or a sequence of them
        Hyperparameters not in the grid keep the values of the given spec.
    grid : dict, optional
        ``{"learning_rate": [0.01, 0.1, 1.0]}`` (the Cartesian product of the lists is tried),
        or ``{"gd": {...}, "adadelta": {...}}`` per optimizer. Default: :data:`DEFAULT_GRIDS`.
    budget : float, optional
        Per run: timed seconds (``by="time"``, default 10, with a 10,000-iteration cap) or
        iterations (``by="iterations"``, default 10,000). A miss scores the budget.
    by : {"time", "iterations"}, default "time"
        Score: time-to-target in seconds, or iterations-to-target (deterministic, independent
        of the machine's load).
    repeats : int, default 3
        Repetitions (seeds ``seed .. seed + repeats - 1``); the median decides.
    tol : float, default 1e-6
        Target: relative suboptimality (or the problem's default target without a known
        optimum), as in :func:`optcmp.make_stopping`.
    mode : {"grid", "defaults"}, default "grid"
        ``"defaults"`` runs each optimizer with its documented defaults (``grid`` must be None).
    backend, device, dtype
        Where the tuning runs run.
    seed : int, default 0
    max_time : float, optional
        With ``by="iterations"``, an extra cap in timed seconds per run (a run stopped by it
        scores the budget).
    executor, store, progress, threads
        As in :func:`optcmp.compare` (progress bar, one thread by default; resumable store).
    target : Rule, optional
        Target rule replacing ``tol`` (e.g. ``optcmp.stopping.LossTarget(0.01)`` for a problem
        without a known optimum); the budget and divergence detection are added to it.

    Returns
    -------
    TuneResult
        ``result.specs`` feed ``optcmp.compare(problem, result.specs)``; ``result.best`` is the
        chosen spec; ``result.table()`` shows every configuration and the tuning cost.

    Raises
    ------
    ValueError
        Unknown ``by`` or ``mode``, a bad budget, an empty grid or list, an invalid value in the
        grid (named), a grid in ``"defaults"`` mode.
    TypeError
        A grid hyperparameter the optimizer does not have.

    Warns
    -----
    UserWarning
        When no configuration of an optimizer reached the target, or when the best value of a
        numeric axis with three or more values sits at the edge of the grid.

    Examples
    --------
    >>> import optcmp
    >>> p = optcmp.problems.LinearRegression(n_samples=500)
    >>> t = optcmp.tune(p, optcmp.gd, {"learning_rate": [1e-3, 3e-3, 1e-2]}, by="iterations",
    ...                 budget=500, repeats=1)  # doctest: +SKIP
    >>> optcmp.compare(p, t.specs)  # doctest: +SKIP
    """
    from optcmp.runner import make_stopping
    from optcmp.sweep import compare

    t_start = time.perf_counter()
    budget, base = _check_inputs(optimizer, by, mode, budget, repeats)
    configs, grids = _configurations(base, grid, mode)
    rule = _stopping_rule(problem, make_stopping, target, tol, by, budget, max_time)
    comp = compare(problem, [c[1] for c in configs], backends=[backend], device=device,
                   dtype=dtype, stopping=rule, repeats=repeats, seed=seed, progress=progress,
                   executor=executor, store=store, threads=threads)
    scored = _score_configs(comp, configs, by, budget, repeats)
    chosen, best = _choose_best(base, configs, scored)
    _warn_about_choices(base, best, grids, by, budget, mode)
    return TuneResult(chosen, scored, by, float(budget), int(repeats), mode,
                      _tuning_cost(comp, t_start), comp)


#: One configuration to run: index of its optimizer in the given list, spec, grid point.
_Config = tuple[int, OptimizerSpec, dict[str, Any]]


def _check_inputs(
    optimizer: OptimizerSpec | str | Callable[..., OptimizerSpec]
    | Sequence[OptimizerSpec | str | Callable[..., OptimizerSpec]],
    by: str, mode: str, budget: float | None, repeats: int,
) -> tuple[float, list[OptimizerSpec]]:
    """Check ``by``, ``mode``, ``budget``, ``repeats``, ``optimizer`` in turn: budget and specs."""
    if by not in BY:
        raise ValueError(f"by must be one of {BY}, got {by!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if budget is None:
        budget = DEFAULT_BUDGET[by]
    if isinstance(budget, bool) or not isinstance(budget, (int, float, np.number)) or not (
            math.isfinite(budget) and budget > 0):
        raise ValueError(f"budget must be a finite number > 0, got {budget!r}")
    if by == "iterations":
        if float(budget) != int(budget):
            raise ValueError(f"budget must be a whole number of iterations, got {budget!r}")
        budget = int(budget)
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    if isinstance(optimizer, (str, OptimizerSpec)) or callable(optimizer):
        optimizer = [optimizer]  # type: ignore[list-item]
    base = [as_spec(o) for o in optimizer]  # type: ignore[union-attr]
    if not base:
        raise ValueError("optimizer is empty; give at least one (e.g. optcmp.gd)")
    names = [s.name for s in base]
    if len(set(names)) != len(names):
        raise ValueError(f"each optimizer once, got {names}")
    return budget, base


def _configurations(base: list[OptimizerSpec], grid: Mapping[str, Any] | None, mode: str
                    ) -> tuple[list[_Config], list[dict[str, Sequence[Any]]]]:
    """Every configuration to run, and the checked grid of each optimizer (none in defaults)."""
    if mode == "defaults":
        if grid is not None:
            raise ValueError("mode='defaults' runs the documented defaults: drop grid")
        return [(i, _defaults_spec(s), {}) for i, s in enumerate(base)], []
    grids = _grids_for(base, grid)
    configs: list[_Config] = []
    for i, (s, g) in enumerate(zip(base, grids)):
        keys = list(g)
        for values in itertools.product(*(g[k] for k in keys)):
            point = dict(zip(keys, values))
            spec = s.replace(**point)  # validated: a bad value is named
            label = f"{s.name}(" + ", ".join(f"{k}={v!r}" for k, v in point.items()) + ")"
            configs.append((i, OptimizerSpec(spec.name, spec.hyperparameters, spec.impl,
                                             label), point))
    return configs, grids


def _defaults_spec(s: OptimizerSpec) -> OptimizerSpec:
    """The documented defaults of the optimizer (and implementation) of ``s``."""
    d = get_optimizer(s.name, impl=s.impl)
    return OptimizerSpec(d.name, d.hyperparameters, d.impl, f"{d.name} (defaults)")


def _stopping_rule(problem: Problem, make_stopping: Callable[..., Rule], target: Rule | None,
                   tol: float, by: str, budget: float, max_time: float | None) -> Rule:
    """The rule of every run: ``target`` (checked) or ``tol``'s target, within the budget.

    ``make_stopping`` is :func:`optcmp.compare.make_stopping`, imported by :func:`tune`.
    """
    if by == "time":  # the iteration cap keeps hopeless runs' stops machine-independent
        limits: dict[str, Any] = {"max_iter": DEFAULT_BUDGET["iterations"],
                                  "max_time": float(budget)}
    else:
        limits = {"max_iter": int(budget), "max_time": max_time}
    if target is None:
        return make_stopping(problem, tol=tol, **limits)
    if not isinstance(target, Rule) or target.kind != "target":
        raise TypeError(f"target must be a target rule (e.g. LossTarget(0.01)), got "
                        f"{target!r}")
    return default_stopping(target=target, **limits)


def _score(r: RunResult, by: str, budget: float) -> float:
    """Seconds or iterations to the target of one run; the budget when it missed the target."""
    reached = r.time_to_target if by == "time" else r.nit_to_target
    return float(reached) if reached is not None else float(budget)


def _score_configs(comp: Comparison, configs: list[_Config], by: str, budget: float,
                   repeats: int) -> list[ConfigScore]:
    """Score each configuration over its repetitions (runs are ordered repetition-major)."""
    n = len(configs)
    scored: list[ConfigScore] = []
    for j, (_, spec, point) in enumerate(configs):
        runs = [comp.runs[r * n + j] for r in range(repeats)]
        sc = [_score(r, by, budget) for r in runs]
        scored.append(ConfigScore(spec.name, spec, point, sc, float(np.median(sc)),
                                  sum(r.success for r in runs), [r.status for r in runs],
                                  final_gap=_final_gap(runs)))
    return scored


def _choose_best(base: list[OptimizerSpec], configs: list[_Config], scored: list[ConfigScore]
                 ) -> tuple[list[OptimizerSpec], list[ConfigScore]]:
    """Mark the best configuration of each optimizer; return the chosen specs and those configs.

    Best: smallest median, then most successes, smallest mean, smallest final gap, first in the
    grid. A chosen spec keeps the label of the given spec.
    """
    chosen: list[OptimizerSpec] = []
    best: list[ConfigScore] = []
    for i, s in enumerate(base):
        mine = [(j, c) for j, c in enumerate(scored) if configs[j][0] == i]
        _, c_best = min(mine, key=lambda jc: (jc[1].median, -jc[1].successes,
                                              float(np.mean(jc[1].scores)),
                                              jc[1].final_gap, jc[0]))
        c_best.best = True
        chosen.append(OptimizerSpec(c_best.spec.name, c_best.spec.hyperparameters,
                                    c_best.spec.impl, s.label))
        best.append(c_best)
    return chosen, best


def _warn_about_choices(base: list[OptimizerSpec], best: list[ConfigScore],
                        grids: list[dict[str, Sequence[Any]]], by: str, budget: float,
                        mode: str) -> None:
    """Warn (at the caller of :func:`tune`) of a choice that missed the target or is at an edge."""
    for i, (s, c_best) in enumerate(zip(base, best)):
        if c_best.successes == 0:
            units = "s" if by == "time" else "iterations"
            if mode == "defaults":
                warnings.warn(f"{s.name} with its defaults did not reach the target within the "
                              f"budget ({budget} {units})", stacklevel=3)
            else:
                warnings.warn(f"no configuration of {s.name} reached the target within the "
                              f"budget ({budget} {units}); the returned "
                              f"{c_best.spec.describe()} is only the one that got closest "
                              "(smallest final gap): raise the budget or widen the grid",
                              stacklevel=3)
        elif mode == "grid":
            _warn_edge(s.name, c_best.point, grids[i])


def _tuning_cost(comp: Comparison, t_start: float) -> dict[str, float]:
    """Runs and executed runs of the sweep, their timed and wall seconds, time since ``t_start``."""
    return {"runs": float(len(comp)),
            "executed": float(comp.settings.get("store", {}).get("executed", len(comp))),
            "timed": float(sum(r.time for r in comp)),
            "run_wall": float(sum(r.wall_time for r in comp)),
            "elapsed": time.perf_counter() - t_start}


def _warn_edge(name: str, point: dict[str, Any], grid: dict[str, Sequence[Any]]) -> None:
    """Warn (at the caller of :func:`tune`) when the best value of a numeric axis is at its edge."""
    for k, v in point.items():
        vals = [x for x in grid[k] if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if len(vals) >= 3 and len(vals) == len(grid[k]) and v in (min(vals), max(vals)):
            warnings.warn(f"the best {name} {k}={v!r} is at the edge of the grid "
                          f"[{min(vals)!r} .. {max(vals)!r}]; the optimum may lie outside it: "
                          "extend the grid", stacklevel=4)


__all__ = ["BY", "DEFAULT_BUDGET", "DEFAULT_GRIDS", "MODES", "ConfigScore", "TuneResult",
           "load_specs", "tune"]
