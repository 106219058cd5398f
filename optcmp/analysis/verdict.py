"""The comparison's answer in words: who reaches the target first, by what factor, how sure;
and, for each optimizer, which framework. Both come from :mod:`optcmp.analysis.ranking`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from optcmp.analysis import format as fmt
from optcmp.analysis.framework import (
    Equivalence,
    FrameworkFactor,
    as_equivalences,
    groups,
    per_iteration_factors,
    proving,
)
from optcmp.analysis.ranking import Ranked, clock_line, entries, rank_by_of, rank_runs
from optcmp.analysis.stats.bootstrap import factor_interval
from optcmp.analysis.stats.keys import solver_key
from optcmp.implementation import NAMESPACES, Implementation
from optcmp.results import ComparisonData, RunResult

#: Backends as the verdict names them.
FRAMEWORKS = {"numpy": "numpy", "torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}


def factor_words(factor: float) -> str:
    """A time factor ``other / this`` in words: ``"2.5x faster"``, ``"1.41x slower"``."""
    if f"{factor:.2f}" == "1.00":
        return "as fast (1.00x)"
    if factor > 1.0:
        return f"{factor:.3g}x faster"
    return f"{1.0 / factor:.3g}x slower"


def implementation_words(run: RunResult) -> str:
    """What code ran, in words (``"scipy L-BFGS-B"``), from ``run.identity.implemented_by``."""
    code = run.identity.implemented_by
    if code is None and run.impl == "reference":
        code = Implementation("optcmp", run.optimizer)
    if code is None:
        return run.implementation or run.impl or run.optimizer
    if code.method is not None:
        return f"{code.library} {code.method}"
    if code.library == "optcmp":
        return f"optcmp's reference {code.name} rule"
    return f"{NAMESPACES.get(code.library, code.library)}.{code.name}"


def compared(a: RunResult, b: RunResult) -> str:
    """What two entries' runs compare, from the implementations they recorded."""
    wa, wb = implementation_words(a), implementation_words(b)
    fa, fb = (FRAMEWORKS.get(r.backend, r.backend) for r in (a, b))
    if wa == wb and a.label == b.label:
        if a.identity.implemented_by is not None and a.identity.implemented_by.library == "scipy":
            return f"{wa} with {fa} vs {fb} gradients"
        return f"{wa} on {fa} vs {fb}"
    return f"{a.label} ({wa}, {fa}) vs {b.label} ({wb}, {fb})"


def verdict(comp: ComparisonData,
            equivalence: Equivalence | Sequence[Equivalence] | None = None,
            rank_by: str | None = None) -> str:
    """The comparison's answer in words: who reaches the target first, by what factor, how sure.

    The first two entries of :func:`optcmp.analysis.ranking.ranking` on the clock ``rank_by``
    (default: the comparison's ``settings["rank_by"]``, else CPU time where every run used one
    thread, else wall time), the factor with its 95% interval and on the other clock, what was
    compared, which clock ranks, then :func:`framework_lines`.
    """
    target = comp.settings.get("target") or "the target"
    runs = [*comp.runs, *comp.verdict_runs]
    lines = verdict_lines(runs, target, equivalence, rank_by_of(comp, rank_by))
    if comp.verdict_runs:
        leaders = {solver_key(r) for r in comp.verdict_runs}
        n = max(len(v) for k, v in entries(runs).items() if k in leaders)
        k = "two" if len(leaders) == 2 else str(len(leaders))
        lines[0] += f" [the {k} fastest run {n} times each, interleaved]"
    return "\n".join(lines)


def verdict_lines(runs: Sequence[RunResult], target: str = "the target",
                  equivalence: Equivalence | Sequence[Equivalence] | None = None,
                  rank_by: str | None = None) -> list[str]:
    """The lines of :func:`verdict` over ``runs``."""
    every = rank_runs(runs, rank_by)
    ranked = [e for e in every if e.ranked]
    # per-iteration framework lines need no run at the target: shown on every path when asked
    extra = framework_lines(every, equivalence) if equivalence is not None else []
    if not ranked:
        return [f"verdict: no optimizer reached {target} (see each row's status and reason)",
                *extra]
    best = ranked[0]
    head = (f"verdict: {best.name} reaches the target first "
            f"({fmt.seconds_fixed(best.time)}{_CLOCK_WORD[best.clock]})")
    ranks = clock_line(best.clock, rank_by)
    if len(ranked) == 1:
        return [head + "; no other optimizer and backend reached it", ranks, *extra]
    other = ranked[1]
    lines = [f"{head}, {pair_words(best, other)}", ranks,
             f"compared: {compared(best.reached[0], other.reached[0])}"]
    return lines + framework_lines(every, equivalence)


#: How the verdict writes the clock of a figure.
_CLOCK_WORD = {"cpu": " CPU", "wall": ""}


def pair_words(best: Ranked, other: Ranked) -> str:
    """``"2.5x faster than B (2.0ms); 95% interval ...; in CPU time ...; sure: ..."``."""
    t0, t1 = float(best.time or 0.0), float(other.time or 0.0)
    lo, hi, how = factor_interval(best.reached, other.reached, clock=best.clock)
    return (f"{factor_words(t1 / t0)} than {other.name} ({fmt.seconds_fixed(t1)}"
            f"{_CLOCK_WORD[best.clock]}); 95% "
            f"interval of the factor {fmt.interval_bound(lo, 'down')}-"
            f"{fmt.interval_bound(hi, 'up')} ({how}){_other_factor(best, other)}; "
            f"{_how_sure(best, other, lo)}")


