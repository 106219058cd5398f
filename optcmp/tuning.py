"""A fair tuning protocol: every configuration gets the same budget and the same target.

:func:`tune` runs each configuration of a grid ``repeats`` times to the target under one budget,
scores a run by its time or iterations to target (a miss scores the whole budget) and picks the
smallest median; the tuning cost is reported too. Why and how: see docs/scaling-out.md,
'Tuning, fairly'.
"""

from __future__ import annotations

import itertools
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from optcmp.comparison import Comparison
from optcmp.engine import RunConfig, configured, make_stopping
from optcmp.optimizers.base import OptimizerSpec, as_spec, canonical_optimizer, get_optimizer
from optcmp.problems.base import Problem
from optcmp.results import RunResult
from optcmp.stopping import Rule, default_stopping
from optcmp.tune_result import ConfigScore, TuneResult


def _log_grid(lo: int, hi: int, per_decade: int = 2) -> tuple[float, ...]:
    """``10**lo .. 10**hi``, ``per_decade`` values a decade, to 3 significant digits."""
    n = (hi - lo) * per_decade + 1
    return tuple(float(f"{v:.3g}") for v in np.logspace(lo, hi, n))


#: Default grid of each optimizer.
DEFAULT_GRIDS: dict[str, dict[str, tuple[Any, ...]]] = {
    "gd": {"learning_rate": _log_grid(-4, 1)},
    "diag_newton": {"learning_rate": _log_grid(-2, 1)},
    "adadelta": {"learning_rate": _log_grid(-3, 1)},
    "sgd": {"learning_rate": _log_grid(-5, 0)},
    "adam": {"learning_rate": _log_grid(-5, 0)},
    "lbfgs": {"history_size": (3, 5, 10, 20, 50)},
}

#: What :func:`tune` takes as ``optimizer``: one optimizer (spec, factory or name) or several.
Tunable = (OptimizerSpec | str | Callable[..., OptimizerSpec]
           | Sequence[OptimizerSpec | str | Callable[..., OptimizerSpec]])

#: Default budget per scoring: timed seconds, or iterations.
DEFAULT_BUDGET = {"time": 10.0, "iterations": 10_000}

BY = ("time", "iterations")
MODES = ("grid", "defaults")


def _grids_for(specs: list[OptimizerSpec], grid: Mapping[str, Any] | None
               ) -> list[dict[str, Sequence[Any]]]:
    """The checked grid of each optimizer: ``grid``, its entry for it, or its default."""
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
    """Median final relative suboptimality (objective without an optimum), the tie-break."""
    vals = []
    for r in runs:
        g = r.relative_suboptimality if r.fstar is not None else r.fun
        vals.append(float(g) if g is not None and np.isfinite(g) else float("inf"))
    return float(np.median(vals)) if vals else float("inf")


def tune(problem: Problem, optimizer: Tunable, grid: Mapping[str, Any] | None = None, *,
         budget: float | None = None, by: str = "time", repeats: int = 3, mode: str = "grid",
         target: Rule | None = None, max_time: float | None = None, executor: Any = None,
         store: str | os.PathLike[str] | None = None, progress: bool = True,
         config: RunConfig | None = None, **overrides: Any) -> TuneResult:
    """Tune hyperparameters fairly: same target and budget for every configuration.

    Parameters
    ----------
    problem : Problem
    optimizer : OptimizerSpec, factory, str, or a sequence of them
        Hyperparameters not in the grid keep the values of the given spec.
    grid : dict, optional
        ``{"learning_rate": [...]}`` (the product is tried) or one such dict per optimizer name.
    budget : float, optional
        Per run: timed seconds (default 10) or iterations (``by="iterations"``, default 10,000).
    by : {"time", "iterations"}, default "time"
    repeats : int, default 3
    mode : {"grid", "defaults"}, default "grid"
    target : Rule, optional
        Target rule replacing ``tol`` (e.g. ``LossTarget(0.01)``).
    max_time : float, optional
        With ``by="iterations"``, an extra cap in timed seconds per run.
    executor, store, progress
        As in :func:`optcmp.compare`.
    config : RunConfig, optional
        The settings of every run, its budgets replaced by tune's.
    **overrides
        Settings replacing those of ``config``, except :data:`BUDGET_SETTINGS`.

    Returns
    -------
    TuneResult
        An optimizer none of whose runs reached the target has no winner: it is left out of
        ``specs`` (``best`` is None when no optimizer has one) and the table says so.

    Warns
    -----
    UserWarning
        No configuration of an optimizer reached the target, or the best value is at the edge
        of the grid.
    """
    from optcmp.sweep import compare
    t_start = time.perf_counter()
    run_config = _tuning_config(config, overrides)
    budget, base = _check_inputs(optimizer, by, mode, budget, repeats)
    configs, grids = _configurations(base, grid, mode)
    rule = tuning_rule(problem, by=by, budget=budget, tol=run_config.tol, target=target,
                       max_time=max_time)
    # scored in iterations, a run is never censored by a time (the load would decide it); in
    # time, each optimizer's grid is a comparison of its own: a configuration is censored
    # against the best of its optimizer's grid, never against another optimizer
    ratio = None if by == "iterations" else run_config.censor_ratio
    groups: dict[str, list[_Config]] = {}
    for c in configs:
        groups.setdefault(c[1].name, []).append(c)
    comps, scored = [], []
    for group in groups.values():
        comps.append(compare(problem, [c[1] for c in group], backends=[run_config.backend],
                             config=run_config.replace(stopping=rule, censor_ratio=ratio),
                             repeats=repeats, progress=progress, executor=executor, store=store))
        scored += _score_configs(comps[-1], group, by, budget, repeats)
    comp = comps[0] if len(comps) == 1 else type(comps[0]).concat(comps)
    chosen, best = _choose_best(base, configs, scored)
    _warn_about_choices(base, best, grids, by, budget, mode)
    cost = {"runs": float(len(comp)),
            "executed": float(sum(c.settings.get("store", {}).get("executed", len(c))
                                  for c in comps)),
            "timed": float(sum(r.time for r in comp)),
            "run_wall": float(sum(r.timing.wall for r in comp)),
            "elapsed": time.perf_counter() - t_start}
    recorded = {"backend": run_config.backend, **run_config.recorded(), "tol": run_config.tol,
                "eval_every": run_config.eval_every, "max_time": run_config.max_time,
                "max_cpu_time": run_config.max_cpu_time}
    return TuneResult(chosen, scored, by, float(budget), int(repeats), mode, cost, comp,
                      recorded)


