"""Target rules: reaching one is success, and the first time defines time-to-target.

A tolerance finer than float64 resolves near ``f*`` is never met: a run cannot be reported
``converged`` on rounding noise.

References
----------
J. J. More and S. M. Wild, "Benchmarking derivative-free optimization algorithms",
SIAM J. Optim. 20(1), 2009 (the convergence test ``f(x) - f* <= tol (f(x0) - f*)``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import replace
from typing import Any

from optcmp.stopping.base import Rule, State, positive_number

#: float64 machine epsilon: near ``f*`` values are spaced by ``_EPS64 * |f*|``.
_EPS64 = 2.0 ** -52


def finite_number(name: str, value: Any) -> float:
    """``value`` as a finite float (no string, None, bool, NaN or infinity), else ValueError."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ValueError(f"{name} must be a finite number, got {type(value).__name__} {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {type(value).__name__} "
                         f"{value!r:.80}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r} (never or always met)")
    return v


class RelativeSuboptimality(Rule):
    """Target ``(f - f*) / (f0 - f*) <= tol`` (More-Wild 2009); never met when ``tol * (f0 - f*)
    < eps * |f*|`` (:func:`optcmp.engine.check_resolution` warns)."""

    needs_optimum = True

    def __init__(self, tol: float = 1e-6) -> None:
        self.tol = positive_number("tol", tol)
        if self.tol >= 1:
            raise ValueError(f"tol must be a relative suboptimality in (0, 1), got {tol!r}: "
                             "tol >= 1 is met by the initial point")

    def check(self, s: State) -> bool:
        if s.fun is None or s.fstar is None:
            return False
        gap0 = s.f0 - s.fstar
        if gap0 <= 0:
            return s.fun - s.fstar <= 0
        if self.tol * gap0 < _EPS64 * abs(s.fstar):  # no "converged" on rounding noise
            return False
        return (s.fun - s.fstar) <= self.tol * gap0


class AbsoluteSuboptimality(Rule):
    """Target ``f - f* <= tol``. Needs a known optimum; never met when ``tol < eps * |f*|``."""

    needs_optimum = True

    def __init__(self, tol: float) -> None:
        self.tol = positive_number("tol", tol)

    def check(self, s: State) -> bool:
        if s.fun is None or s.fstar is None or self.tol < _EPS64 * abs(s.fstar):
            return False  # a tolerance below float64's resolution is never met
        return s.fun - s.fstar <= self.tol


class LossTarget(Rule):
    """Target ``f <= value`` (for problems without a known optimum)."""

    def __init__(self, value: float) -> None:
        self.value = finite_number("LossTarget value", value)

    def check(self, s: State) -> bool:
        return s.fun is not None and s.fun <= self.value


class GradientNorm(Rule):
    """Target ``||grad f|| <= tol``."""

    def __init__(self, tol: float) -> None:
        self.tol = positive_number("tol", tol)

    def check(self, s: State) -> bool:
        return s.grad_norm is not None and s.grad_norm <= self.tol


class MetricTarget(Rule):
    """Target on a reported metric, e.g. ``MetricTarget("test_accuracy", 0.99)`` (>=)."""

    def __init__(self, metric: str, value: float, mode: str = "max") -> None:
        if mode not in ("max", "min"):
            raise ValueError(f"mode must be 'max' or 'min', got {mode!r}")
        if not isinstance(metric, str) or not metric:
            raise ValueError(f"metric must be the non-empty name of a metric the problem "
                             f"reports (e.g. 'test_accuracy'), got {metric!r}")
        self.metric = metric
        self.value = finite_number(f"MetricTarget({metric!r}) value", value)
        if metric.endswith("accuracy") and not 0.0 <= self.value <= 1.0:
            raise ValueError(f"MetricTarget({metric!r}, {value!r}): an accuracy is a fraction in "
                             "[0, 1] (0.95 for 95%); no run could meet this target")
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


