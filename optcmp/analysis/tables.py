"""The fixed-width text table of a comparison and its flat rows (one dict per run).

``Comparison.table()`` (also ``str(comparison)``), ``Comparison.rows()`` and
``Comparison.to_frame()`` call :func:`table`, :func:`rows` and :func:`to_frame`.
"""

from __future__ import annotations

from typing import Any

from optcmp.analysis import format as fmt
from optcmp.results import ComparisonData, RunResult

#: Keys of the problem spec the table's first note shows.
PROBLEM_KEYS = ("problem", "problem_number", "n", "m", "n_samples", "n_features", "seed",
                "source")


def rows(comp: ComparisonData) -> list[dict[str, Any]]:
    """One flat dict per run (no trace or iterate): the table's data.

    Parameters
    ----------
    comp : ComparisonData

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


def to_frame(comp: ComparisonData) -> Any:
    """A pandas DataFrame with one row per run (the :func:`rows`).

    Parameters
    ----------
    comp : ComparisonData

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


def _sort_key(r: RunResult) -> tuple[int, float, str, str]:
    ttt = r.time_to_target
    group = 0 if ttt is not None else {"failed": 2, "skipped": 3}.get(r.status, 1)
    return (group, ttt if ttt is not None else r.time, r.label, r.backend)


def _timed_cells(r: RunResult) -> list[str]:
    # a run that failed before its first step has no timings to show (not 0.0us)
    never = r.status == "failed" and not r.nit
    return ["-" if never and not t else fmt.seconds_fixed(t) for t in (r.time, r.warmup_time)]


def _ttt_cell(r: RunResult) -> str:
    """Time-to-target, or ``~T`` for a projection (never a result), or ``-``."""
    if r.time_to_target is not None:
        return fmt.seconds_fixed(r.time_to_target)
    if r.projected_time_to_target is not None and r.status not in ("diverged", "failed"):
        return "~" + fmt.seconds_fixed(r.projected_time_to_target)
    return "-"


def _run_row(r: RunResult, no_opt: bool, metric_names: list[str], ncols: int) -> list[str]:
    """The table row of one run."""
    reached = r.time_to_target is not None
    where = r.backend + ("" if r.device == "cpu" else f"/{r.device}")
    if r.status == "skipped":  # never ran: no figures to show
        return [r.label, where, r.impl or "-", r.dtype, r.status] + ["-"] * (ncols - 5)
    return [
        r.label, where, r.impl or "-", r.dtype, r.status, _ttt_cell(r),
        str(r.nit_to_target if reached else r.nit),
        str(r.nfev_to_target if reached else r.nfev),
        str(r.njev_to_target if reached else r.njev),
        fmt.scientific(r.fun if no_opt else r.relative_suboptimality),
        *[fmt.fraction(r.metrics.get(m)) for m in metric_names],
        *_timed_cells(r),
        fmt.seconds_fixed(r.cpu_time_to_target if reached else r.cpu_time),
        "yes" if r.contended else "-",
    ]


def _floor_row(optimum: dict[str, Any] | None) -> list[str]:
    """The direct-solve floor row of a closed-form optimum (none for given or estimated f*)."""
    if not optimum or optimum.get("time") is None or optimum.get("kind", "direct") != "direct":
        return []
    method = str(optimum.get("method") or "direct")
    impl = "lstsq" if "lstsq" in method else "direct"
    t = fmt.seconds_fixed(optimum["time"])
    return [f"{method} (direct solve, floor)", "numpy", impl, "float64", "exact", t, "-", "-",
            "-", fmt.scientific(0.0), t, "-", "-", "-"]


def _optimum_notes(optimum: dict[str, Any] | None) -> list[str]:
    """What the table says about an ``f*`` that was not solved for in closed form."""
    kind = (optimum or {}).get("kind", "direct")
    if not optimum or kind == "direct":
        return []
    fun = fmt.scientific(optimum.get("fun"))
    if kind == "estimated":
        return [f"* f* = {fun} is an estimate ({optimum.get('method')}); rel.subopt is "
                "measured against it"]
    return [f"f* = {fun}: {optimum.get('method') or 'given'}"]


