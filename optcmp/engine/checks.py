"""Checks of a run's inputs before any work, and the default stopping rule.

Each check raises (or warns) naming the value and what is allowed, before a run or a sweep
starts, so that no run fails halfway on a bad input.
"""

from __future__ import annotations

import math
import warnings
import weakref
from typing import Any

import numpy as np

from optcmp._warn import outside_level
from optcmp.optimizers.base import OptimizerSpec, optimizer_info
from optcmp.problems.base import Problem
from optcmp.stopping import (
    BUDGET_RULES,
    DEFAULT_DIVERGENCE_FACTOR,
    AbsoluteSuboptimality,
    RelativeChange,
    RelativeSuboptimality,
    Rule,
    Stalled,
    default_stopping,
)


def check_problem(problem: Any) -> None:
    """Raise ``TypeError`` unless ``problem`` is a :class:`~optcmp.problems.base.Problem`."""
    if not isinstance(problem, Problem):
        several = (isinstance(problem, (list, tuple)) and bool(problem)
                   and all(isinstance(p, Problem) for p in problem))
        hint = ("; for several problems pass a suite, optcmp.suites.Suite('name', problems) "
                "(compare accepts it in place of a problem)" if several else "")
        raise TypeError("problem must be an optcmp Problem (e.g. "
                        f"optcmp.problems.LinearRegression()), got {type_name(problem)}{hint}")


def check_batch_size(problem: Problem, spec: OptimizerSpec) -> None:
    """Refuse a minibatch larger than the problem's training rows (see ``optcmp.sgd``)."""
    b = spec.hyperparameters.get("batch_size")
    if not optimizer_info(spec.name).minibatch(spec.hyperparameters) or b is None:
        return
    n = problem.n_samples
    if 0 < n < int(b):
        raise ValueError(f"{spec.describe()}: batch_size={b} is larger than problem "
                         f"{problem.name!r}'s {n} training rows; give batch_size <= {n} (a "
                         "minibatch is a part of the rows, not all of them)")


def type_name(v: Any) -> str:
    """``"None"`` or the type name of ``v`` (for messages)."""
    return "None" if v is None else type(v).__name__


#: Rules already warned about having no target (by id; the sweep checks a rule, then each run).
_NO_TARGET_WARNED: weakref.WeakValueDictionary[int, Rule] = weakref.WeakValueDictionary()


def check_rule(rule: Rule, problem: Problem, fstar: float | None) -> None:
    """Check that a stopping rule can run on ``problem``."""
    if not isinstance(rule, Rule):
        raise TypeError(f"stopping must be an optcmp.stopping.Rule, got {type(rule).__name__}")
    leaves = rule.rules()
    if fstar is None and any(r.needs_optimum for r in leaves):
        raise ValueError(
            f"stopping rule {rule.describe()} needs the optimum f*, which problem "
            f"{problem.name!r} does not know; use a LossTarget or a MetricTarget"
        )
    needed = sorted({m for r in leaves for m in r.needs_metrics})
    if needed:
        reported = problem.metrics(problem.init_params(0))
        missing = [m for m in needed if m not in reported]
        if missing:
            raise ValueError(
                f"stopping rule {rule.describe()} needs the metric(s) {missing}, which problem "
                f"{problem.name!r} does not report; it reports "
                f"{sorted(reported) if reported else 'no metric'}")
    if not any(r.kind == "target" for r in leaves) and _NO_TARGET_WARNED.get(id(rule)) is not rule:
        _NO_TARGET_WARNED[id(rule)] = rule  # once per rule object: a sweep, then its runs
        warnings.warn(f"stopping rule {rule.describe()} has no target: no run can converge and "
                      "time-to-target will be empty", stacklevel=outside_level())
    if not any(isinstance(r, BUDGET_RULES) or (
            r.kind == "budget" and not isinstance(r, (Stalled, RelativeChange)))
            for r in leaves):
        raise ValueError(f"stopping rule {rule.describe()} has no budget (MaxIter, MaxEvals, "
                         "MaxCPUTime or MaxTime; a stall test may never fire): a run that never "
                         "meets the target would never stop")