class CombinedTarget(Rule):
    """Target met only when every given test holds at once, in float64.

    A relative target alone can be met far from ``f*`` when ``f0`` is huge; an absolute,
    stationarity or loss test alongside refuses such a run.

    Parameters
    ----------
    relative, absolute, grad_norm : float, optional
        Tolerances of :class:`RelativeSuboptimality`, :class:`AbsoluteSuboptimality`,
        :class:`GradientNorm`.
    loss : float, optional
        :class:`LossTarget` value.
    """

    def __init__(self, relative: float | None = None, absolute: float | None = None,
                 grad_norm: float | None = None, loss: float | None = None) -> None:
        given = {"relative": relative, "absolute": absolute, "grad_norm": grad_norm,
                 "loss": loss}
        for name, v in given.items():
            if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
                raise ValueError(f"CombinedTarget({name}=...) must be a number or None, got "
                                 f"{v!r}")
        tests = {"relative": RelativeSuboptimality, "absolute": AbsoluteSuboptimality,
                 "grad_norm": GradientNorm, "loss": LossTarget}
        self._parts: list[Rule] = []
        for k, v in given.items():
            try:
                self._parts += [] if v is None else [tests[k](float(v))]
            except ValueError as exc:  # the message names the argument written, not the rule's
                said = str(exc).replace("LossTarget value", "loss").replace("tol", k)
                raise ValueError(f"CombinedTarget: {said}") from None
        if not self._parts:
            raise ValueError("CombinedTarget needs at least one of relative, absolute, "
                             "grad_norm, loss")
        self.relative, self.absolute, self.grad_norm, self.loss = (
            None if v is None else float(v) for v in given.values())
        self.needs_optimum = relative is not None or absolute is not None

    def to_dict(self) -> dict[str, Any]:
        return {"rule": "CombinedTarget", "relative": self.relative, "absolute": self.absolute,
                "grad_norm": self.grad_norm, "loss": self.loss}

    def check(self, s: State) -> bool:
        return all(r.check(_float64(s)) for r in self._parts)

    def unmet(self, s: State) -> list[str]:
        """The tests that do not hold at ``s`` (described), e.g. to say why a run is refused."""
        return [r.describe() for r in self._parts if not r.check(_float64(s))]


def _float64(s: State) -> State:
    """``s`` with its values as Python floats (float64), whatever dtype the run used."""
    fun, fstar, gnorm = (None if v is None else float(v) for v in (s.fun, s.fstar, s.grad_norm))
    return replace(s, fun=fun, f0=float(s.f0), fstar=fstar, grad_norm=gnorm)


def relative_only_note(fun: float, f0: float, fstar: float, *, absolute: float = 1e-6) -> str:
    """A note for a run whose relative suboptimality is tiny only because ``f0`` is huge."""
    gap = float(fun) - float(fstar)
    if not gap > absolute or not float(f0) > float(fstar):
        return ""
    rel = gap / (float(f0) - float(fstar))
    return (f"relative suboptimality {rel:.2g} but f - f* = {gap:.4g} (f0 = {float(f0):.3g}): "
            f"a relative target is met far from f* in absolute terms; add an absolute or "
            "gradient-norm test (CombinedTarget)")


#: How far above ``f*`` (in ``max(1, |f*|)``) a start must lie for :func:`far_start_note`.
RELATIVE_ONLY_START = 1e6


def far_start_note(fun: float, f0: float, fstar: float | None) -> str:
    """:func:`relative_only_note` for a run that met a relative target from afar.

    Parameters
    ----------
    fun, f0 : float
        The run's final objective (float64) and its start's.
    fstar : float or None
        The optimum (None: unknown, no note).

    Returns
    -------
    str
        The note when the start lay more than :data:`RELATIVE_ONLY_START` times
        ``max(1, |f*|)`` above ``f*`` and ``f - f*`` is still above ``max(1, |f*|)``; else ``""``.
    """
    if fstar is None:
        return ""
    scale = max(1.0, abs(float(fstar)))
    if not (math.isfinite(fun) and math.isfinite(f0)) or f0 - fstar <= RELATIVE_ONLY_START * scale:
        return ""
    return relative_only_note(fun, f0, fstar, absolute=scale)


def AccuracyTarget(value: float, metric: str = "test_accuracy") -> MetricTarget:  # noqa: N802
    """Target ``accuracy >= value`` on ``metric`` (default the test accuracy).

    Parameters
    ----------
    value : float
        In (0, 1].
    metric : str, default "test_accuracy"

    Returns
    -------
    MetricTarget
    """
    if not 0.0 < finite_number("accuracy target", value) <= 1.0:
        raise ValueError(f"accuracy target must be in (0, 1], got {value!r}")
    return MetricTarget(metric, value, "max")


__all__ = ["RELATIVE_ONLY_START", "AbsoluteSuboptimality", "AccuracyTarget", "CombinedTarget",
           "GradientNorm", "LossTarget", "MetricTarget", "RelativeSuboptimality", "far_start_note",
           "finite_number", "relative_only_note"]
