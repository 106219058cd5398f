"""Stopping rules: small composable objects that look at the latest observation of a run.

A rule has a ``kind``: ``"target"`` (reaching it is success and defines time-to-target),
``"budget"`` (iterations, evaluations, CPU time, wall time: the run ends unsuccessful) or
``"divergence"``.
Rules compose with ``|``; :meth:`Rule.first` returns the first rule that fires.

The rules live in :mod:`optcmp.stopping.base` (:class:`State`, :class:`Rule`, :class:`AnyOf`,
:func:`by_priority`, :func:`first_fired`), :mod:`optcmp.stopping.targets`,
:mod:`optcmp.stopping.budgets` and :mod:`optcmp.stopping.early` (divergence, a steady rise,
an exact stall, relative change); every public name is importable from ``optcmp.stopping``, which
also builds the default rule (:func:`default_stopping`) and reads a saved one back
(:func:`rule_from_dict`).

References
----------
J. J. More and S. M. Wild, "Benchmarking derivative-free optimization algorithms",
SIAM J. Optim. 20(1), 2009 (the convergence test ``f(x) - f* <= tol (f(x0) - f*)``).
"""

from __future__ import annotations

from typing import Any

from optcmp.stopping.base import AnyOf, Rule, State, by_priority, first_fired
from optcmp.stopping.budgets import (
    BUDGET_RULES,
    MaxCPUTime,
    MaxEvals,
    MaxIter,
    MaxTime,
    with_iteration_cap,
)
from optcmp.stopping.early import (
    DEFAULT_DIVERGENCE_FACTOR,
    DEFAULT_RISING_WINDOW,
    DEFAULT_STALL_RTOL,
    DEFAULT_STALL_WINDOW,
    STALL_ULPS,
    Divergence,
    RelativeChange,
    Rising,
    Stalled,
)
from optcmp.stopping.targets import (
    AbsoluteSuboptimality,
    AccuracyTarget,
    CombinedTarget,
    GradientNorm,
    LossTarget,
    MetricTarget,
    RelativeSuboptimality,
)


def default_stopping(
    tol: float = 1e-6,
    *,
    max_iter: int | None = 100_000,
    max_time: float | None = None,
    max_evals: int | None = None,
    max_cpu_time: float | None = None,
    target: Rule | None = None,
    divergence_factor: float | None = DEFAULT_DIVERGENCE_FACTOR,
    stall: bool = True,
) -> AnyOf:
    """The default rule: a target, the budgets, divergence (explosion, steady rise), exact stall.

    Parameters
    ----------
    tol : float, default 1e-6
        Relative suboptimality tolerance, used when ``target`` is None.
    max_iter : int, optional, default 100_000
        Iteration budget.
    max_time : float, optional
        Wall-clock cap on the timed seconds (only when asked: it depends on the load).
    max_evals : int, optional
        Function-evaluation budget.
    max_cpu_time : float, optional
        Budget of process CPU seconds in the timed steps (:class:`MaxCPUTime`).
    target : Rule, optional
        Target rule replacing the relative-suboptimality one (e.g. :class:`LossTarget`).
    divergence_factor : float, optional, default 1e10
        The run diverges when its objective is non-finite or above
        ``divergence_factor * max(|f0|, 1)``; ``None`` checks non-finite values only.
    stall : bool, default True
        Add the early stops that are exact: :class:`Stalled` (no change at float64
        resolution over 200 observations) and :class:`Rising` (an objective that rose at
        every one of 200 observations ends ``diverged``).

    Returns
    -------
    AnyOf

    Raises
    ------
    ValueError
        A bad budget or tolerance.
    """
    rules: list[Rule] = [target if target is not None else RelativeSuboptimality(tol)]
    if max_iter is not None:
        rules.append(MaxIter(max_iter))
    if max_time is not None:
        rules.append(MaxTime(max_time))
    if max_evals is not None:
        rules.append(MaxEvals(max_evals))
    if max_cpu_time is not None:
        rules.append(MaxCPUTime(max_cpu_time))
    rules.append(Divergence(divergence_factor))
    if stall:
        rules.extend([Rising(), Stalled()])
    return AnyOf(*rules)


_RULES: dict[str, type[Rule]] = {
    c.__name__: c
    for c in (RelativeSuboptimality, AbsoluteSuboptimality, LossTarget, GradientNorm,
              MetricTarget, RelativeChange, MaxIter, MaxTime, MaxEvals, MaxCPUTime, Divergence,
              Rising, Stalled, CombinedTarget)
}


# Writing back the dict it was read from keeps the keys of the runs stored under the rule.
class _Retired(Rule):
    """A rule an earlier optcmp wrote (``RateProjection``): it never fires."""

    kind = "retired"
    status = ""

    def __init__(self, saved: dict[str, Any]) -> None:
        self.saved = dict(saved)

    def check(self, s: State) -> bool:
        return False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.saved)

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.saved.items() if k != "rule")
        return f"{self.saved['rule']}({args})"


#: Rules of earlier versions that rule_from_dict reads back as :class:`_Retired`.
_RETIRED = frozenset({"RateProjection"})


def rule_from_dict(d: dict[str, Any]) -> Rule:
    """Rebuild a rule from :meth:`Rule.to_dict` output.

    Parameters
    ----------
    d : dict
        The output of ``rule.to_dict()`` (as stored in a saved comparison).

    Returns
    -------
    Rule

    Raises
    ------
    ValueError
        Unknown rule name.

    Notes
    -----
    A ``RateProjection`` of a rule saved by optcmp 0.1.0 reads back as a rule that never fires
    (it stopped no run then either) and that writes back the same dict.
    """
    d = dict(d)
    name = d.pop("rule")
    if name in _RETIRED:
        return _Retired({"rule": name, **d})
    if name == "AnyOf":
        return AnyOf(*(rule_from_dict(r) for r in d["rules"]))
    if name not in _RULES:
        raise ValueError(f"unknown stopping rule {name!r}; known: {sorted(_RULES)}")
    d.pop("needs_metrics", None)
    return _RULES[name](**d)


__all__ = [
    "BUDGET_RULES", "DEFAULT_DIVERGENCE_FACTOR", "DEFAULT_RISING_WINDOW", "DEFAULT_STALL_RTOL",
    "DEFAULT_STALL_WINDOW", "STALL_ULPS",
    "AbsoluteSuboptimality", "AccuracyTarget", "AnyOf", "CombinedTarget", "Divergence", "GradientNorm",
    "LossTarget", "MaxCPUTime", "MaxEvals", "MaxIter", "MaxTime", "MetricTarget",
    "RelativeChange", "RelativeSuboptimality", "Rising", "Stalled", "Rule",
    "State", "by_priority", "default_stopping", "first_fired", "rule_from_dict",
    "with_iteration_cap",
]
