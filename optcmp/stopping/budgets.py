"""Budget rules: iterations, evaluations, CPU seconds, wall seconds (the run ends unsuccessful).

Only :class:`MaxTime` depends on the load (docs/concepts.md, 'Time you can trust').
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
    """Budget: at most ``seconds`` of timed optimizer steps, wall clock (status ``timeout``)."""

    kind = "budget"
    status = "timeout"

    def __init__(self, seconds: float) -> None:
        self.seconds = positive_number("max_time", seconds)

    def check(self, s: State) -> bool:
        return s.time >= self.seconds


class MaxCPUTime(Rule):
    """Budget: at most ``seconds`` of process CPU time in the timed steps (``max_cpu_time``)."""

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

    Returns
    -------
    Rule
        A new composition.
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
