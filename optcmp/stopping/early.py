"""Rules that end a run early, before its budget, where the outcome is exact: divergence, a stall.

:class:`Divergence` (kind ``"divergence"``: a non-finite or exploding objective, checked first
at every observation), :class:`Rising` (kind ``"divergence"``: an objective that rose at every
observation of a window), :class:`Stalled` (an objective that has not changed at float64
resolution over a window) and :class:`RelativeChange` (a stall test on consecutive values).
None of them is a target: a run they stop is unsuccessful. A run that can no longer change a
comparison's answer is censored by the sweep (:mod:`optcmp.sweep.execute`), not by a rule.
"""

from __future__ import annotations

import math
from typing import Any

from optcmp.stopping.base import Rule, State, positive_count, positive_number

#: Default window of :class:`Stalled`: observations (iterations for full-batch runs).
DEFAULT_STALL_WINDOW = 200
#: Default relative threshold of :class:`Stalled`: ``None``, the exact test (no change of the
#: best value beyond :data:`STALL_ULPS` units in the last place of float64).
DEFAULT_STALL_RTOL: float | None = None
#: Units in the last place (float64) within which :class:`Stalled`'s exact test calls two
#: best values equal.
STALL_ULPS = 4
#: Default window of :class:`Rising`: observations.
DEFAULT_RISING_WINDOW = 200
_EPS = 2.220446049250313e-16
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
    """Stop as ``stalled`` when the objective has not changed over a window.

    Over the last ``window`` observations the best objective seen has improved by no more than
    ``rtol * scale``. With the default ``rtol=None`` the test is exact: no improvement beyond
    :data:`STALL_ULPS` units in the last place of ``|f_best|`` in float64, so the run can no
    longer change at the resolution it is computed in (a run still improving, however slowly,
    goes on to its budget or is censored by the sweep). With a number, ``scale`` is the
    remaining gap ``f_best - f*`` when the optimum is known and ``max(|f_best|, 1e-12)``
    otherwise (a relative-progress test the user chose). Best-so-far, so the noise of a
    stochastic run cannot hide a plateau. It counts observations, never seconds: the same run
    stalls at the same iteration on any machine under any load.

    Parameters
    ----------
    window : int, default :data:`DEFAULT_STALL_WINDOW` (200)
        Observations to look back over (one per iteration for full-batch runs, one per
        ``eval_every`` steps for minibatch runs).
    rtol : float, optional
        Relative improvement below which the run counts as flat; ``None`` (default): the exact
        float64 test.

    Raises
    ------
    ValueError
        ``window`` is not a positive integer, ``rtol`` not ``None`` or a finite number > 0.

    Examples
    --------
    A full-batch run whose iterate no longer moves (a step size of zero, a line search that
    cannot decrease ``f`` any more) ends ``stalled`` 200 iterations after its last change.
    """

    kind = "budget"
    status = "stalled"

    def __init__(self, window: int = DEFAULT_STALL_WINDOW,
                 rtol: float | None = DEFAULT_STALL_RTOL) -> None:
        self.window = positive_count("window", window)
        self.rtol = None if rtol is None else positive_number("rtol", rtol)
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
        if self.rtol is None:
            return self._best[0] - best <= STALL_ULPS * _EPS * abs(best)
        ref = s.fstar if s.fstar is not None else 0.0
        scale = max(abs(best - ref), 1e-12) if s.fstar is not None else max(abs(best), 1e-12)
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

    Fires when the last ``window + 1`` observed objective values never decrease and the last
    exceeds the first by more than :data:`STALL_ULPS` float64 ulps: a run climbing steadily
    (e.g. gradient descent with a step just above ``2/L``) ends ``diverged`` instead of waiting
    for an explosion or a budget. A converging run, deterministic or stochastic, does not rise
    at every observation of a window. Kind ``"divergence"``: checked before the other rules.

    Parameters
    ----------
    window : int, default :data:`DEFAULT_RISING_WINDOW` (200)
        Observations (one per iteration for full-batch runs).

    Raises
    ------
    ValueError
        ``window`` is not a positive integer.
    """

    kind = "divergence"
    status = "diverged"

    def __init__(self, window: int = DEFAULT_RISING_WINDOW) -> None:
        self.window = positive_count("window", window)
        self._start = math.nan
        self._last = math.nan
        self._run = 0

    def to_dict(self) -> dict[str, Any]:
        return {"rule": type(self).__name__, "window": self.window}

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
            The observation it fired on.

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


__all__ = ["DEFAULT_DIVERGENCE_FACTOR", "DEFAULT_RISING_WINDOW", "DEFAULT_STALL_RTOL",
           "DEFAULT_STALL_WINDOW", "STALL_ULPS", "Divergence", "RelativeChange", "Rising",
           "Stalled"]
