"""The summary over repetitions: per solver and problem, the success rate, the censored median
time-to-target with its CI and coverage (:mod:`~optcmp.analysis.stats.bootstrap`), medians of
iterations and evaluations, and COCO's aRT (:func:`~optcmp.analysis.stats.censor.average_runtime`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from optcmp.analysis import format as fmt
from optcmp.analysis.format import NOT_REACHED, fixed_width
from optcmp.analysis.stats.bootstrap import METHOD_WORDS, coverage_note, median_ci
from optcmp.analysis.stats.censor import average_runtime, censored_median, ran, to_target
from optcmp.analysis.stats.fairness import check_fairness
from optcmp.analysis.stats.keys import group_runs
from optcmp.analysis.stats.suites import suite_profile_table
from optcmp.results import ComparisonData, RunResult


def median_cpu_time(runs: Sequence[RunResult]) -> float:
    """Censored median process CPU time to target.

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    float
        NaN without runs, or when a run that reached it recorded no CPU time.
    """
    vals = []
    for r in runs:
        if math.isinf(to_target(r, "time")):
            vals.append(math.inf)
        elif r.cpu_time_to_target is None:
            return math.nan
        else:
            vals.append(float(r.cpu_time_to_target))
    return censored_median(vals) if vals else math.nan


def _row(key: tuple[str, ...], group: list[RunResult], ci_kw: dict[str, Any]) -> dict[str, Any]:
    """The summary row of one group of runs."""
    prob, label, backend, device, dtype = key
    used = ran(group)
    times = [to_target(r, "time") for r in used]
    ci = median_ci(times, **ci_kw)
    statuses = Counter(r.status for r in group)
    succ = sum(1 for t in times if math.isfinite(t))
    return {
        "problem": prob, "optimizer": label, "backend": backend, "device": device,
        "dtype": dtype, "runs": len(used), "skipped": len(group) - len(used),
        "successes": succ, "success_rate": succ / len(used) if used else math.nan,
        "median_time": ci.median, "ci_low": ci.low, "ci_high": ci.high,
        "ci_level": ci.level, "ci_method": ci.method, "ci_coverage": ci.coverage,
        **{f"median_{m}": censored_median([to_target(r, m) for r in used])
           for m in ("nit", "nfev", "njev")},
        "art": average_runtime(used, "time") if used else math.nan,
        "art_njev": average_runtime(used, "njev") if used else math.nan,
        "statuses": ", ".join(f"{k}:{v}" for k, v in statuses.items()),
        "median_cpu_time": median_cpu_time(used),
        "contended": sum(1 for r in used if r.timing.contended),
    }


def summarize(runs: Sequence[RunResult], *, confidence_level: float = 0.95,
              method: str = "order", n_resamples: int = 9999, seed: int = 0,
              warn: bool = True, timer_resolution: float | None = None) -> list[dict[str, Any]]:
    """One row per (problem, optimizer, backend, device, dtype) over its repetitions.

    Parameters
    ----------
    runs : sequence of RunResult
    confidence_level, method, n_resamples, seed
        Of the interval of the median time-to-target
        (:func:`~optcmp.analysis.stats.bootstrap.median_ci`).
    warn : bool, default True
        Emit the :func:`~optcmp.analysis.stats.fairness.check_fairness` warnings.
    timer_resolution : float, optional
        Seconds; see :func:`~optcmp.analysis.stats.fairness.fairness_issues`.

    Returns
    -------
    list of dict
        The group's keys, counts, censored medians, CI, aRT and statuses (seconds; ``inf``:
        censored or unbounded, NaN: undefined).
    """
    if warn:
        check_fairness(runs, timer_resolution=timer_resolution, stacklevel=2)
    ci_kw = {"confidence_level": confidence_level, "method": method,
             "n_resamples": n_resamples, "seed": seed}
    return [_row(key, group, ci_kw) for key, group in group_runs(runs).items()]


def ci_methods(rows: Sequence[dict[str, Any]]) -> str:
    """The kind(s) of interval the rows used, in words (``"order-statistic"`` when none was).

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`summarize`.

    Returns
    -------
    str
    """
    used = sorted({r.get("ci_method", "") for r in rows} - {"none", ""})
    return ", ".join(METHOD_WORDS.get(m, m) for m in used) or METHOD_WORDS["order"]


def by_median_time(row: dict[str, Any]) -> tuple[str, float]:
    """The sort key of summary rows: problem, then median time-to-target (NaN last)."""
    return (row["problem"], row["median_time"] if not math.isnan(row["median_time"])
            else math.inf)


def format_summary(rows: Sequence[dict[str, Any]], width: int = 120) -> str:
    """Fixed-width text of :func:`summarize` rows, sorted by median time-to-target.

    A ``problem`` or ``dtype`` column that holds one value is said once below the table instead;
    columns that do not fit in ``width`` go to a second block, after the optimizer and backend.

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`summarize`.
    width : int, default 120
        The widest line.

    Returns
    -------
    str
        The table, ``"(no runs)"`` for no rows.
    """
    if not rows:
        return "(no runs)"
    level = rows[0].get("ci_level", 0.95)
    header = ["problem", "optimizer", "backend", "dtype", "success", "time-to-target",
              f"{level:.0%} CI", "iters", "nfev", "njev", "aRT", "cpu-to-target", "contended"]
    lines = [header]
    for r in sorted(rows, key=by_median_time):
        lines.append([
            r["problem"], r["optimizer"],
            r["backend"] + ("" if r["device"] == "cpu" else f"/{r['device']}"), r["dtype"],
            f"{r['successes']}/{r['runs']}", fmt.seconds(r["median_time"], inf=NOT_REACHED),
            f"[{fmt.seconds(r['ci_low'])}, {fmt.seconds(r['ci_high'])}]"
            + ("" if math.isinf(r["ci_low"]) else coverage_note(r.get("ci_coverage", math.nan),
                                                                level)),
            *(fmt.count(r[k], inf=NOT_REACHED) for k in ("median_nit", "median_nfev",
                                                         "median_njev")),
            fmt.seconds(r["art"], inf=NOT_REACHED),
            fmt.seconds(r.get("median_cpu_time", math.nan), inf=NOT_REACHED),
            f"{r.get('contended', 0)}/{r['runs']}",
        ])
    same = [i for i in (0, 3) if len({row[i] for row in lines[1:]}) == 1]
    lines = [[c for i, c in enumerate(row) if i not in same] for row in lines]
    out = _blocks(lines, 4 - len(same), 3 - (0 in same), width)
    out += [f"{header[i]}: {rows[0][header[i]]} (every row)" for i in same]
    method = ci_methods(rows)
    out += fmt.wrap_note(
        f"medians over repetitions; CI: {method} interval of the median (its real "
        "coverage in brackets when too few runs reach the level); runs that "
        "missed the target are censored (inf), so a median is 'not reached' when half or "
        "more missed it (a CI bound of 'inf' is unbounded); aRT = total time spent / "
        "successes (COCO); cpu-to-target: median "
        "CPU time of the run's own threads to the target (load-independent); contended: runs "
        "whose wall time exceeded their CPU time by more than 20% (other work took the CPU)",
        width)
    return "\n".join(out)


def _blocks(lines: list[list[str]], left: int, keys: int, width: int) -> list[str]:
    """``fixed_width`` lines, the columns after the first ``keys`` in as many blocks of at most
    ``width`` characters as they need (each block repeats the key columns)."""
    text = fixed_width(lines, left)
    rest = list(range(keys, len(lines[0])))
    if max(map(len, text)) <= width or len(rest) < 2:
        return text
    widths = [len(c) for c in fixed_width(lines, len(lines[0]))[1].split("  ")]
    block: list[int] = []
    out: list[str] = []
    for i in rest:
        used = sum(widths[j] + 2 for j in [*range(keys), *block, i]) - 2
        if block and used > width:
            out += [*_block(lines, left, keys, block), ""]  # a blank line between blocks
            block = []
        block.append(i)
    return out + _block(lines, left, keys, block)


def _block(lines: list[list[str]], left: int, keys: int, cols: list[int]) -> list[str]:
    """The key columns and ``cols`` of ``lines`` as fixed-width text."""
    return fixed_width([[row[j] for j in (*range(keys), *cols)] for row in lines],
                       keys + sum(1 for c in cols if c < left))


def summary(comp: ComparisonData, *, as_frame: bool | None = None,
            confidence_level: float = 0.95, method: str = "order", n_resamples: int = 9999,
            seed: int = 0, warn: bool = True, stacklevel: int = 2) -> Any:
    """:func:`summarize` of a comparison's runs, with its recorded timer resolution.

    Parameters
    ----------
    comp : ComparisonData
    as_frame : bool, optional
        A pandas DataFrame, or a list of dicts; default: a DataFrame if pandas is installed.
    confidence_level, method, n_resamples, seed, warn
        As in :func:`summarize`.
    stacklevel : int, default 2
        Of the warnings.

    Returns
    -------
    pandas.DataFrame or list of dict
    """
    resolution = comp.timer_resolution
    if warn:
        check_fairness(comp.runs, timer_resolution=resolution, stacklevel=stacklevel,
                       shared_host_warned=comp.shared_host_warned)
    rows = summarize(comp.runs, confidence_level=confidence_level, method=method,
                     n_resamples=n_resamples, seed=seed, warn=False, timer_resolution=resolution)
    if as_frame is False:
        return rows
    try:
        import pandas as pd
    except ImportError as exc:
        if as_frame:
            raise ImportError("summary(as_frame=True) needs pandas: "
                              "pip install '.[pandas]' in a checkout of optcmp") from exc
        return rows
    return pd.DataFrame(rows)


def summary_table(comp: ComparisonData, **kwargs: Any) -> str:
    """:func:`format_summary` of :func:`summary`, and a suite's profiles after it.

    Parameters
    ----------
    comp : ComparisonData
    **kwargs
        Passed to :func:`summary`.

    Returns
    -------
    str
    """
    above = int(kwargs.pop("stacklevel", 2))  # of the caller of this function's caller
    text = format_summary(summary(comp, as_frame=False, stacklevel=above + 1, **kwargs))
    if comp.problem_set:
        text += "\n\n" + suite_profile_table(comp.runs)
    return text


__all__ = ["by_median_time", "ci_methods", "format_summary", "median_cpu_time", "summarize",
           "summary", "summary_table"]
