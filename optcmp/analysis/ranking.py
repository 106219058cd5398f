"""The one ranking of a comparison: the order of the table, the verdict and the report.

One ranking for all three, so they always agree. An entry (optimizer label, backend, device,
dtype) is ranked by the median time-to-target of its runs, the verdict's repetitions included,
when more than half of them reached the target; the others follow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import median

from optcmp.analysis import format as fmt
from optcmp.analysis.stats.keys import solver_key
from optcmp.results import ComparisonData, RunResult

Key = tuple[str, str, str, str]


#: Row groups after the ranked entries (budget ends and divergence are 1).
_LATE = {"failed": 2, "skipped": 3}


@dataclass(frozen=True)
class Ranked:
    """One entry of the ranking and the runs its figures come from."""

    key: Key
    runs: tuple[RunResult, ...]

    @property
    def reached(self) -> tuple[RunResult, ...]:
        """The runs that reached the target."""
        return tuple(r for r in self.runs if r.time_to_target is not None)

    @property
    def ranked(self) -> bool:
        """True when more than half of the runs reached the target."""
        return 2 * len(self.reached) > len(self.runs)

    @property
    def time(self) -> float | None:
        """Median time-to-target of the runs that reached it (None: not ranked)."""
        if not self.ranked:
            return None
        return median(float(r.time_to_target or 0.0) for r in self.reached)

    @property
    def cpu_time(self) -> float | None:
        """Median CPU time to the target, when every run that reached it recorded one."""
        cpu = [r.cpu_time_to_target for r in self.reached]
        if not self.ranked or not all(c is not None and c > 0 for c in cpu):
            return None
        return median(float(c or 0.0) for c in cpu)

    @property
    def name(self) -> str:
        """``"<label> on <backend>"`` (the device when it is not the CPU)."""
        label, backend, device, _ = self.key
        return f"{label} on {backend}" + ("" if device == "cpu" else f"/{device}")


def entries(runs: Sequence[RunResult]) -> dict[Key, list[RunResult]]:
    """The runs of each entry (optimizer label, backend, device, dtype), skipped runs left out."""
    out: dict[Key, list[RunResult]] = {}
    for r in runs:
        if r.status != "skipped":
            out.setdefault(solver_key(r), []).append(r)
    return out


def rank_runs(runs: Sequence[RunResult]) -> list[Ranked]:
    """Every entry of ``runs``: the ranked ones by median time-to-target, then the others."""
    all_ = [Ranked(k, tuple(v)) for k, v in entries(runs).items()]
    ranked = sorted((e for e in all_ if e.ranked), key=lambda e: (e.time, e.key))
    return ranked + [e for e in all_ if not e.ranked]


def ranking(comp: ComparisonData) -> list[Ranked]:
    """The ranking of a comparison: its runs and its verdict's repetitions together."""
    return rank_runs([*comp.runs, *comp.verdict_runs])


def row_key(comp: ComparisonData) -> Callable[[RunResult], tuple[int, int, float, str, str]]:
    """The sort key of the table's rows: ranked entries in their rank, then the other runs by
    timed seconds, then failed and skipped runs."""
    pos = {e.key: i for i, e in enumerate(ranking(comp)) if e.ranked}

    def key(r: RunResult) -> tuple[int, int, float, str, str]:
        ttt = r.time_to_target
        own = float(ttt if ttt is not None else r.time)
        k = solver_key(r)
        if k in pos and r.status != "skipped":
            return (0, pos[k], (0.0 if ttt is not None else 1e300) + own, r.label, r.backend)
        group = 0 if ttt is not None else _LATE.get(r.status, 1)
        return (1 + group, 0, own, r.label, r.backend)

    return key


def ranking_note(comp: ComparisonData) -> str:
    """The table's line on its order when the verdict's repetitions decide it."""
    if not comp.verdict_runs:
        return ""
    again = {solver_key(r) for r in comp.verdict_runs}
    several = [e for e in ranking(comp) if e.ranked and e.key in again]
    if not several:
        return ""
    figs = ", ".join(f"{e.name} {fmt.seconds_fixed(e.time)}" for e in several)
    n = max(len(e.runs) for e in several)
    return (f"order: by the verdict's medians of {n} runs each ({figs}); those rows show one "
            "run, the other rows their only run")


def rank_of(comp: ComparisonData) -> dict[Key, int]:
    """The position of each entry in :func:`ranking` (for the report's summary order)."""
    return {e.key: i for i, e in enumerate(ranking(comp))}


__all__ = ["Ranked", "entries", "rank_of", "rank_runs", "ranking", "ranking_note", "row_key"]