def framework_lines(ranked: Sequence[Ranked],
                    equivalence: Equivalence | Sequence[Equivalence] | None = None) -> list[str]:
    """For each optimizer on several backends: the backends by median time-to-target, or by
    time per iteration where ``equivalence`` proves the trajectories identical."""
    eqs = as_equivalences(equivalence)
    out = []
    per_iteration = False
    for (label, *_), group in groups(ranked).items():
        eq = proving(group, eqs)
        fac = per_iteration_factors(group, eq) if eq is not None else None
        if fac is not None:
            out.append(per_iteration_line(fac, group))
            per_iteration = True
        else:
            out.append(_time_to_target_line(label, group))
    if not out:
        return []
    basis = f"median{_CLOCK_WORD[ranked[0].clock]} time-to-target"
    if per_iteration:
        basis += ", or time per iteration where the trajectories are proven identical"
    return [f"framework, per optimizer ({basis}; a backend that missed the target is not "
            "timed):", *out]


def per_iteration_line(fac: FrameworkFactor, group: Sequence[Ranked]) -> str:
    """``"  gd (...): per-iteration factor ...: numpy first (9.8us/iteration); ..."``."""
    by_backend = {e.key[1]: e for e in group}
    order = list(fac.seconds)
    first = by_backend[order[0]]
    parts = [f"{_framework(first)} first ({fmt.seconds_fixed(fac.seconds[order[0]])}/iteration)"]
    for b in order[1:]:
        parts.append(f"{_named(by_backend[b], first)} {factor_words(1.0 / fac.factor(b))} "
                     f"({fmt.seconds_fixed(fac.seconds[b])}/iteration)")
    return (f"  {fac.label} ({implementation_words(first.runs[0])}): per-iteration factor over "
            f"the {fac.iterations} common iterations, trajectories identical to "
            f"{fac.max_rel_diff:.2g} (checked over {fac.checked_steps} steps): "
            + "; ".join(parts))


def _time_to_target_line(label: str, group: Sequence[Ranked]) -> str:
    """One optimizer's backends by median time-to-target, each with how sure."""
    first, rest = group[0], group[1:]
    if not first.ranked:
        statuses = _statuses(r for e in group for r in e.runs)
        return f"  {label}: no backend reached the target ({statuses})"
    parts = [f"{_framework(first)} first ({fmt.seconds_fixed(first.time)})"]
    for e in rest:
        if not e.ranked:
            parts.append(f"{_framework(e)} missed the target ({_statuses(e.runs)})")
            continue
        lo, _, _ = factor_interval(first.reached, e.reached, clock=e.clock)
        contended = e.clock == "wall" and any(r.timing.contended for r in (*first.runs, *e.runs))
        sure = "sure" if lo > 1.0 and not contended else "not sure"
        factor = factor_words(float(first.time or 1.0) / float(e.time or 1.0))
        parts.append(f"{_named(e, first)} {factor} ({fmt.seconds_fixed(e.time)}, {sure})")
    return f"  {label} ({implementation_words(first.runs[0])}): " + "; ".join(parts)


def _framework(e: Ranked) -> str:
    """The entry's backend as the verdict names it."""
    return FRAMEWORKS.get(e.key[1], e.key[1])


def _named(e: Ranked, first: Ranked) -> str:
    """The entry's framework, with its implementation when it is not the first entry's."""
    own = implementation_words(e.runs[0])
    return _framework(e) + ("" if own == implementation_words(first.runs[0]) else f" ({own})")


def _statuses(runs: Iterable[RunResult]) -> str:
    """The distinct statuses of ``runs``, in order: ``"max_iter, diverged"``."""
    return ", ".join(dict.fromkeys(r.status for r in runs))


def _other_factor(best: Ranked, other: Ranked) -> str:
    """``"; in CPU time 2.1x faster"`` (or in wall time, when the ranking reads CPU time)."""
    c0, c1 = best.other_time, other.other_time
    if c0 is None or c1 is None:
        return ""
    return f"; in {'wall' if best.clock == 'cpu' else 'CPU'} time {factor_words(c1 / c0)}"


def _how_sure(best: Ranked, other: Ranked, lo: float) -> str:
    """Whether the winner is surely first, and why not; contended wall timings never are, and
    a CPU-time ranking says it keeps its order under contention."""
    busy = any(r.timing.contended for r in (*best.reached, *other.reached))
    if best.clock == "cpu":
        words = ("sure: the interval excludes 1" if lo > 1.0
                 else "not sure: the interval includes 1")
        return words + ("; timings were contended; the ranking uses CPU time" if busy else "")
    if lo > 1.0 and not busy:
        return "sure: the interval excludes 1"
    return "not sure: " + ("timings were contended (--wide / wide=True shows which runs)"
                           if busy else "the interval includes 1")


__all__ = ["FRAMEWORKS", "compared", "factor_words", "framework_lines", "implementation_words",
           "pair_words", "per_iteration_line", "verdict", "verdict_lines"]
