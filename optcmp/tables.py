"""The fixed-width text table and the flat rows of a :class:`~optcmp.results.Comparison`.

``Comparison.table()`` (also ``str(comparison)``), ``Comparison.rows()`` and
``Comparison.to_frame()`` call :func:`table`, :func:`rows` and :func:`to_frame`.
"""

from __future__ import annotations

import math
from statistics import median
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from optcmp.results import Comparison, RunResult


def _fmt_time(t: float | None) -> str:
    if t is None or (isinstance(t, float) and math.isnan(t)):
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.1f}us"
    if t < 1:
        return f"{t * 1e3:.1f}ms"
    return f"{t:.3f}s"


def _fmt_frac(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.3f}"


def _fmt_num(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.2e}"


def _timed_cells(r: RunResult) -> list[str]:
    # a run that failed before its first step has no timings to show (not 0.0us)
    never = r.status == "failed" and not r.nit
    return ["-" if never and not t else _fmt_time(t) for t in (r.time, r.warmup_time)]


def _ttt_cell(r: RunResult) -> str:
    """Time-to-target, or ``~T`` for a projection (never a result), or ``-``."""
    if r.time_to_target is not None:
        return _fmt_time(r.time_to_target)
    if r.projected_time_to_target is not None and r.status not in ("diverged", "failed"):
        return "~" + _fmt_time(r.projected_time_to_target)
    return "-"


def _contention_notes(comp: Comparison) -> list[str]:
    """Notes on the CPU-time column, projections and contended runs (issue 12)."""
    notes = ["cpu-to-target: process CPU time of the timed steps to the target (totals for "
             "runs that missed it), a figure other work on the host does not inflate"]
    if any(r.projected_time_to_target is not None and r.time_to_target is None
           for r in comp.runs):
        notes.append("~T: a projection from the run's observed linear rate (runs that missed "
                     "the target), not a measured time-to-target")
    busy = [r for r in comp.runs if r.contended]
    if busy:
        loads = [x for r in busy for x in (r.load_start, r.load_end) if x is not None]
        load = f", host load average up to {max(loads):.2f}" if loads else ""
        notes.append(f"contended: {len(busy)} run(s) lost CPU to other work (wall time more "
                     f"than 20% above CPU time{load}): their times are inflated")
    return notes


def rows(comp: Comparison) -> list[dict[str, Any]]:
    """One flat dict per run (no trace or iterate): the table's data.

    Parameters
    ----------
    comp : Comparison

    Returns
    -------
    list of dict
        Per run, in ``comp.runs`` order: what ran, status, time and evaluations to target,
        totals, timings, final values, host, then ``hp_<name>`` per hyperparameter and
        ``metric_<name>`` per metric.
    """
    out = []
    for r in comp.runs:
        out.append({
            "problem": r.problem, "optimizer": r.label, "backend": r.backend,
            "device": r.device, "dtype": r.dtype, "impl": r.impl, "seed": r.seed,
            "repeat": r.repeat, "status": r.status, "success": r.success,
            "time_to_target": r.time_to_target, "nit_to_target": r.nit_to_target,
            "nfev_to_target": r.nfev_to_target, "njev_to_target": r.njev_to_target,
            "nit": r.nit, "nfev": r.nfev, "njev": r.njev, "epochs": r.epochs, "time": r.time,
            "warmup_time": r.warmup_time, "setup_time": r.setup_time,
            "wall_time": r.wall_time, "fun": r.fun, "f0": r.f0, "fstar": r.fstar,
            "relative_suboptimality": r.relative_suboptimality, "message": r.message,
            "host": r.host, "concurrency": r.concurrency, "shared_host": r.shared_host,
            "cpu_time": r.cpu_time, "cpu_time_to_target": r.cpu_time_to_target,
            "load_start": r.load_start, "load_end": r.load_end, "contended": r.contended,
            "projected_time_to_target": r.projected_time_to_target,
            "projected_nit_to_target": r.projected_nit_to_target,
            **{f"hp_{k}": v for k, v in r.hyperparameters.items()},
            **{f"metric_{k}": v for k, v in r.metrics.items()},
        })
    return out


def to_frame(comp: Comparison) -> Any:
    """A pandas DataFrame with one row per run (the :func:`rows`).

    Parameters
    ----------
    comp : Comparison

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ImportError
        pandas is not installed (``pip install 'optcmp[pandas]'``).
    """
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError("to_frame() needs pandas: pip install 'optcmp[pandas]'") from exc
    return pd.DataFrame(rows(comp))


