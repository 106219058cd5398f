"""Rules that end a run early, before its budget: divergence, a stall, a rate projection.

:class:`Divergence` (kind ``"divergence"``: a non-finite or exploding objective, checked first
at every observation), :class:`Stalled` (a flat-lined objective), :class:`RateProjection` (a
linear rate that cannot reach the target within the budget) and :class:`RelativeChange` (a
stall test on consecutive values). None of them is a target: a run they stop is unsuccessful.
"""

from __future__ import annotations

import math
from typing import Any

from optcmp.stopping.base import Rule, State, positive_count, positive_number

#: Default window of :class:`Stalled`: observations (iterations for full-batch runs).
DEFAULT_STALL_WINDOW = 200
#: Default relative threshold of :class:`Stalled`.
DEFAULT_STALL_RTOL = 1e-6
#: Default factor of :class:`RateProjection`: stop when the projection exceeds the budget by it.
DEFAULT_PROJECTION_FACTOR = 10.0
#: Explosion factor of the default stopping rule (:func:`~optcmp.stopping.default_stopping`):
#: an objective above ``1e10 * max(|f0|, 1)`` counts as diverged.
DEFAULT_DIVERGENCE_FACTOR = 1e10


class RelativeChange(Rule):
    """Stop when ``|f_k - f_{k-1}| <= tol * max(|f_k|, 1)`` for ``patience`` observations.

    This rule is a *stall* test, not a target: its status is ``stalled``.
    """

    kind = "budget"
    status = "stalled"

    def __init__(self, tol: float, patience: int = 1) -> None:
        self.tol = positive_number("tol", tol)
        self.patience = positive_count("patience", patience)
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
    iteration 300; with the defaults it ends ``stalled`` 200 iterations later
    instead of spending its whole budget.
    """

    kind = "budget"
    status = "stalled"

    def __init__(self, window: int = DEFAULT_STALL_WINDOW, rtol: float = DEFAULT_STALL_RTOL
                 ) -> None:
        self.window = positive_count("window", window)
        self.rtol = positive_number("rtol", rtol)
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
        self.tol = positive_number("tol", tol)
        self.max_iter = None if max_iter is None else positive_count("max_iter", max_iter)
        self.max_time = None if max_time is None else positive_number("max_time", max_time)
        self.factor = positive_number("factor", factor)
        self.window = positive_count("window", window)
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


class Divergence(Rule):
    """Divergence: a non-finite objective or gradient, or ``f > factor * max(|f0|, 1)``.

    Parameters
    ----------
    factor : float, optional
        Explosion factor. ``None`` (the default of this class, kept for backwards
        compatibility) checks non-finite values only;
        :func:`~optcmp.stopping.default_stopping` uses
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
        self.factor = None if factor is None else positive_number("factor", factor)

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


__all__ = ["DEFAULT_DIVERGENCE_FACTOR", "DEFAULT_PROJECTION_FACTOR", "DEFAULT_STALL_RTOL",
           "DEFAULT_STALL_WINDOW", "Divergence", "RateProjection", "RelativeChange", "Stalled"]
