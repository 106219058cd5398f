"""The status and message of a run once its loop has ended, in one place.

Which of several rules firing at one observation stopped the run is decided by
:func:`optcmp.stopping.first_fired`; this module words the decision.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from optcmp.stopping import Divergence, Rising, Rule, Stalled, State, first_fired

if TYPE_CHECKING:
    from optcmp.engine.drivers import LoopRecord
    from optcmp.engine.monitor import Monitor

#: Statuses a budget can never override (the run ended for another reason).
FINAL = ("converged", "stopped", "failed", "skipped", "diverged")


def run_status(monitor: Monitor, record: LoopRecord) -> tuple[str, str]:
    """The status and message of a run whose loop ended normally."""
    if monitor.callback_stop:
        return "stopped", "callback raised StopIteration"
    if monitor.fired is not None:
        r = monitor.fired
        if r.kind == "target":
            return "converged", f"target reached: {r.describe()}"
        if r.kind == "divergence":
            return "diverged", divergence_message(r, monitor.last)
        if isinstance(r, Stalled):
            where = "" if monitor.last is None else f" (at iteration {monitor.last.iterate})"
            return r.status, r.explain() + where
        return r.status, f"budget exhausted: {r.describe()}"
    if record.report is not None:
        return (record.report.get("status") or "stalled",
                record.report.get("message", ""))
    return "failed", "the run ended without a stopping decision"


#: Statuses of a run that ended short of its target, by a budget or a stall.
SHORT = ("max_iter", "timeout", "max_evals", "max_cpu_time", "stalled")


def rounding_wins(status: str, message: str, noop: int | None, nit: int,
                  dtype: str) -> tuple[str, str]:
    """``rounded`` for a low-precision run that ended short of its target (``SHORT``) with more
    than half its steps changing no parameter: its updates rounded away."""
    if noop is None or status not in SHORT or 2 * noop <= nit:
        return status, message
    return "rounded", (f"stalled by rounding: {noop:,} of {nit:,} steps ({noop / nit:.1%}) "
                       f"changed no {dtype} parameter (each update below half an ulp of the "
                       f"weight it updates); {message}")


def divergence_message(rule: Rule, s: State | None) -> str:
    """``"diverged: ..."``: what the divergence rule saw at ``s``."""
    if s is None:
        return "diverged"
    if isinstance(rule, (Divergence, Rising)):
        what = rule.explain(s)
    elif s.fun is not None and not math.isfinite(s.fun):  # a user's own divergence rule
        what = f"objective is non-finite ({s.fun}) at iteration {s.iterate}"
    else:
        what = f"{rule.describe()} fired at iteration {s.iterate}"
    return f"diverged: {what} (after {s.nit} steps)"


def divergence_wins(status: str, message: str, fun: float | None, *, rule: Rule, nit: int,
                    f0: float, fstar: float | None) -> tuple[str, str]:
    """``diverged`` when a budget fired without an objective value (a minibatch step, scipy's
    limit) at an iterate whose float64 objective the divergence rules, or non-finiteness, flag."""
    if status in FINAL or fun is None:
        return status, message
    s = State(nit=nit, iterate=nit, fun=float(fun), f0=f0, fstar=fstar)
    fired = first_fired((r for r in rule.rules() if r.kind == "divergence"), s)
    if fired is None and math.isfinite(s.fun or 0.0):
        return status, message
    what = divergence_message(fired, s) if fired is not None else (
        f"diverged: objective is non-finite ({s.fun}) at iteration {nit} (after {nit} steps)")
    return "diverged", f"{what}; the run's budget ended it at the same point ({message})"


__all__ = ["FINAL", "SHORT", "divergence_message", "divergence_wins", "rounding_wins",
           "run_status"]