def _sort_key(r: RunResult) -> tuple[int, float, str, str]:
    ttt = r.time_to_target
    group = 0 if ttt is not None else {"failed": 2, "skipped": 3}.get(r.status, 1)
    return (group, ttt if ttt is not None else r.time, r.label, r.backend)


def fixed_width(lines: list[list[str]], left: int) -> list[str]:
    """Rows of cells as aligned text: a header row, a rule of dashes, then the rows.

    Parameters
    ----------
    lines : list of list of str
        The header row first; every row has as many cells.
    left : int
        The first ``left`` columns are left-aligned, the others (figures) right-aligned.

    Returns
    -------
    list of str
        One string per line, trailing spaces removed.
    """
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    out = []
    for j, row in enumerate(lines):
        out.append("  ".join(c.ljust(w) if i < left else c.rjust(w)
                             for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def _floor_row(optimum: dict[str, Any] | None) -> list[str]:
    """The direct-solve floor row of a closed-form optimum (none for given or estimated f*)."""
    if not optimum or optimum.get("time") is None or optimum.get("kind", "direct") != "direct":
        return []
    method = str(optimum.get("method") or "direct")
    impl = "lstsq" if "lstsq" in method else "direct"
    t = _fmt_time(optimum["time"])
    return [f"{method} (direct solve, floor)", "numpy", impl, "float64", "exact", t, "-", "-",
            "-", _fmt_num(0.0), t, "-", "-", "-"]


def _optimum_notes(optimum: dict[str, Any] | None) -> list[str]:
    """What the table says about an ``f*`` that was not solved for in closed form."""
    kind = (optimum or {}).get("kind", "direct")
    if not optimum or kind == "direct":
        return []
    fun = _fmt_num(optimum.get("fun"))
    if kind == "estimated":
        return [f"* f* = {fun} is an estimate ({optimum.get('method')}); rel.subopt is "
                "measured against it"]
    return [f"f* = {fun}: {optimum.get('method') or 'given'}"]


def _per_problem(comp: Comparison, probs: list[str]) -> str:
    """One table per problem of a comparison over several (a suite), each under its name."""
    optima = comp.settings.get("optima") or {}
    parts = []
    for name in probs:
        runs = [r for r in comp.runs if r.problem == name]
        sub = type(comp)(runs, problem=runs[0].problem_spec, optimum=optima.get(name),
                         settings=comp.settings, environment=comp.environment)
        parts.append(f"== {name}\n{table(sub)}")
    return "\n\n".join(parts)


def table(comp: Comparison) -> str:
    """A readable fixed-width table sorted by time-to-target.

    Runs that reached the target come first (fastest first), then the runs that stopped
    on a budget, divergence or callback (by timed seconds), then failed and skipped runs.

    For problems with a closed form, the direct solve time is shown as a floor row. A
    comparison over a suite (``settings["suite"]``) gets one table per problem, each under a
    ``== <problem name>`` line.

    Parameters
    ----------
    comp : Comparison

    Returns
    -------
    str
        The table, a dashed rule under its header, then notes (problem, target, how the
        columns are counted, shared hosts, failed and skipped runs), one per line.
    """
    probs = list(dict.fromkeys(r.problem for r in comp.runs))
    if comp.settings.get("suite") and len(probs) > 1:  # issue 13: one table per problem
        return _per_problem(comp, probs)
    # Without a known optimum the final loss replaces rel.subopt, and the problem's metrics
    # (e.g. train/test accuracy) stand next to it, so a plateau is visible in the table.
    no_opt = bool(comp.runs) and all(r.fstar is None for r in comp.runs)
    metric_names = sorted({k for r in comp.runs for k in r.metrics
                           if k.endswith("accuracy")}) if no_opt else []
    header = ["optimizer", "backend", "impl", "dtype", "status", "time-to-target", "iters",
              "nfev", "njev", "loss" if no_opt else "rel.subopt",
              *[m.replace("_accuracy", " acc") for m in metric_names], "timed", "warm-up",
              "cpu-to-target", "contended"]
    lines = [header]  # the header list is updated below (an estimated f* is flagged)
    for r in sorted(comp.runs, key=_sort_key):
        reached = r.time_to_target is not None
        where = r.backend + ("" if r.device == "cpu" else f"/{r.device}")
        if r.status == "skipped":  # never ran: no figures to show
            lines.append([r.label, where, r.impl or "-", r.dtype, r.status]
                         + ["-"] * (len(header) - 5))
            continue
        lines.append([
            r.label, where, r.impl or "-", r.dtype, r.status, _ttt_cell(r),
            str(r.nit_to_target if reached else r.nit),
            str(r.nfev_to_target if reached else r.nfev),
            str(r.njev_to_target if reached else r.njev),
            _fmt_num(r.fun if no_opt else r.relative_suboptimality),
            *[_fmt_frac(r.metrics.get(m)) for m in metric_names],
            *_timed_cells(r), _fmt_time(r.cpu_time_to_target if reached else r.cpu_time),
            "yes" if r.contended else "-",
        ])
    floor = _floor_row(comp.optimum)
    if floor:
        lines.append(floor)
    kind = (comp.optimum or {}).get("kind", "direct")
    if kind == "estimated" and not no_opt:  # issue 13: flag an estimated f*
        header[header.index("rel.subopt")] = "rel.subopt*"
    out = fixed_width(lines, left=5)
    notes = _optimum_notes(comp.optimum)
    target = comp.settings.get("target")
    if target:
        notes.append(f"target: {target}")
    notes.append("time-to-target and iters/nfev/njev are counted until the target was met "
                 "(totals for runs that did not meet it); 'timed' is the optimizer steps only")
    if comp.problem:
        desc = ", ".join(f"{k}={v}" for k, v in comp.problem.items()
                         if k in ("problem", "problem_number", "n", "m", "n_samples", "n_features",
                                  "seed", "source"))
        notes.insert(0, f"problem: {desc}")
    shared = [r for r in comp.runs if r.shared_host]
    if shared:
        notes.append(f"{len(shared)} run(s) shared their host with other runs (up to "
                     f"{max(r.concurrency for r in shared)} at once): their timings contend "
                     "and are not comparable with sequential ones")
    notes.extend(_contention_notes(comp))
    why = [r for r in comp.runs if r.time_to_target is None and r.message]
    for r in why:  # every row without a time-to-target says why
        notes.append(f"{r.label} on {r.backend}: {r.status}: {r.message}")
    return "\n".join(out) + "\n" + "\n".join(notes)


def _entry(r: RunResult) -> tuple[str, str, str, str]:
    """The solver of a run: (label, backend, device, dtype), as :func:`optcmp.stats.solver_key`
    (which imports this module, hence not called)."""
    return (r.label, r.backend, r.device, r.dtype)


def _entries(runs: list[RunResult]) -> dict[tuple[str, str, str, str], list[RunResult]]:
    """The runs of each solver, skipped runs left out."""
    out: dict[tuple[str, str, str, str], list[RunResult]] = {}
    for r in runs:
        if r.status != "skipped":
            out.setdefault(_entry(r), []).append(r)
    return out


def _step_times(r: RunResult) -> list[float]:
    """Durations of the timed steps up to the target, from the trace (first row at 0)."""
    t = [float(v) for v in r.trace.time]
    upto = [v for v in t if v <= (r.time_to_target or 0.0) + 1e-12]
    steps = [b - a for a, b in zip([0.0, *upto[:-1]], upto)]
    return [s for s in steps if s >= 0] or [float(r.time_to_target or 0.0)]


def _factor_interval(best: list[RunResult], other: list[RunResult], level: float = 0.95,
                     n_resamples: int = 2000, seed: int = 0) -> tuple[float, float, str]:
    """A bootstrap interval of the time-to-target factor ``other / best``.

    With two or more runs on each side the run medians are resampled; with one run each, the
    step durations of the two runs (a run's time is the sum of its steps).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    if len(best) > 1 and len(other) > 1:
        a = np.array([r.time_to_target for r in best], dtype=float)
        b = np.array([r.time_to_target for r in other], dtype=float)
        ra = np.median(rng.choice(a, (n_resamples, a.size)), axis=1)
        rb = np.median(rng.choice(b, (n_resamples, b.size)), axis=1)
        how = f"bootstrap of the medians of {a.size} and {b.size} repetitions"
    else:
        sa, sb = np.array(_step_times(best[0])), np.array(_step_times(other[0]))
        ra = rng.choice(sa, (n_resamples, sa.size)).sum(axis=1)
        rb = rng.choice(sb, (n_resamples, sb.size)).sum(axis=1)
        how = ("bootstrap of the step times of one run each (timing noise only; "
               "--repeats N for repetitions)")
    ratio = rb / np.maximum(ra, 1e-300)
    lo, hi = np.quantile(ratio, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi), how


def verdict(comp: Comparison) -> str:
    """The comparison's answer in words: who reaches the target first, by what factor, how sure.

    Entries are (optimizer label, backend, device, dtype); an entry's time is the median
    time-to-target of its repetitions (it must reach the target in more than half of them).
    The factor is the runner-up's time over the winner's, with a 95% bootstrap interval
    (:func:`_factor_interval`: over repetitions when both have two or more, else over the step
    times of the single runs), and the same factor in process CPU time. The verdict is "sure"
    when the interval excludes 1 and no run of the two entries was contended. A comparison
    with ``verdict_runs`` (more repetitions of its two fastest entries) is judged on those
    entries' runs and the extra repetitions, and says so.

    Parameters
    ----------
    comp : Comparison

    Returns
    -------
    str
        One line beginning ``"verdict: "``.
    """
    target = comp.settings.get("target") or "the target"
    if not comp.verdict_runs:
        return _verdict(comp.runs, target)
    leaders = {_entry(r) for r in comp.verdict_runs}
    runs = [r for r in comp.runs if _entry(r) in leaders] + comp.verdict_runs
    n = max(len(v) for v in _entries(runs).values())
    return (_verdict(runs, target) + f" [the two fastest run {n} times each, interleaved]")


def _verdict(runs: list[RunResult], target: str) -> str:
    """The verdict line of :func:`verdict` over ``runs``."""
    ranked = []
    for key, entry_runs in _entries(runs).items():
        hit = [r for r in entry_runs if r.time_to_target is not None]
        if 2 * len(hit) > len(entry_runs):
            ranked.append((median([float(r.time_to_target or 0.0) for r in hit]), key, hit))
    ranked.sort(key=lambda x: x[0])
    if not ranked:
        return f"verdict: no optimizer reached {target} (see each row's status and reason)"
    t0, (label, backend, *_), best = ranked[0]
    head = f"verdict: {label} on {backend} reaches the target first ({_fmt_time(t0)})"
    if len(ranked) == 1:
        return head + "; no other optimizer and backend reached it"
    t1, (label1, backend1, *_), other = ranked[1]
    lo, hi, how = _factor_interval(best, other)
    cpu = [r.cpu_time_to_target for r in (*best, *other)]
    cpu_txt = ""
    if all(c is not None and c > 0 for c in cpu):
        c0 = median([float(r.cpu_time_to_target or 0) for r in best])
        c1 = median([float(r.cpu_time_to_target or 0) for r in other])
        cpu_txt = f"; in CPU time {c1 / c0:.2g}x"
    busy = any(r.contended for r in (*best, *other))
    sure = lo > 1.0 and not busy
    why = ("sure: the interval excludes 1" if sure else
           "not sure: " + ("timings were contended (see the contended column)" if busy else
                           "the interval includes 1"))
    return (f"{head}, {t1 / t0:.2g}x faster than {label1} on {backend1} ({_fmt_time(t1)}); "
            f"95% interval of the factor {_fmt_bound(lo, 'down')}-{_fmt_bound(hi, 'up')} "
            f"({how}){cpu_txt}; {why}")


def _fmt_bound(v: float, direction: str) -> str:
    """An interval bound rounded outwards (``direction`` "down" or "up") to 2 significant
    digits, or more when 2 would put it on the other side of 1 (1.04 prints "1.04", not "1")."""
    if not math.isfinite(v) or v <= 0:
        return f"{v:.2g}"
    for digits in range(2, 8):
        q = 10.0 ** (math.floor(math.log10(v)) - digits + 1)
        r = (math.floor(v / q) if direction == "down" else math.ceil(v / q)) * q
        if (r > 1) == (v > 1) and (r < 1) == (v < 1):
            break
    return f"{r:.{max(0, digits - 1 - math.floor(math.log10(v)))}f}"


__all__ = ["rows", "table", "to_frame", "verdict"]
