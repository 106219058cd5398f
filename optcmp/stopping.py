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
from collections.abc import Iterable
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


#: Default window of :class:`Stalled`: observations (iterations for full-batch runs).
DEFAULT_STALL_WINDOW = 200
#: Default relative threshold of :class:`Stalled`.
DEFAULT_STALL_RTOL = 1e-6
#: Default factor of :class:`RateProjection`: stop when the projection exceeds the budget by it.
DEFAULT_PROJECTION_FACTOR = 10.0


class Stalled(Rule):
    """Stop as ``stalled`` when the objective has flat-lined.

    Over the last ``window`` observations the best objective seen has improved by no more than
    ``rtol * scale``, where ``scale`` is the remaining gap ``f_best - f*`` when the optimum is
    known and ``max(|f_best|, 1e-12)`` otherwise: relative, so the test means the same on every
    problem scale, and best-so-far, so the noise of a stochastic run cannot hide a plateau.
    It counts observations, never seconds: the same run stalls at the same iteration on any
    machine under any load.

    Parameters
    ----------
    window : int, default :data:`DEFAULT_STALL_WINDOW` (200)
        Observations to look back over (one per iteration for full-batch runs, one per
        ``eval_every`` steps for minibatch runs).
    rtol : float, default :data:`DEFAULT_STALL_RTOL` (1e-6)
        Relative improvement below which the run counts as flat.

    Raises
    ------
    ValueError
        ``window`` is not a positive integer, ``rtol`` not a finite number > 0.

    Examples
    --------
    torch's L-BFGS on the FizzBuzz MLP flat-lines at a training loss of 0.0283 from about
    iteration 300 (issue 12); with the defaults it ends ``stalled`` 200 iterations later
    instead of spending its whole budget.
    """

    kind = "budget"
    status = "stalled"

    def __init__(self, window: int = DEFAULT_STALL_WINDOW, rtol: float = DEFAULT_STALL_RTOL
                 ) -> None:
        self.window = _count("window", window)
        self.rtol = _positive("rtol", rtol)
        self._best: list[float] = []
        self._last = math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"rule": type(self).__name__, "window": self.window, "rtol": self.rtol}

    def reset(self) -> None:
        self._best = []
        self._last = math.nan

    def check(self, s: State) -> bool:
        if s.fun is None or not math.isfinite(s.fun):
            return False
        best = min(self._best[-1], s.fun) if self._best else s.fun
        self._best.append(best)
        self._last = s.fun
        if len(self._best) > self.window + 1:
            del self._best[0]
        if len(self._best) <= self.window:
            return False
        ref = s.fstar if s.fstar is not None else 0.0
        scale = max(abs(best - ref), 1e-12) if s.fstar is not None else max(abs(best), 1e-12)
        return self._best[0] - best <= self.rtol * scale

    def explain(self) -> str:
        """Why it fired, for the run's message."""
        best = self._best[-1] if self._best else math.nan
        rose = (f"; the objective rose to {self._last:.6g} from its best {best:.6g}"
                if self._last > best + abs(best) * 1e-3 else "")
        return (f"objective flat: best value improved by <= {self.rtol:g} (relative) over the "
                f"last {self.window} observations{rose}")


