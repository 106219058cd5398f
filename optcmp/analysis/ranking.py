"""The one ranking of a comparison: the order of the table, the verdict and the report.

One ranking for all three, so they always agree. An entry (optimizer label, backend, device,
dtype) is ranked by the median time-to-target of its runs, the verdict's repetitions included,
when more than half of them reached the target; the others follow. The clock it reads
(:func:`primary_clock`): the CPU time of each run's own threads where every run computed with one
thread on the CPU (other work on the host does not inflate it), else the wall time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import median

from optcmp.analysis import format as fmt
from optcmp.analysis.stats.keys import solver_key
from optcmp.results import ComparisonData, RunResult
from optcmp.timing import OWN_THREADS

Key = tuple[str, str, str, str]

#: The clocks a ranking can read (``rank_by``, ``--rank-by``).
CLOCKS = ("cpu", "wall")


#: Row groups after the ranked entries (budget ends and divergence are 1).
_LATE = {"failed": 2, "skipped": 3}


@dataclass(frozen=True)
class Ranked:
    """One entry of the ranking and the runs its figures come from."""

    key: Key
    runs: tuple[RunResult, ...]
    clock: str = "wall"

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
        """Median time-to-target on the ranking's :attr:`clock` (None: not ranked)."""
        return self.cpu_time if self.clock == "cpu" else self.wall_time

    @property
    def wall_time(self) -> float | None:
        """Median wall time-to-target of the runs that reached it (None: not ranked)."""
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
    def other_time(self) -> float | None:
        """Median time-to-target on the clock the ranking does not read."""
        return self.wall_time if self.clock == "cpu" else self.cpu_time

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


def primary_clock(runs: Sequence[RunResult]) -> str:
    """``"cpu"`` when every run that reached the target (none did: every run timed) computed
    with one thread on the CPU and recorded the CPU time of its own threads
    (:class:`optcmp.timing.ThreadCpu`), else ``"wall"`` (several threads, a device, or a
    process CPU time that idle pools inflate)."""
    timed = [r for r in runs if r.status not in ("skipped", "failed")]
    reached = [r for r in timed if r.time_to_target is not None]
    one = all(r.threads == 1 and r.device == "cpu"
              and str(r.conditions.contract.get("cpu_clock", "")).startswith(OWN_THREADS)
              and (r.cpu_time_to_target if r.time_to_target is not None else r.cpu_time)
              is not None for r in reached or timed)
    return "cpu" if timed and one else "wall"


def clock_of(runs: Sequence[RunResult], rank_by: str | None = None) -> str:
    """The clock a ranking of ``runs`` reads: ``rank_by``, or :func:`primary_clock`; CPU time
    asked for where a run that reached the target recorded none gives the wall time."""
    if rank_by is None:
        return primary_clock(runs)
    if rank_by not in CLOCKS:
        raise ValueError(f"rank_by must be one of {list(CLOCKS)} or None (CPU time where "
                         f"every run used one thread, else wall time), got {rank_by!r}")
    if rank_by == "cpu" and any(r.time_to_target is not None and not r.cpu_time_to_target
                                for r in runs):
        return "wall"
    return rank_by


def clock_line(clock: str, rank_by: str | None = None) -> str:
    """The line saying which clock a table or verdict ranks by (``rank_by``: as asked), and how
    to get the other."""
    if clock == "cpu":
        why = "as asked" if rank_by else "every run used one thread on the CPU"
        return f"ranked by: CPU time of each run's own threads ({why}; --rank-by wall for wall time)"
    why = ("as asked" if rank_by == "wall" else "a run that reached the target has no CPU time"
           if rank_by else "not every run timed its own single thread on the CPU")
    return f"ranked by: wall time ({why}; --rank-by cpu for CPU time)"


def rank_runs(runs: Sequence[RunResult], rank_by: str | None = None) -> list[Ranked]:
    """Every entry of ``runs``: the ranked ones by median time-to-target on the clock of
    :func:`clock_of` (``rank_by``: ``"cpu"``, ``"wall"`` or None), then the others."""
    clock = clock_of(runs, rank_by)
    all_ = [Ranked(k, tuple(v), clock) for k, v in entries(runs).items()]
    ranked = sorted((e for e in all_ if e.ranked),
                    key=lambda e: (e.time if e.time is not None else float("inf"), e.key))
    return ranked + [e for e in all_ if not e.ranked]


def rank_by_of(comp: ComparisonData, rank_by: str | None = None) -> str | None:
    """``rank_by``, else the comparison's ``settings["rank_by"]`` (None: the stated rule)."""
    return rank_by if rank_by is not None else comp.settings.get("rank_by")


def ranking(comp: ComparisonData, rank_by: str | None = None) -> list[Ranked]:
    """The ranking of a comparison: its runs and its verdict's repetitions together, on the
    clock ``rank_by`` (default :func:`rank_by_of`)."""
    return rank_runs([*comp.runs, *comp.verdict_runs], rank_by_of(comp, rank_by))


def row_key(comp: ComparisonData, rank_by: str | None = None
            ) -> Callable[[RunResult], tuple[int, int, float, str, str]]:
    """The sort key of the table's rows: ranked entries in their rank, then the other runs by
    timed seconds, then failed and skipped runs."""
    pos = {e.key: i for i, e in enumerate(ranking(comp, rank_by)) if e.ranked}

    def key(r: RunResult) -> tuple[int, int, float, str, str]:
        ttt = r.time_to_target
        own = float(ttt if ttt is not None else r.time)
        k = solver_key(r)
        if k in pos and r.status != "skipped":
            return (0, pos[k], (0.0 if ttt is not None else 1e300) + own, r.label, r.backend)
        group = 0 if ttt is not None else _LATE.get(r.status, 1)
        return (1 + group, 0, own, r.label, r.backend)

    return key


def ranking_note(comp: ComparisonData, rank_by: str | None = None) -> str:
    """The table's line on its order when the verdict's repetitions decide it."""
    if not comp.verdict_runs:
        return ""
    again = {solver_key(r) for r in comp.verdict_runs}
    several = [e for e in ranking(comp, rank_by) if e.ranked and e.key in again]
    if not several:
        return ""
    figs = ", ".join(f"{e.name} {fmt.seconds_fixed(e.time)}" for e in several)
    n = max(len(e.runs) for e in several)
    return (f"order: by the verdict's medians of {n} runs each ({figs}); those rows show one "
            "run, the other rows their only run")


def rank_of(comp: ComparisonData) -> dict[Key, int]:
    """The position of each entry in :func:`ranking` (for the report's summary order)."""
    return {e.key: i for i, e in enumerate(ranking(comp))}


__all__ = ["CLOCKS", "Ranked", "clock_line", "clock_of", "entries", "primary_clock", "rank_by_of",
           "rank_of", "rank_runs", "ranking", "ranking_note", "row_key"]
