"""Stopping rules: small composable objects that look at the latest observation of a run.

A rule has a ``kind``: ``"target"`` (reaching it is success and defines time-to-target),
``"budget"`` (iterations, time, evaluations: the run ends unsuccessful) or ``"divergence"``.
Rules compose with ``|``; :meth:`Rule.first` returns the first rule that fires.

References
----------
J. J. More and S. M. Wild, "Benchmarking derivative-free optimization algorithms",
SIAM J. Optim. 20(1), 2009 (the convergence test ``f(x) - f* <= tol (f(x0) - f*)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class State:
    """What a rule sees: the latest observation of a run.

    Attributes
    ----------
    nit : int
        Iterations done so far.
    iterate : int
        Index of the iterate whose objective is ``fun`` (``nit`` or ``nit - 1``).
    time : float
        Timed seconds so far (optimizer steps only).
    fun : float or None
        Full objective at ``iterate``; ``None`` at steps without an observation.
    f0 : float
        Objective at the initial point (float64).
    fstar : float or None
        Known optimal value, if any.
    grad_norm : float or None
        2-norm of the gradient at ``iterate``.
    nfev, njev : int
        Function and gradient evaluations so far.
    metrics : dict
        Extra figures at ``iterate`` (e.g. ``test_accuracy``), when a rule asked for them.
    """

    nit: int = 0
    iterate: int = 0
    time: float = 0.0
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
        Run status when this rule fires (``converged``, ``max_iter``, ``timeout``, ...).
    needs_optimum : bool
        Whether the rule needs ``f*``.
    needs_metrics : tuple of str
        Metric names the rule reads (computed off the clock when needed).
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
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "rule")
        return f"{type(self).__name__}({args})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable form."""
        return {"rule": type(self).__name__, **{k: v for k, v in vars(self).items()}}

    def __repr__(self) -> str:
        return self.describe()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rule) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))


def _positive(name: str, value: Any, allow_zero: bool = False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        allowed = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    return v


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
        isinstance(value, float) and value.is_integer()
    ):
        try:
            import numpy as np

            if isinstance(value, np.integer):
                value = int(value)
            else:
                raise TypeError
        except TypeError:
            raise ValueError(f"{name} must be a positive integer, got {value!r}") from None
    if int(value) < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


#: float64 machine epsilon: near ``f*`` values are spaced by ``_EPS64 * |f*|``.
_EPS64 = 2.0 ** -52


class RelativeSuboptimality(Rule):
    """Target ``(f - f*) / (f0 - f*) <= tol`` (More-Wild 2009). Needs a known optimum.

    A tolerance with ``tol * (f0 - f*) < eps * |f*|`` (finer than float64 resolves near
    ``f*``, ``eps`` = 2.2e-16) is never met: :func:`optcmp.runner.check_resolution` warns.
    """

    needs_optimum = True

    def __init__(self, tol: float = 1e-6) -> None:
        self.tol = _positive("tol", tol)
        if self.tol >= 1:
            raise ValueError(f"tol must be a relative suboptimality in (0, 1), got {tol!r}: "
                             "tol >= 1 is met by the initial point")

    def check(self, s: State) -> bool:
        if s.fun is None or s.fstar is None:
            return False
        gap0 = s.f0 - s.fstar
        if gap0 <= 0:
            return s.fun - s.fstar <= 0
        if self.tol * gap0 < _EPS64 * abs(s.fstar):  # issue 15: finer than float64 resolves
            return False  # near f*: never met (no "converged" on rounding noise below f*)
        return (s.fun - s.fstar) <= self.tol * gap0


class AbsoluteSuboptimality(Rule):
    """Target ``f - f* <= tol``. Needs a known optimum; never met when ``tol < eps * |f*|``."""

    needs_optimum = True

    def __init__(self, tol: float) -> None:
        self.tol = _positive("tol", tol)

    def check(self, s: State) -> bool:
        if s.fun is None or s.fstar is None or self.tol < _EPS64 * abs(s.fstar):
            return False  # issue 15: a tolerance below float64's resolution is never met
        return s.fun - s.fstar <= self.tol


class LossTarget(Rule):
    """Target ``f <= value`` (for problems without a known optimum)."""

    def __init__(self, value: float) -> None:
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"value must be finite, got {value!r}")
        self.value = v

    def check(self, s: State) -> bool:
        return s.fun is not None and s.fun <= self.value


class GradientNorm(Rule):
    """Target ``||grad f|| <= tol``."""

    def __init__(self, tol: float) -> None:
        self.tol = _positive("tol", tol)

    def check(self, s: State) -> bool:
        return s.grad_norm is not None and s.grad_norm <= self.tol


