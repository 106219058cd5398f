"""The trace of one run: one row per observed iterate (:class:`Trace`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Trace:
    """Observations of one run, one row per observed iterate.

    Attributes
    ----------
    iteration, nfev, njev : ndarray of int64, shape (m,)
        Index of the observed iterate, and evaluations spent by then.
    time, fun, grad_norm : ndarray of float64, shape (m,)
        Timed seconds when the objective was known, the objective (row 0 in float64), and the
        gradient's 2-norm (NaN where no rule or callback read it).
    judged : ndarray of bool, shape (m,)
        Whether ``fun`` is the value the stopping rule was judged on (the float64 host
        evaluation of a minibatch run); False where it is the screen's value, evaluated on the
        run's backend and clear of every target by its margin (docs/concepts.md, "The
        target"). All True when not given (files saved before the column existed).
    """

    iteration: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fun: np.ndarray = field(default_factory=lambda: np.zeros(0))
    grad_norm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    nfev: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    njev: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    judged: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    COLUMNS = ("iteration", "time", "fun", "grad_norm", "nfev", "njev", "judged")

    def __post_init__(self) -> None:
        if len(self.judged) == 0 and len(self) > 0:
            object.__setattr__(self, "judged", np.ones(len(self), dtype=bool))

    def __len__(self) -> int:
        return int(self.iteration.shape[0])

    def relative_suboptimality(self, f0: float, fstar: float | None) -> np.ndarray:
        """``(fun - f*) / (f0 - f*)`` per row (NaN without a known optimum)."""
        if fstar is None:
            return np.full(len(self), np.nan)
        gap0 = f0 - fstar
        return (self.fun - fstar) / gap0 if gap0 > 0 else np.full(len(self), np.nan)

    def to_dict(self) -> dict[str, list[Any]]:
        """Columns as lists (NaN kept); ``judged`` only where a row is not (a file then reads
        as one saved before the column existed)."""
        cols = self.COLUMNS if not self.judged.all() else self.COLUMNS[:-1]
        return {c: getattr(self, c).tolist() for c in cols}

    @classmethod
    def from_dict(cls, d: dict[str, list[Any]]) -> Trace:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, dict):
            raise ValueError(f"a trace must be a JSON object of columns, got {d!r:.60}")
        cols: dict[str, np.ndarray] = {}
        for c in cls.COLUMNS[:-1]:
            a = np.asarray(d.get(c, []), dtype=np.float64)
            if a.ndim != 1:
                raise ValueError(f"trace column {c!r} must be a flat list of numbers, got "
                                 f"{a.ndim} dimensions")
            whole = np.isfinite(a) & (a == np.round(a))
            if c in ("iteration", "nfev", "njev") and not whole.all():
                raise ValueError(f"trace column {c!r} must hold whole numbers, got "
                                 f"{float(a[~whole][0])!r}")
            cols[c] = a.astype(np.int64) if c in ("iteration", "nfev", "njev") else a
        judged = np.asarray(d.get("judged", []))
        if judged.ndim != 1 or judged.size and judged.dtype != bool:
            raise ValueError(f"trace column 'judged' must be a flat list of true/false, got "
                             f"{judged.tolist()!r:.60}")
        if judged.size and judged.size != cols["iteration"].size:
            raise ValueError(f"trace column 'judged' has {judged.size} rows, the trace "
                             f"{cols['iteration'].size}")
        return cls(**cols, judged=judged.astype(bool))


__all__ = ["Trace"]
