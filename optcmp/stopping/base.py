"""What every stopping rule shares: :class:`State`, the base class, :class:`AnyOf`, and which
rule wins when several fire at the same check (:func:`by_priority`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class State:
    """What a rule sees: the latest observation of a run.

    Attributes
    ----------
    nit : int
    iterate : int
        Index of the iterate whose objective is ``fun`` (``nit`` or ``nit - 1``).
    time : float
        Timed seconds so far (optimizer steps only, wall clock).
    cpu_time : float
    fun : float or None
        Full objective at ``iterate``; ``None`` at steps without an observation.
    f0 : float
    fstar : float or None
    grad_norm : float or None
    nfev, njev : int
    metrics : dict
        Extra figures at ``iterate``, when a rule asked for them.
    """

    nit: int = 0
    iterate: int = 0
    time: float = 0.0
    cpu_time: float = 0.0
    fun: float | None = None
    f0: float = math.nan
    fstar: float | None = None
    grad_norm: float | None = None
    nfev: int = 0
    njev: int = 0
    metrics: dict[str, float] = field(default_factory=dict)


class Rule:
    """Base class of stopping rules.

    Attributes
    ----------
    kind : {"target", "budget", "divergence"}
    status : str
        Run status when this rule fires.
    needs_optimum : bool
    needs_metrics : tuple of str
        Metric names the rule reads.
    """

    kind: str = "target"
    status: str = "converged"
    needs_optimum: bool = False
    needs_metrics: tuple[str, ...] = ()

    def check(self, s: State) -> bool:
        """Whether the rule fires on ``s``."""
        raise NotImplementedError

    def rules(self) -> list[Rule]:
        """The leaf rules of a composition."""
        return [self]

    def reset(self) -> None:  # noqa: B027 - stateless rules need nothing
        """Forget state kept between observations (called at the start of every run)."""

    def first(self, s: State) -> Rule | None:
        """The first leaf rule that fires on ``s``, or ``None``."""
        return self if self.check(s) else None

    def __or__(self, other: Rule) -> AnyOf:
        if not isinstance(other, Rule):
            return NotImplemented
        return AnyOf(*self.rules(), *other.rules())

    def describe(self) -> str:
        """Human-readable description."""
        d = self.to_dict()
        args = ", ".join(f"{k}={v!r}" for k, v in d.items() if k != "rule")
        return f"{d['rule']}({args})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable form: the class name and the public attributes."""
        return {"rule": type(self).__name__,
                **{k: v for k, v in vars(self).items() if not k.startswith("_")}}

    def __repr__(self) -> str:
        return self.describe()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rule) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))


def positive_number(name: str, value: Any, allow_zero: bool = False) -> float:
    """``value`` as a finite float > 0 (or >= 0): a rule's tolerance, threshold or budget."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        allowed = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    return v


def positive_count(name: str, value: Any) -> int:
    """``value`` as an integer >= 1: an iteration budget, a window, a patience."""
    whole = isinstance(value, (int, np.integer)) or (isinstance(value, float)
                                                      and value.is_integer())
    if isinstance(value, bool) or not whole or int(value) < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def by_priority(rules: Iterable[Rule]) -> list[Rule]:
    """``rules`` in the order a run checks them: divergence first, then in declaration order.

    Parameters
    ----------
    rules : iterable of Rule

    Returns
    -------
    list of Rule
    """
    return sorted(rules, key=lambda r: r.kind != "divergence")  # stable otherwise


def first_fired(rules: Iterable[Rule], s: State) -> Rule | None:
    """The first rule of :func:`by_priority` order that fires at ``s`` (those after it are not
    checked: a stateful rule's state stops where the run stops), or None.

    Parameters
    ----------
    rules : iterable of Rule
    s : State

    Returns
    -------
    Rule or None
    """
    for r in by_priority(rules):
        if r.check(s):
            return r
    return None


class AnyOf(Rule):
    """Fires when any of its rules fires (``a | b | c``)."""

    def __init__(self, *rules: Rule) -> None:
        flat: list[Rule] = []
        for r in rules:
            if not isinstance(r, Rule):
                raise TypeError(f"expected a stopping Rule, got {type(r).__name__}")
            flat.extend(r.rules())
        self._rules = flat

    def rules(self) -> list[Rule]:
        return list(self._rules)

    def reset(self) -> None:
        for r in self._rules:
            r.reset()

    def first(self, s: State) -> Rule | None:
        """The rule that fires at ``s`` (:func:`first_fired`: divergence first), or None."""
        return first_fired(self._rules, s)

    def check(self, s: State) -> bool:
        return self.first(s) is not None

    def to_dict(self) -> dict[str, Any]:
        return {"rule": "AnyOf", "rules": [r.to_dict() for r in self._rules]}

    def describe(self) -> str:
        return " | ".join(r.describe() for r in self._rules)


__all__ = ["AnyOf", "Rule", "State", "by_priority", "first_fired", "positive_count",
           "positive_number"]
