"""The comparison's answer in one line: who reaches the target first, by what factor, how sure.

``Comparison.verdict()`` calls :func:`verdict`.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from optcmp.analysis import format as fmt
from optcmp.analysis.stats.bootstrap import factor_interval
from optcmp.analysis.stats.keys import solver_key
from optcmp.results import ComparisonData, RunResult

Entry = tuple[str, str, str, str]


def entries(runs: Sequence[RunResult]) -> dict[Entry, list[RunResult]]:
    """The runs of each entry (optimizer label, backend, device, dtype), skipped runs left out.

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    dict of (str, str, str, str) to list of RunResult
        In order of first appearance.
    """
    out: dict[Entry, list[RunResult]] = {}
    for r in runs:
        if r.status != "skipped":
            out.setdefault(solver_key(r), []).append(r)
    return out


def verdict(comp: ComparisonData) -> str:
    """The comparison's answer in words: who reaches the target first, by what factor, how sure.

    Entries are (optimizer label, backend, device, dtype); an entry's time is the median
    time-to-target of its repetitions (it must reach the target in more than half of them).
    The factor is the runner-up's time over the winner's, with a 95% bootstrap interval
    (:func:`~optcmp.analysis.stats.bootstrap.factor_interval`: over repetitions when both have
    two or more, else over the step times of the single runs), and the same factor in process
    CPU time. The verdict is "sure" when the interval excludes 1 and no run of the two entries
    was contended. A comparison with ``verdict_runs`` (more repetitions of its two fastest
    entries) is judged on those entries' runs and the extra repetitions, and says so.

    Parameters
    ----------
    comp : ComparisonData

    Returns
    -------
    str
        One line beginning ``"verdict: "``.
    """
    target = comp.settings.get("target") or "the target"
    if not comp.verdict_runs:
        return verdict_of(comp.runs, target)
    leaders = {solver_key(r) for r in comp.verdict_runs}
    runs = [r for r in comp.runs if solver_key(r) in leaders] + list(comp.verdict_runs)
    n = max(len(v) for v in entries(runs).values())
    return verdict_of(runs, target) + f" [the two fastest run {n} times each, interleaved]"


def verdict_of(runs: Sequence[RunResult], target: str = "the target") -> str:
    """The verdict line of :func:`verdict` over ``runs``.

    Parameters
    ----------
    runs : sequence of RunResult
    target : str, default "the target"
        The target in words, for the line saying that no entry reached it.

    Returns
    -------
    str
        One line beginning ``"verdict: "``.
    """
    ranked = []
    for key, entry_runs in entries(runs).items():
        hit = [r for r in entry_runs if r.time_to_target is not None]
        if 2 * len(hit) > len(entry_runs):
            ranked.append((median([float(r.time_to_target or 0.0) for r in hit]), key, hit))
    ranked.sort(key=lambda x: x[0])
    if not ranked:
        return f"verdict: no optimizer reached {target} (see each row's status and reason)"
    t0, (label, backend, *_), best = ranked[0]
    head = f"verdict: {label} on {backend} reaches the target first ({fmt.seconds_fixed(t0)})"
    if len(ranked) == 1:
        return head + "; no other optimizer and backend reached it"
    t1, (label1, backend1, *_), other = ranked[1]
    lo, hi, how = factor_interval(best, other)
    return (f"{head}, {t1 / t0:.2g}x faster than {label1} on {backend1} "
            f"({fmt.seconds_fixed(t1)}); 95% interval of the factor "
            f"{fmt.interval_bound(lo, 'down')}-{fmt.interval_bound(hi, 'up')} ({how})"
            f"{_cpu_factor(best, other)}; {_how_sure(best, other, lo)}")


def _cpu_factor(best: Sequence[RunResult], other: Sequence[RunResult]) -> str:
    """``"; in CPU time 2.1x"`` when every run of the two entries recorded its CPU time."""
    cpu = [r.cpu_time_to_target for r in (*best, *other)]
    if not all(c is not None and c > 0 for c in cpu):
        return ""
    c0 = median([float(r.cpu_time_to_target or 0) for r in best])
    c1 = median([float(r.cpu_time_to_target or 0) for r in other])
    return f"; in CPU time {c1 / c0:.2g}x"


def _how_sure(best: Sequence[RunResult], other: Sequence[RunResult], lo: float) -> str:
    busy = any(r.contended for r in (*best, *other))
    if lo > 1.0 and not busy:
        return "sure: the interval excludes 1"
    return "not sure: " + ("timings were contended (see the contended column)" if busy else
                           "the interval includes 1")


__all__ = ["entries", "verdict", "verdict_of"]