class MetricTarget(Rule):
    """Target on a reported metric, e.g. ``MetricTarget("test_accuracy", 0.99)`` (>=)."""

    def __init__(self, metric: str, value: float, mode: str = "max") -> None:
        if mode not in ("max", "min"):
            raise ValueError(f"mode must be 'max' or 'min', got {mode!r}")
        self.metric = str(metric)
        self.value = float(value)
        self.mode = mode
        self.needs_metrics = (self.metric,)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": type(self).__name__, "metric": self.metric, "value": self.value,
                "mode": self.mode}

    def check(self, s: State) -> bool:
        v = s.metrics.get(self.metric)
        if v is None:
            return False
        return v >= self.value if self.mode == "max" else v <= self.value


def AccuracyTarget(value: float, metric: str = "test_accuracy") -> MetricTarget:  # noqa: N802
    """Target ``accuracy >= value`` on ``metric`` (default the test accuracy).

    Parameters
    ----------
    value : float
        Accuracy to reach, in (0, 1].
    metric : str, default "test_accuracy"
        Name of the metric in ``problem.metrics(x)``.

    Returns
    -------
    MetricTarget
        A target rule (``kind == "target"``) that asks for the metric at every observation.

    Raises
    ------
    ValueError
        ``value`` is outside (0, 1].
    """
    if not 0.0 < float(value) <= 1.0:
        raise ValueError(f"accuracy target must be in (0, 1], got {value!r}")
    return MetricTarget(metric, value, "max")


class RelativeChange(Rule):
    """Stop when ``|f_k - f_{k-1}| <= tol * max(|f_k|, 1)`` for ``patience`` observations.

    This rule is a *stall* test, not a target: its status is ``stalled``.
    """

    kind = "budget"
    status = "stalled"

    def __init__(self, tol: float, patience: int = 1) -> None:
        self.tol = _positive("tol", tol)
        self.patience = _count("patience", patience)
        self._last: float | None = None
        self._count = 0

    def to_dict(self) -> dict[str, Any]:
        return {"rule": type(self).__name__, "tol": self.tol, "patience": self.patience}

    def reset(self) -> None:
        self._last = None
        self._count = 0

    def check(self, s: State) -> bool:
        if s.fun is None:
            return False
        last, self._last = self._last, s.fun
        if last is None:
            return False
        if abs(s.fun - last) <= self.tol * max(abs(s.fun), 1.0):
            self._count += 1
        else:
            self._count = 0
        return self._count >= self.patience


class MaxIter(Rule):
    """Budget: at most ``n`` iterations (status ``max_iter``)."""

    kind = "budget"
    status = "max_iter"

    def __init__(self, n: int) -> None:
        self.n = _count("max_iter", n)

    def check(self, s: State) -> bool:
        return s.nit >= self.n


class MaxTime(Rule):
    """Budget: at most ``seconds`` of timed optimizer steps (status ``timeout``)."""

    kind = "budget"
    status = "timeout"

    def __init__(self, seconds: float) -> None:
        self.seconds = _positive("max_time", seconds)

    def check(self, s: State) -> bool:
        return s.time >= self.seconds


class MaxEvals(Rule):
    """Budget: at most ``n`` function evaluations (status ``max_evals``)."""

    kind = "budget"
    status = "max_evals"

    def __init__(self, n: int) -> None:
        self.n = _count("max_evals", n)

    def check(self, s: State) -> bool:
        return s.nfev >= self.n


#: Explosion factor of the default stopping rule (:func:`default_stopping`): an objective above
#: ``1e10 * max(|f0|, 1)`` counts as diverged.
DEFAULT_DIVERGENCE_FACTOR = 1e10


