"""Budget rules: iterations, timed seconds, function evaluations (the run ends unsuccessful)."""

from __future__ import annotations

from optcmp.stopping.base import Rule, State, positive_count, positive_number


class MaxIter(Rule):
    """Budget: at most ``n`` iterations (status ``max_iter``)."""

    kind = "budget"
    status = "max_iter"

    def __init__(self, n: int) -> None:
        self.n = positive_count("max_iter", n)

    def check(self, s: State) -> bool:
        return s.nit >= self.n


class MaxTime(Rule):
    """Budget: at most ``seconds`` of timed optimizer steps (status ``timeout``)."""

    kind = "budget"
    status = "timeout"

    def __init__(self, seconds: float) -> None:
        self.seconds = positive_number("max_time", seconds)

    def check(self, s: State) -> bool:
        return s.time >= self.seconds


class MaxEvals(Rule):
    """Budget: at most ``n`` function evaluations (status ``max_evals``)."""

    kind = "budget"
    status = "max_evals"

    def __init__(self, n: int) -> None:
        self.n = positive_count("max_evals", n)

    def check(self, s: State) -> bool:
        return s.nfev >= self.n


__all__ = ["MaxEvals", "MaxIter", "MaxTime"]
