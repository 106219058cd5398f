"""Rules that end a run early, unsuccessful, where the outcome is exact: divergence, a stall.

Censoring is the sweep's (:mod:`optcmp.sweep.execute`), not a rule's (docs/concepts.md).
"""

from __future__ import annotations

import math

from optcmp.stopping.base import Rule, State, positive_count, positive_number

#: Default window of :class:`Stalled`: observations (iterations for full-batch runs).
DEFAULT_STALL_WINDOW = 200
#: Default relative threshold of :class:`Stalled`: ``None``, the exact test.
DEFAULT_STALL_RTOL: float | None = None
#: Float64 units in the last place within which two values count as equal.
STALL_ULPS = 4
#: Default window of :class:`Rising`: observations.
DEFAULT_RISING_WINDOW = 200
_EPS = 2.220446049250313e-16
#: Explosion factor of :func:`~optcmp.stopping.default_stopping`'s :class:`Divergence`.
DEFAULT_DIVERGENCE_FACTOR = 1e10


class RelativeChange(Rule):
    """Stall test (status ``stalled``): ``|f_k - f_{k-1}| <= tol * max(|f_k|, 1)`` for
    ``patience`` observations."""

    kind = "budget"
    status = "stalled"

    def __init__(self, tol: float, patience: int = 1) -> None:
        self.tol = positive_number("tol", tol)
        self.patience = positive_count("patience", patience)
        self.reset()

    def reset(self) -> None:
        self._last: float | None = None
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
    """Stop as ``stalled`` when the best objective seen has not improved over a window.

    ``rtol=None``: by no more than :data:`STALL_ULPS` float64 ulps of ``|f_best|``; a number:
    by no more than ``rtol * scale``, ``scale`` ``f_best - f*`` when the optimum is known, else
    ``max(|f_best|, 1e-12)``.

    Parameters
    ----------
    window : int, default :data:`DEFAULT_STALL_WINDOW` (200)
        Observations to look back over.
    rtol : float, optional
    """

    kind = "budget"
    status = "stalled"

    def __init__(self, window: int = DEFAULT_STALL_WINDOW,
                 rtol: float | None = DEFAULT_STALL_RTOL) -> None:
        self.window = positive_count("window", window)
        self.rtol = None if rtol is None else positive_number("rtol", rtol)
        self.reset()

    def reset(self) -> None:
        self._best: list[float] = []
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
        if self.rtol is None:
            return self._best[0] - best <= STALL_ULPS * _EPS * abs(best)
        scale = max(abs(best - s.fstar) if s.fstar is not None else abs(best), 1e-12)
        return self._best[0] - best <= self.rtol * scale

    def explain(self) -> str:
        """Why it fired, for the run's message."""
        best = self._best[-1] if self._best else math.nan
        rose = (f"; the objective rose to {self._last:.6g} from its best {best:.6g}"
                if self._last > best + abs(best) * 1e-3 else "")
        how = (f"by no more than {STALL_ULPS} float64 ulps" if self.rtol is None
               else f"by <= {self.rtol:g} (relative)")
        return (f"objective flat: best value improved {how} over the "
                f"last {self.window} observations{rose}")


class Rising(Rule):
    """Divergence by trend: the objective rose at every one of the last ``window`` observations.

    The last ``window + 1`` values never decrease and the last exceeds the first by more than
    :data:`STALL_ULPS` float64 ulps.

    Parameters
    ----------
    window : int, default :data:`DEFAULT_RISING_WINDOW` (200)
    """

    kind = "divergence"
    status = "diverged"

    def __init__(self, window: int = DEFAULT_RISING_WINDOW) -> None:
        self.window = positive_count("window", window)
        self.reset()

    def reset(self) -> None:
        self._start = self._last = math.nan
        self._run = 0

    def check(self, s: State) -> bool:
        if s.fun is None or not math.isfinite(s.fun):
            return False
        if self._run and s.fun >= self._last:
            self._run += 1
        else:
            self._start, self._run = s.fun, 1
        self._last = s.fun
        return (self._run > self.window
                and self._last - self._start > STALL_ULPS * _EPS * abs(self._start))

    def explain(self, s: State) -> str:
        """The rise, for the run's message.

        Parameters
        ----------
        s : State

        Returns
        -------
        str
        """
        return (f"objective rose at every one of the last {self._run - 1} observations, from "
                f"{self._start:.6g} to {self._last:.6g}, at iteration {s.iterate}")


class Divergence(Rule):
    """Divergence: a non-finite objective or gradient, or ``f > factor * max(|f0|, 1)``.

    Parameters
    ----------
    factor : float, optional
        ``None``: only non-finite values (:func:`~optcmp.stopping.default_stopping` uses
        :data:`DEFAULT_DIVERGENCE_FACTOR`).
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
        return _nonfinite(s.fun) or self.exploded(s) or _nonfinite(s.grad_norm)

    def explain(self, s: State) -> str:
        """Why the rule fires on ``s``: a non-finite value, or an explosion (with the threshold).

        Parameters
        ----------
        s : State

        Returns
        -------
        str
        """
        if _nonfinite(s.fun):
            what = f"objective is non-finite ({s.fun})"
        elif self.exploded(s):
            assert s.fun is not None and self.factor is not None
            what = (f"objective exploded: {s.fun:.3g} > {self.factor:g} x max(|f0|, 1) "
                    f"(f0 = {s.f0:.6g})")
        elif _nonfinite(s.grad_norm):
            what = f"gradient norm is non-finite ({s.grad_norm})"
        else:
            what = "no divergence"
        return f"{what} at iteration {s.iterate}"

    def describe(self) -> str:
        return ("Divergence(factor=None)" if self.factor is None
                else f"Divergence(factor={self.factor:g})")


def _nonfinite(v: float | None) -> bool:
    """Whether an observed value is there and not finite."""
    return v is not None and not math.isfinite(v)


__all__ = ["DEFAULT_DIVERGENCE_FACTOR", "DEFAULT_RISING_WINDOW", "DEFAULT_STALL_RTOL",
           "DEFAULT_STALL_WINDOW", "STALL_ULPS", "Divergence", "RelativeChange", "Rising",
           "Stalled"]