def _contention_notes(comp: ComparisonData) -> list[str]:
    """Notes on the CPU-time column, projections and contended runs."""
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


def _notes(comp: ComparisonData) -> list[str]:
    """The lines under the table: problem, optimum, target, how columns count, hosts, why."""
    notes = _optimum_notes(comp.optimum)
    at_start = [r for r in comp.runs if r.status == "converged" and r.nit_to_target == 0]
    if at_start and (comp.optimum or {}).get("kind") == "estimated":
        notes.append(f"! {len(at_start)} run(s) 'converged' at iteration 0 to the estimated "
                     "f*: the start already meets the target against the estimate; check the "
                     "objective, its gradient and the estimate")
    target = comp.settings.get("target")
    if target:
        notes.append(f"target: {target}")
    notes.append("time-to-target and iters/nfev/njev are counted until the target was met "
                 "(totals for runs that did not meet it); 'timed' is the optimizer steps only")
    if comp.problem:
        desc = ", ".join(f"{k}={v}" for k, v in comp.problem.items() if k in PROBLEM_KEYS)
        notes.insert(0, f"problem: {desc}")
    shared = [r for r in comp.runs if r.shared_host]
    if shared:
        notes.append(f"{len(shared)} run(s) shared their host with other runs (up to "
                     f"{max(r.concurrency for r in shared)} at once): their timings contend "
                     "and are not comparable with sequential ones")
    notes.extend(_contention_notes(comp))
    for r in comp.runs:  # every row without a time-to-target says why
        if r.time_to_target is None and r.message:
            notes.append(f"{r.label} on {r.backend}: {r.status}: {r.message}")
    return notes


def _one_table(comp: ComparisonData) -> str:
    """The table of a comparison of one problem."""
    # Without a known optimum the final loss replaces rel.subopt, and the problem's metrics
    # (e.g. train/test accuracy) stand next to it, so a plateau is visible in the table.
    no_opt = bool(comp.runs) and all(r.fstar is None for r in comp.runs)
    metric_names = sorted({k for r in comp.runs for k in r.metrics
                           if k.endswith("accuracy")}) if no_opt else []
    estimated = (comp.optimum or {}).get("kind", "direct") == "estimated" and not no_opt
    header = ["optimizer", "backend", "impl", "dtype", "status", "time-to-target", "iters",
              "nfev", "njev",
              "loss" if no_opt else ("rel.subopt*" if estimated else "rel.subopt"),
              *[m.replace("_accuracy", " acc") for m in metric_names], "timed", "warm-up",
              "cpu-to-target", "contended"]
    lines = [header] + [_run_row(r, no_opt, metric_names, len(header))
                        for r in sorted(comp.runs, key=_sort_key)]
    floor = _floor_row(comp.optimum)
    if floor:
        lines.append(floor)
    return "\n".join(fixed_width(lines, left=5)) + "\n" + "\n".join(_notes(comp))


def table(comp: ComparisonData) -> str:
    """A readable fixed-width table sorted by time-to-target.

    Runs that reached the target come first (fastest first), then the runs that stopped
    on a budget, divergence or callback (by timed seconds), then failed and skipped runs.

    For problems with a closed form, the direct solve time is shown as a floor row. A
    comparison over a set of problems (a suite: :attr:`ComparisonData.problem_set
    <optcmp.results.ComparisonData.problem_set>`) gets one table per problem
    (:meth:`~optcmp.results.ComparisonData.by_problem`), each under a ``== <problem name>``
    line.

    Parameters
    ----------
    comp : ComparisonData

    Returns
    -------
    str
        The table, a dashed rule under its header, then notes (problem, target, how the
        columns are counted, shared hosts, failed and skipped runs), one per line.
    """
    if comp.problem_set:
        return "\n\n".join(f"== {name}\n{_one_table(sub)}"
                           for name, sub in comp.by_problem().items())
    return _one_table(comp)


__all__ = ["PROBLEM_KEYS", "fixed_width", "rows", "table", "to_frame"]