class RateProjection(Rule):
    """Stop a run whose observed linear rate cannot reach the target within its budget.

    From the relative suboptimality ``g = (f - f*) / (f0 - f*)`` (best so far) over the last
    ``window`` observations, the linear rate ``log g`` per iteration projects the iterations
    still needed to reach ``tol``; when the projected total exceeds ``factor`` times the
    iteration budget (or, without one, the projected time exceeds ``factor`` times the time
    budget) the run ends as ``projected``. The projection (time and iterations) is recorded
    in the result as a projection, never as a time-to-target. Runs that have made no progress
    at all are left to :class:`Stalled`. Needs a known optimum.

    Parameters
    ----------
    tol : float
        The relative-suboptimality target.
    max_iter : int, optional
        The iteration budget.
    max_time : float, optional
        The time budget (used only without ``max_iter``).
    factor : float, default :data:`DEFAULT_PROJECTION_FACTOR` (10)
    window : int, default 100
        Observations the rate is measured over (at least this many before it can fire).

    Attributes
    ----------
    projection : tuple of (float, int) or None
        The latest ``(time, iterations)`` projected to the target.
    """

    kind = "budget"
    status = "projected"
    needs_optimum = True

    def __init__(self, tol: float, max_iter: int | None = None, max_time: float | None = None,
                 factor: float = DEFAULT_PROJECTION_FACTOR, window: int = 100) -> None:
        self.tol = _positive("tol", tol)
        self.max_iter = None if max_iter is None else _count("max_iter", max_iter)
        self.max_time = None if max_time is None else _positive("max_time", max_time)
        self.factor = _positive("factor", factor)
        self.window = _count("window", window)
        self.projection: tuple[float, int] | None = None
        self._hist: list[tuple[int, float, float]] = []

    def to_dict(self) -> dict[str, Any]:
        return {"rule": type(self).__name__, "tol": self.tol, "max_iter": self.max_iter,
                "max_time": self.max_time, "factor": self.factor, "window": self.window}

    def reset(self) -> None:
        self.projection = None
        self._hist = []

    def _project(self, s: State) -> tuple[float, int] | None:
        assert s.fun is not None and s.fstar is not None
        gap0 = s.f0 - s.fstar
        g = (s.fun - s.fstar) / gap0 if gap0 > 0 else 0.0
        if self._hist:
            g = min(g, math.exp(self._hist[-1][2]))
        if not g > 0:
            return None
        self._hist.append((s.iterate, s.time, math.log(g)))
        if len(self._hist) > self.window + 1:
            del self._hist[0]
        if len(self._hist) <= self.window:
            return None
        (i0, t0, l0), (i1, t1, l1) = self._hist[0], self._hist[-1]
        if i1 <= i0 or l1 >= l0:
            return None  # no progress: Stalled's case
        per_it = (l1 - l0) / (i1 - i0)
        more = (math.log(self.tol) - l1) / per_it
        if more <= 0:
            return None
        return t1 + more * (t1 - t0) / (i1 - i0), int(math.ceil(i1 + more))

    def check(self, s: State) -> bool:
        if s.fun is None or s.fstar is None or not math.isfinite(s.fun):
            return False
        p = self._project(s)
        if p is None:
            return False
        self.projection = p
        if self.max_iter is not None:
            return p[1] > self.factor * self.max_iter
        return self.max_time is not None and p[0] > self.factor * self.max_time

    def explain(self) -> str:
        """The projection, for the run's message."""
        if self.projection is None:
            return "no projection"
        t, n = self.projection
        budget = (f"{self.max_iter} iterations" if self.max_iter is not None
                  else f"{self.max_time:g} s")
        return (f"at its observed linear rate the target would take about {n} "
                f"iterations ({t:.3g} s), over {self.factor:g}x the budget of {budget}; "
                "stopped early (a projection, not a result)")


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


def by_priority(rules: Iterable[Rule]) -> list[Rule]:
    """``rules`` in the order a run checks them: divergence rules first, then the others in
    declaration order (the one place that decides which rule wins a tie).

    A run whose objective is non-finite or exploded at the check where a budget or a target
    also fires is reported ``diverged``.

    Parameters
    ----------
    rules : iterable of Rule
        Leaf rules (``rule.rules()``).

    Returns
    -------
    list of Rule
    """
    return sorted(rules, key=lambda r: r.kind != "divergence")  # stable otherwise


def first_fired(rules: Iterable[Rule], s: State) -> Rule | None:
    """The first rule of :func:`by_priority` order that fires at ``s``, or None.

    Rules after it are not checked (a stateful rule's state stops where the run stops).

    Parameters
    ----------
    rules : iterable of Rule
        Leaf rules.
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


def default_stopping(
    tol: float = 1e-6,
    *,
    max_iter: int | None = 100_000,
    max_time: float | None = 60.0,
    max_evals: int | None = None,
    target: Rule | None = None,
    divergence_factor: float | None = DEFAULT_DIVERGENCE_FACTOR,
    stall: bool = True,
    projection: bool = True,
    projection_window: int = 100,
) -> AnyOf:
    """The default rule: a target, the budgets, divergence, stall and rate-projection checks.

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
    stall : bool, default True
        Add :class:`Stalled` with its defaults (a flat-lined run ends ``stalled``).
    projection : bool, default True
        Add :class:`RateProjection` (factor 10) to a relative-suboptimality target: a run
        whose linear rate projects far beyond the budget ends ``projected``.
    projection_window : int, default 100
        Observations :class:`RateProjection` measures the rate over.

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
    if stall:
        rules.append(Stalled())
    if projection and target is None and (max_iter is not None or max_time is not None):
        rules.append(RateProjection(tol, max_iter=max_iter, max_time=max_time,
                                    window=projection_window))
    return AnyOf(*rules)


_RULES: dict[str, type[Rule]] = {
    c.__name__: c
    for c in (RelativeSuboptimality, AbsoluteSuboptimality, LossTarget, GradientNorm,
              MetricTarget, RelativeChange, MaxIter, MaxTime, MaxEvals, Divergence, Stalled,
              RateProjection)
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
    "DEFAULT_DIVERGENCE_FACTOR", "DEFAULT_PROJECTION_FACTOR", "DEFAULT_STALL_RTOL",
    "DEFAULT_STALL_WINDOW", "AbsoluteSuboptimality", "AccuracyTarget", "AnyOf", "Divergence",
    "GradientNorm", "LossTarget", "MaxEvals", "MaxIter", "MaxTime", "MetricTarget", "RateProjection",
    "RelativeChange", "RelativeSuboptimality", "Stalled", "Rule", "State", "by_priority",
    "default_stopping", "first_fired", "rule_from_dict",
]
