"""The fixed-width text table of a comparison and its flat rows (one dict per run)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from optcmp.analysis import format as fmt
from optcmp.analysis.ranking import clock_line, clock_of, rank_by_of, ranking_note, row_key
from optcmp.analysis.stats.censor import censored_median, ran
from optcmp.analysis.stats.framework_gap import framework_gap_notes
from optcmp.results import ComparisonData, RunResult
from optcmp.stopping.targets import far_start_note

#: Keys of the problem spec the table's first note shows.
PROBLEM_KEYS = ("problem", "problem_number", "n", "m", "n_samples", "n_features", "seed",
                "source")


def rows(comp: ComparisonData) -> list[dict[str, Any]]:
    """One flat dict per run (no trace or iterate): the table's data."""
    return [{
        "problem": r.problem, "optimizer": r.label, "backend": r.backend,
        "device": r.device, "dtype": r.dtype, "impl": r.impl, "seed": r.seed,
        "repeat": r.repeat, "status": r.status, "success": r.success,
        "time_to_target": r.time_to_target, "nit_to_target": r.nit_to_target,
        "nfev_to_target": r.nfev_to_target, "njev_to_target": r.njev_to_target,
        "nit": r.nit, "nfev": r.nfev, "njev": r.njev, "epochs": r.outcome.epochs,
        "time": r.time, "warmup_time": r.warmup_time, "setup_time": r.setup_time,
        "wall_time": r.timing.wall, "fun": r.fun, "f0": r.f0, "fstar": r.fstar,
        "relative_suboptimality": r.relative_suboptimality, "message": r.message,
        "host": r.conditions.host, "concurrency": r.conditions.concurrency,
        "shared_host": r.conditions.shared_host, "cpu_time": r.cpu_time,
        "cpu_time_to_target": r.cpu_time_to_target, "load_start": r.timing.load_start,
        "load_end": r.timing.load_end, "contended": r.timing.contended,
        "timing_error": r.conditions.timing_error,
        **{f"hp_{k}": v for k, v in r.hyperparameters.items()},
        **{f"metric_{k}": v for k, v in r.metrics.items()},
    } for r in comp.runs]


def to_frame(comp: ComparisonData) -> Any:
    """A pandas DataFrame with one row per run (the :func:`rows`)."""
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError("to_frame() needs pandas: pip install '.[pandas]' in a checkout of "
                          "optcmp") from exc
    return pd.DataFrame(rows(comp))


#: Every column of :func:`table`, in order (``"n"``, ``"interval"`` only over repetitions).
COLUMNS = ("optimizer", "backend", "impl", "dtype", "status", "n", "time-to-target", "interval",
           "iters", "nfev", "njev", "rel.subopt", "metrics", "timed", "warm-up", "cpu time",
           "contended")
#: The default selection: at most 120 characters wide for labels of up to 20 characters.
DEFAULT_COLUMNS = ("optimizer", "backend", "impl", "status", "n", "time-to-target", "interval",
                   "iters", "rel.subopt", "metrics", "cpu time")
#: Columns of words (left-aligned); the others are figures.
_WORDS = ("optimizer", "backend", "impl", "dtype", "status")
#: Largest width of a note line.
WIDTH = 120


def check_columns(columns: Sequence[str] | None, wide: bool = False) -> tuple[str, ...]:
    """The columns a table shows: ``columns`` validated, all of them when ``wide``."""
    if wide:
        if columns is not None:
            raise ValueError("give columns= or wide=True, not both")
        return COLUMNS
    if columns is None:
        return DEFAULT_COLUMNS
    if isinstance(columns, str):
        columns = [c.strip() for c in columns.split(",") if c.strip()]
    bad = [c for c in columns if c not in COLUMNS]
    if bad or not columns:
        raise ValueError(f"unknown table column(s) {bad or list(columns)}; choose from "
                         f"{list(COLUMNS)}")
    return tuple(c for c in COLUMNS if c in columns)