class Divergence(Rule):
    """Divergence: a non-finite objective or gradient, or ``f > factor * max(|f0|, 1)``.

    Parameters
    ----------
    factor : float, optional
        Explosion factor. ``None`` (the default of this class, kept for backwards
        compatibility) checks non-finite values only; :func:`default_stopping` uses
        ``Divergence(factor=DEFAULT_DIVERGENCE_FACTOR)`` (``1e10``), so a run whose objective
        explodes stops early as ``diverged`` instead of spending its whole budget.

    Raises
    ------
    ValueError
        ``factor`` is not a finite number > 0.
    """

    kind = "divergence"
    status = "diverged"

    def __init__(self, factor: float | None = None) -> None:
        self.factor = None if factor is None else _positive("factor", factor)

    def exploded(self, s: State) -> bool:
        """Whether ``s.fun`` is finite but above ``factor * max(|f0|, 1)``."""
        return (self.factor is not None and s.fun is not None and math.isfinite(s.fun)
                and s.fun > self.factor * max(abs(s.f0), 1.0))

    def check(self, s: State) -> bool:
        if s.fun is not None and not math.isfinite(s.fun):
            return True
        if self.exploded(s):
            return True
        return s.grad_norm is not None and not math.isfinite(s.grad_norm)

    def explain(self, s: State) -> str:
        """Why the rule fires on ``s``: a non-finite value, or an explosion (with the threshold).

        Parameters
        ----------
        s : State
            The observation the rule fired on.

        Returns
        -------
        str
            e.g. ``"objective is non-finite (inf) at iteration 71"`` or ``"objective exploded:
            3.2e+14 > 1e+10 x max(|f0|, 1) (f0 = 12.5) at iteration 5"``.
        """
        if s.fun is not None and not math.isfinite(s.fun):
            what = f"objective is non-finite ({s.fun})"
        elif self.exploded(s):
            assert s.fun is not None and self.factor is not None
            what = (f"objective exploded: {s.fun:.3g} > {self.factor:g} x max(|f0|, 1) "
                    f"(f0 = {s.f0:.6g})")
        elif s.grad_norm is not None and not math.isfinite(s.grad_norm):
            what = f"gradient norm is non-finite ({s.grad_norm})"
        else:
            what = "no divergence"
        return f"{what} at iteration {s.iterate}"

    def describe(self) -> str:
        return ("Divergence(factor=None)" if self.factor is None
                else f"Divergence(factor={self.factor:g})")


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
        for r in self._rules:
            if r.check(s):
                return r
        return None

    def check(self, s: State) -> bool:
        return self.first(s) is not None

    def to_dict(self) -> dict[str, Any]:
        return {"rule": "AnyOf", "rules": [r.to_dict() for r in self._rules]}

    def describe(self) -> str:
        return " | ".join(r.describe() for r in self._rules)


def default_stopping(
    tol: float = 1e-6,
    *,
    max_iter: int | None = 100_000,
    max_time: float | None = 60.0,
    max_evals: int | None = None,
    target: Rule | None = None,
    divergence_factor: float | None = DEFAULT_DIVERGENCE_FACTOR,
) -> AnyOf:
    """The default rule: a target, the budgets, and divergence detection.

    Parameters
    ----------
    tol : float, default 1e-6
        Relative suboptimality tolerance, used when ``target`` is None.
    max_iter : int, optional
        Iteration budget.
    max_time : float, optional
        Timed seconds budget.
    max_evals : int, optional
        Function-evaluation budget.
    target : Rule, optional
        Target rule replacing the relative-suboptimality one (e.g. :class:`LossTarget`).
    divergence_factor : float, optional, default 1e10
        The run diverges when its objective is non-finite or above
        ``divergence_factor * max(|f0|, 1)``; ``None`` checks non-finite values only.

    Returns
    -------
    AnyOf
    """
    rules: list[Rule] = [target if target is not None else RelativeSuboptimality(tol)]
    if max_iter is not None:
        rules.append(MaxIter(max_iter))
    if max_time is not None:
        rules.append(MaxTime(max_time))
    if max_evals is not None:
        rules.append(MaxEvals(max_evals))
    rules.append(Divergence(divergence_factor))
    return AnyOf(*rules)


_RULES: dict[str, type[Rule]] = {
    c.__name__: c
    for c in (RelativeSuboptimality, AbsoluteSuboptimality, LossTarget, GradientNorm,
              MetricTarget, RelativeChange, MaxIter, MaxTime, MaxEvals, Divergence)
}


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
    """
    d = dict(d)
    name = d.pop("rule")
    if name == "AnyOf":
        return AnyOf(*(rule_from_dict(r) for r in d["rules"]))
    if name not in _RULES:
        raise ValueError(f"unknown stopping rule {name!r}; known: {sorted(_RULES)}")
    d.pop("needs_metrics", None)
    return _RULES[name](**d)


__all__ = [
    "DEFAULT_DIVERGENCE_FACTOR", "AbsoluteSuboptimality", "AccuracyTarget", "AnyOf", "Divergence",
    "GradientNorm", "LossTarget", "MaxEvals", "MaxIter", "MaxTime", "MetricTarget", "RelativeChange",
    "RelativeSuboptimality", "Rule", "State", "default_stopping", "rule_from_dict",
]
