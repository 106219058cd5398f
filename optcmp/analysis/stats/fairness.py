"""Fairness checks: what makes one table compare unlike things, in words, and the warnings.

The checks and why each matters: docs/statistics-and-plots.md, 'Fairness warnings'.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

from optcmp.analysis.stats.censor import BUDGET_STATUSES, ran
from optcmp.analysis.stats.keys import instance_key, solver_key, spec_key
from optcmp.results import ComparisonData, RunResult

#: Per-step time below this multiple of the timer resolution triggers a warning.
TIMER_FACTOR = 100.0
#: ``RunResult.conditions.compiled`` values of steps compiled by a framework.
COMPILED_KINDS = frozenset({"xla", "tf.function", "torch.compile"})


class UnfairComparisonWarning(UserWarning):
    """The runs compared differ in something other than the optimizer."""


def _precision_issues(used: Sequence[RunResult]) -> list[str]:
    """Different dtypes, devices or thread counts."""
    out = []
    for attr, why in (("dtype", "precision changes both the speed and the accuracy reachable"),
                      ("device", "a device changes the cost of every operation")):
        vals = sorted({getattr(r, attr) for r in used})
        if len(vals) > 1:
            out.append(f"runs with different {attr}s ({', '.join(vals)}) are compared in one "
                       f"table: {why}; compare within one {attr}, or read the rows apart")
    threads = sorted({int(r.threads) for r in used if r.threads is not None})
    if len(threads) > 1:
        out.append(f"runs with different CPU thread counts ({', '.join(map(str, threads))}) are "
                   "compared in one table: threads change the cost of every step; pass "
                   "threads=N to compare() (optcmp run --threads N) to give every backend the "
                   "same count")
    return out


def _compiled_and_eager(used: Sequence[RunResult]) -> str:
    """The issue when one optimizer ran compiled on some runs and eagerly on others, or ''."""
    kinds: dict[str, set[str]] = {}
    for r in used:
        if r.conditions.compiled:
            kinds.setdefault(r.optimizer, set()).add(r.conditions.compiled)
    mixed = sorted(o for o, k in kinds.items() if "eager" in k and k & COMPILED_KINDS)
    if not mixed:
        return ""
    detail = "; ".join(f"{o}: " + ", ".join(sorted(kinds[o])) for o in mixed)
    return (f"compiled and eager runs of the same optimizer are compared in one table ({detail}): "
            "a compiled step fuses the per-operation dispatch an eager one pays, so the "
            "difference measures the execution, not the framework; compare like with like, or "
            "read RunResult.conditions.compiled")


def shared_host_issue(shared: Sequence[RunResult]) -> str:
    """The issue of runs that shared their host while timed.

    Parameters
    ----------
    shared : sequence of RunResult

    Returns
    -------
    str
    """
    peak = max(int(r.conditions.concurrency or 2) for r in shared)
    return (f"{len(shared)} run(s) shared their host with other optcmp runs while timed (up to "
            f"{peak} at once, from an executor or from other optcmp processes): their timings "
            "contend; time comparisons need one run at a time on the host")


def contended_issue(busy: Sequence[RunResult], n: int) -> str:
    """The issue of contended runs (``RunResult.timing.contended``).

    Parameters
    ----------
    busy : sequence of RunResult
    n : int

    Returns
    -------
    str
    """
    from optcmp.timing import CONTENTION_MARGIN

    loads = [x for r in busy for x in (r.timing.load_start, r.timing.load_end) if x is not None]
    load = f" (host load average up to {max(loads):.2f})" if loads else ""
    return (f"{len(busy)} of {n} runs were contended{load}: their timed wall time exceeds "
            f"their process CPU time by more than {CONTENTION_MARGIN:.0%}, so other work took "
            "the CPU and their times are inflated; compare cpu_time_to_target, or run again "
            "on a quiet host")


def _data_issues(used: Sequence[RunResult]) -> list[str]:
    """Different targets, different data, and solvers missing on some instances."""
    out = []
    targets = sorted({r.outcome.target for r in used if r.outcome.target})
    if len(targets) > 1:
        out.append(f"runs with different targets ({'; '.join(targets)}) are compared in one "
                   "table: time-to-target is not comparable across targets")
    by_inst: dict[tuple[str, int], set[str]] = {}
    for r in used:
        if r.problem_spec:
            by_inst.setdefault((r.problem, int(r.repeat)), set()).add(spec_key(r))
    diff = sorted(f"{p} (repetition {rep})" for (p, rep), specs in by_inst.items()
                  if len(specs) > 1)
    if diff:
        out.append("runs on different data are compared in one table: " + ", ".join(diff[:5])
                   + (" ..." if len(diff) > 5 else "") + "; every optimizer of a repetition "
                   "should see the same problem spec (data seed or fingerprint)")
    batched = [r for r in used if r.conditions.drop_last is not None]
    policies = sorted({f"{r.label} ({'drops' if r.conditions.drop_last else 'keeps'} the short "
                       f"last batch, last batch {r.conditions.last_batch} rows)" for r in batched})
    if len({r.conditions.drop_last for r in batched}) > 1:
        out.append("minibatch runs that drop the short last batch and runs that keep it are "
                   f"compared in one table ({'; '.join(policies[:6])}): an epoch is not the "
                   "same pass over the data; read RunResult.conditions.drop_last and last_batch")
    insts = {instance_key(r) for r in used}
    solvers = {solver_key(r) for r in used}
    pairs = {(instance_key(r), solver_key(r)) for r in used}
    if len(pairs) < len(insts) * len(solvers):
        out.append(f"{len(insts) * len(solvers) - len(pairs)} (problem instance, solver) "
                   "pairs have no run: solvers were not run on the same problems and "
                   "repetitions; profiles count a missing run as not solved")
    return out


def _budget_issue(used: Sequence[RunResult]) -> str:
    """The issue of budget-stopped runs compared by time, or ''."""
    budget = [r for r in used if r.status in BUDGET_STATUSES]
    if not budget:
        return ""
    counts = {s: sum(1 for r in budget if r.status == s) for s in BUDGET_STATUSES}
    what = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    whole = sorted({f"{r.label} on {r.backend}" for r in budget
                    if all(x.status in BUDGET_STATUSES
                           for x in used if solver_key(x) == solver_key(r))})
    msg = (f"{len(budget)} of {len(used)} runs were stopped by a budget ({what}): their "
           "time measures the budget, not a time to the target; they are censored here "
           "(never averaged as if they had converged)")
    if whole:
        msg += ("; every run of " + ", ".join(whole) + " hit a budget, so comparing its "
                "time compares a fixed amount of work, not time-to-target")
    return msg


#: Timing-contract entries that must agree across a table (their words in a warning).
CONTRACT_KEYS = {"compute_dtype": "compute dtype", "matmul_precision": "matmul precision"}


def _contract_issues(used: Sequence[RunResult]) -> list[str]:
    """Different compute dtypes or matmul precisions, and runs flagged as timing errors."""
    out = []
    for key, words in CONTRACT_KEYS.items():
        by: dict[str, set[str]] = {}
        for r in used:
            if key in r.conditions.contract:
                by.setdefault(str(r.conditions.contract[key]), set()).add(r.backend)
        if len(by) > 1:
            detail = "; ".join(f"{v}: {', '.join(sorted(b))}" for v, b in sorted(by.items()))
            out.append(f"runs with different {words}s are compared in one table ({detail}): "
                       "the arithmetic differs, so the time does too; set them equal (JAX "
                       "x64, torch.set_float32_matmul_precision, TensorFlow's TF32 switch)")
    flagged = [r for r in used if r.conditions.timing_error]
    if flagged:
        names = ", ".join(sorted({f"{r.label} on {r.backend}" for r in flagged}))
        out.append(f"{len(flagged)} run(s) have a timing error ({names}): a step measured "
                   "faster than the memory-bandwidth floor for its data, so the clock did not "
                   "wait for the work; their times are not theirs")
    return out


def _timer_issue(used: Sequence[RunResult], timer_resolution: float | None) -> str:
    """The issue of steps too short for the clock, or ''."""
    if timer_resolution is None:
        from optcmp.timing import Stopwatch

        timer_resolution = Stopwatch().timer_resolution()
    per_step = [(r.time / r.nit, r) for r in used if r.nit > 0 and r.time >= 0]
    coarse = [(t, r) for t, r in per_step if t < TIMER_FACTOR * timer_resolution]
    if not coarse:
        return ""
    t, r = min(coarse, key=lambda p: p[0])
    return (f"timer resolution {timer_resolution:.3g}s is coarse for {len(coarse)} run(s): "
            f"e.g. {r.label} on {r.backend} took {t:.3g}s per step (fewer than "
            f"{TIMER_FACTOR:.0f} clock ticks), so its time may be off by more than 1%; use "
            "a larger problem or a finer clock")


def fairness_issues(runs: Iterable[RunResult], *, timer_resolution: float | None = None,
                    by_time: bool = True) -> list[str]:
    """Reasons why comparing ``runs`` in one table may be unfair (the module's checks).

    Parameters
    ----------
    runs : iterable of RunResult
    timer_resolution : float, optional
        Seconds; measured now when omitted.
    by_time : bool, default True
        Whether runs are compared by time (enables the time checks).

    Returns
    -------
    list of str
    """
    used = ran(runs)
    if not used:
        return []
    out = _precision_issues(used)
    mixed = _compiled_and_eager(used)
    if mixed:
        out.append(mixed)
    shared = [r for r in used if r.conditions.shared_host]
    if shared and by_time:
        out.append(shared_host_issue(shared))
    busy = [r for r in used if r.timing.contended]
    if busy and by_time:
        out.append(contended_issue(busy, len(used)))
    out.extend(_data_issues(used))
    if by_time:
        out.extend(_contract_issues(used))
        out.extend(m for m in (_budget_issue(used), _timer_issue(used, timer_resolution)) if m)
    return out


def comparison_issues(comp: ComparisonData) -> list[str]:
    """:func:`fairness_issues` of a comparison, with the timer resolution it recorded.

    Parameters
    ----------
    comp : ComparisonData

    Returns
    -------
    list of str
    """
    return fairness_issues(comp.runs, timer_resolution=comp.timer_resolution)


def check_fairness(runs: Iterable[RunResult], *, timer_resolution: float | None = None,
                   by_time: bool = True, stacklevel: int = 2,
                   shared_host_warned: bool = False) -> list[str]:
    """Emit an :class:`UnfairComparisonWarning` for each of :func:`fairness_issues`; return them.

    Parameters
    ----------
    runs : iterable of RunResult
    timer_resolution, by_time
        As in :func:`fairness_issues`.
    stacklevel : int, default 2
        Of the warnings, counted from this function's caller.
    shared_host_warned : bool, default False
        Leave out the shared-host issue (the sweep warned already).

    Returns
    -------
    list of str
    """
    runs = list(runs)
    issues = fairness_issues(runs, timer_resolution=timer_resolution, by_time=by_time)
    shared = [r for r in ran(runs) if r.conditions.shared_host]
    if shared and shared_host_warned:
        skip = shared_host_issue(shared)
        issues = [m for m in issues if m != skip]
    for msg in issues:
        warnings.warn(msg, UnfairComparisonWarning, stacklevel=stacklevel + 1)
    return issues


def warn_unfair(runs: Iterable[RunResult] | ComparisonData, *, by_time: bool = True,
                timer_resolution: float | None = None, stacklevel: int = 2) -> list[str]:
    """:func:`check_fairness` of runs or of a comparison.

    Parameters
    ----------
    runs : iterable of RunResult or ComparisonData
    by_time, timer_resolution, stacklevel
        As in :func:`check_fairness`.

    Returns
    -------
    list of str
    """
    warned = isinstance(runs, ComparisonData) and runs.shared_host_warned
    return check_fairness(runs, timer_resolution=timer_resolution, by_time=by_time,
                          stacklevel=stacklevel + 1, shared_host_warned=warned)


__all__ = ["COMPILED_KINDS", "TIMER_FACTOR", "UnfairComparisonWarning", "check_fairness",
           "comparison_issues", "contended_issue", "fairness_issues", "shared_host_issue",
           "warn_unfair"]