def _groups(comp: ComparisonData, per_run: bool) -> list[list[RunResult]]:
    """The runs of each row: one per run, or the repetitions of one (optimizer, backend)."""
    if per_run:
        return [[r] for r in comp.runs]
    out: dict[tuple[Any, ...], list[RunResult]] = {}
    for r in comp.runs:
        out.setdefault((r.problem, r.label, r.backend, r.device, r.dtype, r.impl), []).append(r)
    return list(out.values())


def _median(values: Sequence[float | None]) -> float | None:
    """The median of the known values (None and NaN left out), None without one."""
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return float(np.median(vals)) if vals else None


def _sort_key(comp: ComparisonData, rank_by: str | None) -> Any:
    """The rows' order: :func:`optcmp.analysis.ranking.row_key` of each row's median run."""
    key = row_key(comp, rank_by)
    return lambda group: sorted(key(r) for r in group)[(len(group) - 1) // 2]


def _run_cells(r: RunResult, no_opt: bool, metric_names: list[str]) -> dict[str, str]:
    """The figures of one run."""
    reached = r.time_to_target is not None
    never = r.status == "failed" and not r.nit  # no timings to show (not 0.0us)
    return {
        "time-to-target": "-" if not reached else fmt.seconds_fixed(r.time_to_target),
        "interval": "-",
        "iters": str(r.nit_to_target if reached else r.nit),
        "nfev": str(r.nfev_to_target if reached else r.nfev),
        "njev": str(r.njev_to_target if reached else r.njev),
        "rel.subopt": fmt.scientific(r.fun if no_opt else r.relative_suboptimality),
        **{f"metric:{m}": fmt.fraction(r.metrics.get(m)) for m in metric_names},
        "timed": "-" if never and not r.time else fmt.seconds_fixed(r.time),
        "warm-up": "-" if never and not r.warmup_time else fmt.seconds_fixed(r.warmup_time),
        "cpu time": fmt.seconds_fixed(r.cpu_time_to_target if reached else r.cpu_time),
        "contended": "yes" if r.timing.contended else "-",
    }


def _interval(times: list[float]) -> str:
    """The 95% interval of the median time-to-target and any shortfall of its coverage (``-``
    when undefined)."""
    from optcmp.analysis.stats.bootstrap import coverage_note, median_ci

    ci = median_ci(times)
    if math.isnan(ci.low) or math.isinf(ci.low):
        return "-"
    return f"{fmt.seconds_fixed(ci.low)}-" + ("inf" if math.isinf(ci.high) else
                                              fmt.seconds_fixed(ci.high)) + coverage_note(
        ci.coverage, ci.level, sep="")


def _group_cells(g: list[RunResult], no_opt: bool, metric_names: list[str]) -> dict[str, str]:
    """The medians of the repetitions of one row (time-to-target censored)."""
    times = [math.inf if r.time_to_target is None else float(r.time_to_target) for r in g]
    med = censored_median(times)
    reached = math.isfinite(med)

    def counts(name: str) -> str:
        if reached:
            vals = [math.inf if r.time_to_target is None else getattr(r, f"{name}_to_target")
                    for r in g]
            known = [float(v) for v in vals if v is not None]
            return fmt.count(censored_median(known)) if known else "-"
        return fmt.count(_median([getattr(r, name) for r in g]))

    def med_of(values: Sequence[float | None], style: Any = fmt.seconds_fixed) -> str:
        return style(_median(values))

    cpu = ([r.cpu_time_to_target if r.time_to_target is not None else math.inf for r in g]
           if reached
           else [r.cpu_time for r in g])
    cpu_med = (censored_median([math.inf if v is None else float(v) for v in cpu]) if reached
               else _median(cpu))
    busy = sum(1 for r in g if r.timing.contended)
    ttt = fmt.seconds_fixed(med) if reached else "-"
    return {
        "time-to-target": ttt,
        "interval": _interval(times),
        "iters": counts("nit"), "nfev": counts("nfev"), "njev": counts("njev"),
        "rel.subopt": med_of([r.fun if no_opt else r.relative_suboptimality for r in g],
                             fmt.scientific),
        **{f"metric:{m}": med_of([r.metrics.get(m) for r in g], fmt.fraction)
           for m in metric_names},
        "timed": med_of([r.time for r in g]), "warm-up": med_of([r.warmup_time for r in g]),
        "cpu time": fmt.seconds_fixed(cpu_med) if cpu_med is not None and math.isfinite(cpu_med)
        else "-",
        "contended": f"{busy}/{len(g)}" if busy else "-",
    }


def _row(g: list[RunResult], no_opt: bool, metric_names: list[str]) -> dict[str, str]:
    """Every cell of the row of ``g`` (one run or the repetitions of one)."""
    r = g[0]
    statuses = {x.status for x in g}
    used = ran(g)
    cells = {"optimizer": r.label,
             "backend": r.backend + ("" if r.device == "cpu" else f"/{r.device}"),
             "impl": r.impl or "-", "dtype": r.dtype,
             "status": r.status if len(statuses) == 1 else "mixed", "n": str(len(used))}
    if not used:  # never ran: no figures to show
        return cells
    figures = (_run_cells(used[0], no_opt, metric_names) if len(used) == 1
               else _group_cells(used, no_opt, metric_names))
    return {**cells, **figures}


def _floor_row(optimum: dict[str, Any] | None) -> dict[str, str]:
    """The direct-solve floor row of a closed-form optimum (none for given or estimated f*)."""
    if not optimum or optimum.get("time") is None or optimum.get("kind", "direct") != "direct":
        return {}
    method = str(optimum.get("method") or "direct")
    t = fmt.seconds_fixed(optimum["time"])
    name = method.split(" (", 1)[0].rsplit(".", 1)[-1]  # "lstsq", "blocked Householder QR"
    return {"optimizer": f"{name} (floor)", "backend": "numpy",
            "impl": "lstsq" if "lstsq" in method else ("QR" if "QR" in method else "direct"),
            "dtype": "float64", "status": "exact", "n": "1", "time-to-target": t,
            "rel.subopt": fmt.scientific(0.0), "timed": t}


#: The column of each clock a ranking reads; its header is bracketed: ``[cpu time]``.
RANK_COLUMNS = {"cpu": "cpu time", "wall": "time-to-target"}


def _header(col: str, no_opt: bool, estimated: bool, metric_names: list[str],
            clock: str) -> list[str]:
    """The column's header cell(s) (``metrics`` is one column per accuracy, or none)."""
    if col == "metrics":
        return [m.replace("_accuracy", " acc") for m in metric_names]
    if col == "rel.subopt":
        return ["loss" if no_opt else ("rel.subopt*" if estimated else "rel.subopt")]
    return [f"[{col}]" if col == RANK_COLUMNS[clock] else col]


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


def _contention_notes(comp: ComparisonData, clock: str) -> list[str]:
    """Notes on shared hosts and contended runs."""
    notes = []
    shared = [r for r in comp.runs if r.conditions.shared_host]
    if shared:
        peak = max(r.conditions.concurrency for r in shared)
        notes.append(f"{len(shared)} run(s) shared their host with other runs (up to {peak} at "
                     "once): their timings contend and are not comparable with sequential ones")
    busy = [r for r in comp.runs if r.timing.contended]
    if busy:
        loads = [x for r in busy for x in (r.timing.load_start, r.timing.load_end) if x is not None]
        load = f", host load average up to {max(loads):.2f}" if loads else ""
        notes.append(f"contended: {len(busy)} run(s) lost CPU to other work (wall time more "
                     f"than 20% above CPU time{load}): their wall times are inflated"
                     + ("; the ranking uses CPU time" if clock == "cpu" else ""))
    flagged = [r for r in comp.runs if r.conditions.timing_error]
    if flagged:
        who = _who(sorted({(r.label, r.backend) for r in flagged}))
        notes.append(f"! timing error: {who}: a step measured faster than the memory-bandwidth "
                     "floor for its data (the clock did not wait for the work); those times "
                     "are not the runs'")
    return notes


def _who(pairs: list[tuple[str, str]]) -> str:
    """``"gd on numpy, torch; sgd on numpy"``: the rows a note applies to."""
    by_label: dict[str, list[str]] = {}
    for label, backend in dict.fromkeys(pairs):
        by_label.setdefault(label, []).append(backend)
    return "; ".join(f"{label} on {', '.join(bs)}" for label, bs in by_label.items())


def _why_notes(comp: ComparisonData, groups: list[list[RunResult]]) -> list[str]:
    """Why rows have no time-to-target (each reason once), and the rows of mixed statuses."""
    reasons: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for r in comp.runs:
        if r.time_to_target is None and r.message:
            reasons.setdefault((r.status, r.message), []).append((r.label, r.backend))
    notes = []
    for (status, message), pairs in reasons.items():
        text = message if message.startswith(status) else f"{status}: {message}"
        notes.append(f"{_who(pairs)}: {text}")
    for g in groups:
        statuses = [x.status for x in g]
        if len(set(statuses)) > 1:
            counts = ", ".join(f"{s} {statuses.count(s)}" for s in dict.fromkeys(statuses))
            notes.append(f"mixed: {g[0].label} on {g[0].backend}: {counts} of {len(g)} runs")
    return notes


def relative_only_notes(runs: Sequence[RunResult]) -> list[str]:
    """Converged runs that met a relative target from so far away that ``f - f*`` is still
    large (:func:`optcmp.stopping.targets.far_start_note`), once per optimizer/backend."""
    out: dict[tuple[str, str], str] = {}
    for r in runs:
        if r.status != "converged" or (r.label, r.backend) in out:
            continue
        note = far_start_note(r.fun, r.f0, r.fstar)
        if note:
            out[(r.label, r.backend)] = f"! {r.label} on {r.backend}: {note}"
    return list(out.values())


def caveat_notes(comp: ComparisonData) -> list[str]:
    """What a ranking of ``comp`` cannot tell: the framework gap and relative-only targets."""
    return framework_gap_notes(comp.runs) + relative_only_notes(comp.runs)


def _notes(comp: ComparisonData, groups: list[list[RunResult]], shown: Sequence[str],
           aggregated: bool, default: bool, rank_by: str | None, clock: str) -> list[str]:
    """The lines under the table: problem, optimum, target, how columns count, hosts, why."""
    notes = []
    if comp.problem:
        desc = ", ".join(f"{k}={v}" for k, v in comp.problem.items() if k in PROBLEM_KEYS)
        notes.append(f"problem: {desc}")
    dtypes = sorted({r.dtype for r in comp.runs})
    if "dtype" not in shown and len(dtypes) == 1:
        notes[-1:] = [(notes[-1] + "; " if notes else "") + f"every run in {dtypes[0]}"]
    notes.extend(_optimum_notes(comp.optimum))
    at_start = [r for r in comp.runs if r.status == "converged" and r.nit_to_target == 0]
    if at_start and (comp.optimum or {}).get("kind") == "estimated":
        notes.append(f"! {len(at_start)} run(s) 'converged' at iteration 0 to the estimated "
                     "f*: the start already meets the target against the estimate; check the "
                     "objective, its gradient and the estimate")
    target = comp.settings.get("target")
    if target:
        notes.append(f"target: {target}")
    notes.append(clock_line(clock, rank_by))
    notes.append("[ ]: the ranking's column; time-to-target (wall) and iters count until the "
                 "target was met (totals for runs that missed it); cpu time: CPU time of the "
                 "same steps (the run's own threads where its contract's cpu_clock says so), "
                 "which other work on the host does not inflate")
    if aggregated:
        notes.append("n: repetitions per row; time-to-target is their median (a run that missed "
                     "the target counts as slower than all), interval its 95% order-statistic "
                     "interval (its real coverage in brackets when too few runs reach 95%); "
                     "other figures are medians (per-run rows: per_run=True, optcmp run "
                     "--per-run)")
    hidden = [c for c in COLUMNS if c not in shown and c not in ("n", "interval")]
    if hidden and default:
        notes.append(f"more columns ({', '.join(hidden)}): wide=True, optcmp run --wide")
    notes.extend(_contention_notes(comp, clock))
    order = ranking_note(comp, rank_by)
    if order:
        notes.append(order)
    notes.extend(caveat_notes(comp))
    notes.extend(_why_notes(comp, groups))
    return notes


def _one_table(comp: ComparisonData, columns: tuple[str, ...], per_run: bool,
               rank_by: str | None = None) -> str:
    """The table of a comparison of one problem."""
    rank_by = rank_by_of(comp, rank_by)
    clock = clock_of([*comp.runs, *comp.verdict_runs], rank_by)
    # Without a known optimum the final loss replaces rel.subopt, and the problem's metrics
    # (e.g. train/test accuracy) stand next to it, so a plateau is visible in the table.
    no_opt = bool(comp.runs) and all(r.fstar is None for r in comp.runs)
    metric_names = sorted({k for r in comp.runs for k in r.metrics
                           if k.endswith("accuracy")}) if no_opt else []
    estimated = (comp.optimum or {}).get("kind", "direct") == "estimated" and not no_opt
    groups = sorted(_groups(comp, per_run), key=_sort_key(comp, rank_by))
    aggregated = any(len(ran(g)) > 1 for g in groups)
    repeats = per_run and len({r.repeat for r in comp.runs}) > 1
    shown = ["repeat" if c == "n" and repeats else c for c in columns
             if aggregated or repeats and c == "n" or c not in ("n", "interval")]
    keys = [f"metric:{m}" for m in metric_names]
    cols = [k for c in shown for k in (keys if c == "metrics" else [c])]
    header = [h for c in shown for h in _header(c, no_opt, estimated, metric_names, clock)]
    body = [_row(g, no_opt, metric_names) for g in groups]
    if per_run:
        for cells, g in zip(body, groups):
            cells["repeat"] = str(g[0].repeat)
    floor = _floor_row(comp.optimum)
    lines = [header] + [[cells.get(k, "-") for k in cols] for cells in (*body, floor) if cells]
    left = sum(1 for c in cols if c in _WORDS)
    default = columns == DEFAULT_COLUMNS
    legend = _fit_labels(lines, cols.index("optimizer") if "optimizer" in cols else None, left)
    notes = [ln for note in [*legend, *_notes(comp, groups, shown, aggregated, default,
                                              rank_by, clock)]
             for ln in fmt.wrap_note(note, WIDTH)]
    return "\n".join(fmt.fixed_width(lines, left=left)) + "\n" + "\n".join(notes)


def _fit_labels(lines: list[list[str]], col: int | None, left: int) -> list[str]:
    """Shorten (in place) the optimizer labels that name conventions, in a table wider than
    :data:`WIDTH`, to their name and a number, ``muon[1]``; the legend lines that spell them
    out (a label without conventions stays whole)."""
    over = max(map(len, fmt.fixed_width(lines, left=left))) - WIDTH
    if over <= 0 or col is None:
        return []
    room = max(len(row[col]) for row in lines) - over
    short: dict[str, str] = {}
    for row in lines[1:]:
        label = row[col]
        if len(label) > room and "(" in label and label not in short:  # conventions named
            short[label] = f"{label.split('(')[0]}[{len(short) + 1}]"
        row[col] = short.get(label, label)
    return [f"{s}: {label}" for label, s in short.items()]


def table(comp: ComparisonData, *, columns: Sequence[str] | None = None, wide: bool = False,
          per_run: bool = False, rank_by: str | None = None) -> str:
    """A readable fixed-width table in the order of :func:`optcmp.analysis.ranking.row_key`.

    Repetitions make one row (censored median, 95% bootstrap interval) unless ``per_run``; a
    closed-form problem gets its direct solve as a floor row; a suite one table per problem.
    ``rank_by`` (``"cpu"``, ``"wall"``) overrides the ranking's clock
    (:func:`optcmp.analysis.ranking.clock_of`); its column's header is bracketed.
    """
    cols = check_columns(columns, wide)
    if comp.problem_set:
        return "\n\n".join(f"== {name}\n{_one_table(sub, cols, per_run, rank_by)}"
                           for name, sub in comp.by_problem().items())
    return _one_table(comp, cols, per_run, rank_by)


__all__ = ["COLUMNS", "DEFAULT_COLUMNS", "PROBLEM_KEYS", "WIDTH", "check_columns", "rows",
           "table", "to_frame"]