def check_resolution(rule: Rule, problem: Problem, seed: int = 0, *,
                     f0: float | None = None) -> bool:
    """Warn when a suboptimality target is finer than float64's spacing ``eps * |f*|`` near
    ``f*`` (the rules would never fire and the runs end on their budgets); whether it warned."""
    targets = [r for r in rule.rules() if isinstance(r, (RelativeSuboptimality,
                                                          AbsoluteSuboptimality))]
    opt = problem.optimum() if targets else None
    if opt is None or not math.isfinite(opt.fun):
        return False
    fstar = float(opt.fun)
    floor = float(np.finfo(np.float64).eps) * abs(fstar)
    if f0 is None and any(isinstance(r, RelativeSuboptimality) for r in targets):
        with np.errstate(all="ignore"):
            f0 = float(problem.fun64(np.asarray(problem.init_params(seed), dtype=np.float64)))
    msg = ""
    for r in targets:
        if isinstance(r, AbsoluteSuboptimality):
            if r.tol < floor:
                msg = (f"{r.describe()} asks for f - f* <= {r.tol:.3g}, below what float64 can "
                       f"resolve at f* = {fstar:.6g}: the resolution limit is float64 eps x |f*|"
                       f" = {floor:.3g}; use a tolerance of at least {floor:.1e}")
            continue
        assert f0 is not None
        gap0 = f0 - fstar
        if math.isfinite(gap0) and gap0 > 0 and r.tol * gap0 < floor:
            limit = floor / gap0
            msg = (f"tol={r.tol:g} asks for f - f* <= {r.tol * gap0:.3g}, below what float64 "
                   f"can resolve at f* = {fstar:.6g}: the resolution limit is float64 eps x "
                   f"|f*| = {floor:.3g}, a relative suboptimality of {limit:.3g} (f0 - f* = "
                   f"{gap0:.6g}); use tol >= {limit:.1e}")
    if msg:
        warnings.warn(f"{msg}. The target is never met: runs end on their budgets",
                      UserWarning, stacklevel=outside_level())
    return bool(msg)


def numpy_cpu_warning(device: str | None) -> None:
    """Warn that numpy runs on the CPU whatever ``device`` was asked for."""
    warnings.warn(f"the numpy backend always runs on the CPU: device={device!r} applies to the "
                  "torch, tensorflow and jax backends only", UserWarning, stacklevel=outside_level())


def make_stopping(problem: Problem, *, tol: float = 1e-6, max_iter: int | None = 100_000,
                  max_time: float | None = None, max_evals: int | None = None,
                  max_cpu_time: float | None = None,
                  divergence_factor: float | None = DEFAULT_DIVERGENCE_FACTOR,
                  stall: bool = True) -> Rule:
    """:func:`~optcmp.stopping.default_stopping` with relative suboptimality ``<= tol`` where
    the optimum is known, else the problem's ``default_target(tol)``.

    Parameters
    ----------
    problem : Problem
    tol : float, default 1e-6
    max_iter, max_time, max_evals, max_cpu_time : optional
        The budgets (:class:`RunConfig <optcmp.engine.config.RunConfig>`).
    divergence_factor : float, optional, default 1e10
        Of the :class:`~optcmp.stopping.Divergence` rule; ``None`` checks non-finite values only.
    stall : bool, default True
        Add :class:`~optcmp.stopping.Rising` and :class:`~optcmp.stopping.Stalled`.

    Returns
    -------
    Rule
    """
    check_problem(problem)
    target = None
    if problem.optimum() is None:
        target = problem.default_target(tol)
        if target is None:
            raise ValueError(f"problem {problem.name!r} has no known optimum and no default "
                             "target; pass stopping=LossTarget(...) | MaxIter(...), or give "
                             "the problem an optimum (e.g. from_function(..., "
                             "optimum='estimate'))")
    return default_stopping(tol, max_iter=max_iter, max_time=max_time, max_evals=max_evals,
                            max_cpu_time=max_cpu_time, target=target,
                            divergence_factor=divergence_factor, stall=stall)


__all__ = ["check_batch_size", "check_problem", "check_resolution", "check_rule", "make_stopping",
           "numpy_cpu_warning", "type_name"]
