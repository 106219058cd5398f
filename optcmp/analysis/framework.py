"""The framework factor of one optimizer: the same algorithm on two backends, which is faster.

A ratio of median times-to-target, or of time per iteration where an equivalence check proves
the trajectories identical (why: docs/cli.md, the paragraph on ``framework_factors``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from optcmp.analysis.ranking import Ranked, rank_runs
from optcmp.results import RunResult


class Equivalence(Protocol):
    """What the framework factor reads of an :class:`optcmp.EquivalenceResult`."""

    problem: str
    optimizer: str
    dtype: str
    steps: int
    backends: list[str]
    impls: dict[str, str]
    gradients: dict[str, str]

    @property
    def verdict(self) -> str:
        """``"equivalent"``, ``"different"`` or ``"inconclusive"``."""
        ...

    @property
    def max_rel_diff(self) -> float:
        """The largest relative difference over all steps and backends."""
        ...


@dataclass(frozen=True)
class FrameworkFactor:
    """One optimizer's backends, fastest first, with the measure that ordered them."""

    label: str
    device: str
    dtype: str
    basis: str
    seconds: dict[str, float]
    iterations: int | None = None
    max_rel_diff: float | None = None
    checked_steps: int | None = None

    def factor(self, backend: str) -> float:
        """``seconds[backend]`` over the fastest backend's."""
        if backend not in self.seconds:
            raise KeyError(f"backend {backend!r} has no {self.basis} measure for "
                           f"{self.label}; measured: {sorted(self.seconds)}")
        first = next(iter(self.seconds.values()))
        return self.seconds[backend] / first


def as_equivalences(equivalence: Equivalence | Sequence[Equivalence] | None
                    ) -> list[Equivalence]:
    """``equivalence`` as a list (None: empty), each checked to be an equivalence result."""
    if equivalence is None:
        return []
    items: list[Any] = (list(equivalence) if isinstance(equivalence, (list, tuple))
                        else [equivalence])
    for e in items:
        if not all(hasattr(e, a) for a in ("verdict", "impls", "max_rel_diff", "optimizer")):
            raise TypeError(f"equivalence must be an optcmp.EquivalenceResult (from "
                            f"optcmp.check_equivalence) or a list of them, got "
                            f"{type(e).__name__}")
    return items


def describe(run: RunResult) -> str:
    """The run's optimizer as ``OptimizerSpec.describe()`` writes it."""
    hp = ", ".join(f"{k}={v!r}" for k, v in run.hyperparameters.items())
    return f"{run.optimizer}({hp})"


def proving(group: Sequence[Ranked], equivalences: Sequence[Equivalence]) -> Equivalence | None:
    """The float64 ``"equivalent"`` check that proves the runs of ``group`` take identical
    steps (whatever their execution mode), or None."""
    runs = [r for e in group for r in e.runs]
    return next((eq for eq in equivalences if eq.verdict == "equivalent"
                 and eq.dtype == "float64" and all(_matches(eq, r) for r in runs)), None)


def _matches(eq: Equivalence, run: RunResult) -> bool:
    """Whether ``eq`` checked the run's problem, optimizer, backend, impl and gradient."""
    b = run.backend
    return (run.dtype == "float64" and run.problem == eq.problem and describe(run) == eq.optimizer
            and b in eq.backends and eq.impls.get(b) == run.impl
            and eq.gradients.get(b, run.conditions.gradient) == run.conditions.gradient)


def common_iteration(runs: Sequence[RunResult]) -> int | None:
    """The last iteration every run's trace recorded."""
    common: set[int] | None = None
    for r in runs:
        its = {int(i) for i in np.asarray(r.trace.iteration)}
        common = its if common is None else common & its
    if not common or max(common) <= 0:
        return None
    return max(common)


def per_iteration_factors(group: Sequence[Ranked], eq: Equivalence) -> FrameworkFactor | None:
    """The backends of one optimizer by median time per iteration up to :func:`common_iteration`."""
    runs = [r for e in group for r in e.runs]
    n = common_iteration(runs)
    if n is None:
        return None
    seconds = {}
    for e in group:
        per = [float(np.asarray(r.trace.time)[list(r.trace.iteration).index(n)]) / n
               for r in e.runs]
        seconds[e.key[1]] = float(np.median(per))
    label, _, device, dtype = group[0].key
    ordered = dict(sorted(seconds.items(), key=lambda kv: kv[1]))
    return FrameworkFactor(label, device, dtype, "per-iteration", ordered, n,
                           float(eq.max_rel_diff), int(eq.steps))


def groups(ranked: Sequence[Ranked]) -> dict[tuple[str, str, str], list[Ranked]]:
    """The entries of each (optimizer label, device, dtype) that ran on two or more backends."""
    out: dict[tuple[str, str, str], list[Ranked]] = {}
    for e in ranked:
        label, _, device, dtype = e.key
        out.setdefault((label, device, dtype), []).append(e)
    return {k: v for k, v in out.items() if len(v) >= 2}


def framework_factors(runs: Sequence[RunResult],
                      equivalence: Equivalence | Sequence[Equivalence] | None = None,
                      rank_by: str | None = None) -> list[FrameworkFactor]:
    """For each optimizer that ran on several backends: its backends, fastest first (by time
    per iteration where ``equivalence`` proves the trajectories identical, else by
    time-to-target on the ranking's clock, :func:`optcmp.analysis.ranking.clock_of`)."""
    eqs = as_equivalences(equivalence)
    out = []
    for (label, device, dtype), group in groups(rank_runs(runs, rank_by)).items():
        eq = proving(group, eqs)
        fac = per_iteration_factors(group, eq) if eq is not None else None
        if fac is None:
            seconds = {e.key[1]: float(e.time) for e in group if e.ranked and e.time is not None}
            basis = "cpu time-to-target" if group[0].clock == "cpu" else "time-to-target"
            fac = FrameworkFactor(label, device, dtype, basis, seconds)
        out.append(fac)
    return out


__all__ = ["Equivalence", "FrameworkFactor", "as_equivalences", "common_iteration",
           "describe", "framework_factors", "groups", "per_iteration_factors", "proving"]
