"""Stopping rules: small composable objects (``a | b``) that look at a run's latest observation.

A rule's ``kind`` is ``"target"`` (success, defines time-to-target), ``"budget"`` or
``"divergence"``; this package builds the default rule and reads a saved one back. Why: see
docs/concepts.md, 'The target: relative suboptimality' and 'Time you can trust'.
"""

from __future__ import annotations

from collections.abc import Callable
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
    max_time : float, optional
        Wall-clock seconds.
    max_evals : int, optional
    max_cpu_time : float, optional
    target : Rule, optional
        Replaces the relative-suboptimality target.
    divergence_factor : float, optional, default 1e10
        ``None``: non-finite values only.
    stall : bool, default True
        Add :class:`Stalled` and :class:`Rising`.

    Returns
    -------
    AnyOf
    """
    rules: list[Rule] = [target if target is not None else RelativeSuboptimality(tol)]
    budgets: tuple[tuple[Callable[[Any], Rule], Any], ...] = (
        (MaxIter, max_iter), (MaxTime, max_time), (MaxEvals, max_evals), (MaxCPUTime, max_cpu_time))
    rules += [budget(limit) for budget, limit in budgets if limit is not None]
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


class _Retired(Rule):
    """A rule an earlier optcmp wrote (``RateProjection``): never fires, writes back its dict."""

    kind = "retired"
    status = ""

    def __init__(self, saved: dict[str, Any]) -> None:
        self.saved = dict(saved)

    def check(self, s: State) -> bool:
        return False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.saved)


#: Rules of earlier versions that rule_from_dict reads back as :class:`_Retired`.
_RETIRED = frozenset({"RateProjection"})


def rule_from_dict(d: dict[str, Any]) -> Rule:
    """Rebuild a rule from :meth:`Rule.to_dict` output.

    Parameters
    ----------
    d : dict

    Returns
    -------
    Rule
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
    "DEFAULT_STALL_WINDOW", "STALL_ULPS", "AbsoluteSuboptimality", "AccuracyTarget", "AnyOf",
    "CombinedTarget", "Divergence", "GradientNorm", "LossTarget", "MaxCPUTime", "MaxEvals",
    "MaxIter", "MaxTime", "MetricTarget", "RelativeChange", "RelativeSuboptimality", "Rising",
    "Stalled", "Rule", "State", "by_priority", "default_stopping", "first_fired",
    "rule_from_dict", "with_iteration_cap",
]