#: Settings of a run that tune sets itself from its budget (not overrides of :func:`tune`).
BUDGET_SETTINGS = ("stopping", "max_iter", "max_evals")


def _tuning_config(config: RunConfig | None, overrides: Mapping[str, Any]) -> RunConfig:
    """The settings of every tuning run: ``config`` with ``overrides``, without a rule."""
    taken = [k for k in BUDGET_SETTINGS if k in overrides]
    if taken:
        raise TypeError(f"tune() got unexpected keyword argument(s) "
                        f"{', '.join(map(repr, taken))}: tune sets every run's stopping rule "
                        "from budget, by, target, tol and max_time")
    run_config = configured(config, overrides, "tune")
    default = RunConfig()
    given = [k for k in BUDGET_SETTINGS if getattr(run_config, k) != getattr(default, k)]
    if given:
        raise ValueError(f"tune sets every run's stopping rule from budget, by, target, tol and "
                         f"max_time: give a config without {' or '.join(given)} (a target as "
                         "target=...)")
    return run_config


#: One configuration to run: index of its optimizer in the given list, spec, grid point.
_Config = tuple[int, OptimizerSpec, dict[str, Any]]


def _check_inputs(optimizer: Tunable, by: str, mode: str, budget: float | None, repeats: int
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


def tuning_rule(problem: Problem, *, by: str, budget: float, tol: float = 1e-6,
                target: Rule | None = None, max_time: float | None = None) -> Rule:
    """The stopping rule of every tuning run: ``target`` (checked) or ``tol``'s, in the budget."""
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


def _score_configs(comp: Comparison, configs: list[_Config], by: str, budget: float,
                   repeats: int) -> list[ConfigScore]:
    """Score each configuration over its repetitions (runs are ordered repetition-major)."""
    n = len(configs)
    scored: list[ConfigScore] = []
    for j, (_, spec, point) in enumerate(configs):
        runs = [comp.runs[r * n + j] for r in range(repeats)]
        reached = [r.time_to_target if by == "time" else r.nit_to_target for r in runs]
        censored = [r.status == "censored" and r.bound is not None for r in runs]
        # a censored run scores its bound (> bound: never a hit, never the budget of a miss)
        sc = [float(r.bound.limit if c and r.bound is not None else budget if v is None else v)
              for r, v, c in zip(runs, reached, censored)]
        spent = float(sum((r.time if by == "time" else r.nit) for r in runs))
        scored.append(ConfigScore(spec.name, spec, point, sc, _median(sc, censored),
                                  sum(r.success for r in runs), [r.status for r in runs],
                                  final_gap=_final_gap(runs),
                                  reached=[v is not None for v in reached], spent=spent,
                                  censored=censored))
    return scored


def _median(scores: list[float], censored: list[bool]) -> float:
    """The median score, ``inf`` when it falls on a censored run (slower than its bound)."""
    return float(np.median([math.inf if c else s for s, c in zip(scores, censored)]))


def _choose_best(base: list[OptimizerSpec], configs: list[_Config], scored: list[ConfigScore]
                 ) -> tuple[list[OptimizerSpec], list[ConfigScore]]:
    """Mark the best configuration of each optimizer (one that reached the target, smallest
    median, most successes, mean, final gap, grid order); the chosen specs (given labels kept)
    and each optimizer's best configuration, marked only where one run reached the target."""
    chosen: list[OptimizerSpec] = []
    best: list[ConfigScore] = []
    for i, s in enumerate(base):
        mine = [(j, c) for j, c in enumerate(scored) if configs[j][0] == i]
        _, c_best = min(mine, key=lambda jc: (jc[1].successes == 0, jc[1].median,
                                              -jc[1].successes, float(np.mean(jc[1].scores)),
                                              jc[1].final_gap, jc[0]))
        best.append(c_best)
        if c_best.successes:  # none reached the target: no winner
            c_best.best = True
            chosen.append(OptimizerSpec(c_best.spec.name, c_best.spec.hyperparameters,
                                        c_best.spec.impl, s.label))
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
                              f"budget ({budget} {units}): it has no winner; raise the budget "
                              "or widen the grid", stacklevel=3)
            continue
        for k, v in c_best.point.items() if mode == "grid" else ():
            grid = grids[i][k]
            vals = [x for x in grid if isinstance(x, (int, float)) and not isinstance(x, bool)]
            if len(vals) >= 3 and len(vals) == len(grid) and v in (min(vals), max(vals)):
                warnings.warn(f"the best {s.name} {k}={v!r} is at the edge of the grid "
                              f"[{min(vals)!r} .. {max(vals)!r}]; the optimum may lie outside "
                              "it: extend the grid", stacklevel=3)


__all__ = ["BUDGET_SETTINGS", "BY", "DEFAULT_BUDGET", "DEFAULT_GRIDS", "MODES", "tune",
           "tuning_rule"]
