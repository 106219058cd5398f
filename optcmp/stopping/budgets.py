"""Budget rules: iterations, evaluations, CPU seconds, wall seconds (the run ends unsuccessful).

:class:`MaxIter`, :class:`MaxEvals` and :class:`MaxCPUTime` do not depend on the load of the
machine (a busy host slows a run's wall clock, not its iterations, evaluations or, mostly, its
process CPU time); :class:`MaxTime` is a wall-clock cap, for a user who asks for one.
"""

from __future__ import annotations

from optcmp.stopping.base import AnyOf, Rule, State, positive_count, positive_number


class MaxIter(Rule):
    """Budget: at most ``n`` iterations (status ``max_iter``)."""

    kind = "budget"
    status = "max_iter"

    def __init__(self, n: int) -> None:
        self.n = positive_count("max_iter", n)

    def check(self, s: State) -> bool:
        return s.nit >= self.n


class MaxTime(Rule):
    """Budget: at most ``seconds`` of timed optimizer steps, wall clock (status ``timeout``).

    A wall-clock cap depends on the load of the machine: the same run ends at a different
    iteration when other work shares the cores. Use :class:`MaxIter`, :class:`MaxEvals` or
    :class:`MaxCPUTime` for budgets that do not.
    """

    kind = "budget"
    status = "timeout"

    def __init__(self, seconds: float) -> None:
        self.seconds = positive_number("max_time", seconds)

    def check(self, s: State) -> bool:
        return s.time >= self.seconds


class MaxCPUTime(Rule):
    """Budget: at most ``seconds`` of process CPU time in the timed steps (``max_cpu_time``).

    Process CPU time (:func:`time.process_time`, every thread of the process) counts the
    time the run computed, not the time it waited for a core, so other work on the host
    changes it far less than the wall clock (caches and memory bandwidth shared with other
    processes can still lengthen it a little). A run stopped by it ends at the first
    observation past the budget.
    """

    kind = "budget"
    status = "max_cpu_time"

    def __init__(self, seconds: float) -> None:
        self.seconds = positive_number("max_cpu_time", seconds)

    def check(self, s: State) -> bool:
        return s.cpu_time >= self.seconds


class MaxEvals(Rule):
    """Budget: at most ``n`` function evaluations (status ``max_evals``)."""

    kind = "budget"
    status = "max_evals"

    def __init__(self, n: int) -> None:
        self.n = positive_count("max_evals", n)

    def check(self, s: State) -> bool:
        return s.nfev >= self.n


def with_iteration_cap(rule: Rule, n: int) -> Rule:
    """``rule`` with its iteration budget lowered to ``n`` (a :class:`MaxIter` added if none).

    Parameters
    ----------
    rule : Rule
    n : int
        The cap.

    Returns
    -------
    Rule
        A new composition; ``rule`` is not changed.
    """
    cap = positive_count("max_iter", n)
    leaves = rule.rules()
    budgets = [r.n for r in leaves if isinstance(r, MaxIter)]
    if budgets and min(budgets) <= cap:
        return AnyOf(*leaves)
    out = [MaxIter(cap) if isinstance(r, MaxIter) else r for r in leaves]
    return AnyOf(*out) if budgets else AnyOf(*out, MaxIter(cap))


#: The budget rules a run needs at least one of (a stall test is no budget: it may never fire).
BUDGET_RULES = (MaxIter, MaxTime, MaxEvals, MaxCPUTime)

__all__ = ["BUDGET_RULES", "MaxCPUTime", "MaxEvals", "MaxIter", "MaxTime", "with_iteration_cap"]
