"""The verdict of a comparison over a set of problems (a suite), in two sentences.

:func:`fastest_per_problem` says which solver was fastest to the target how often;
:func:`suite_summary` how often each reached the target in every run. The report
(:mod:`optcmp.analysis.report`) puts them first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def suite_summary(rows: Sequence[dict[str, Any]]) -> str:
    """The suite's answer in one sentence, before the lines per problem.

    Per solver (optimizer, backend, dtype): on how many problems it reached the target in
    every run, and on how many it was the fastest (smallest median time-to-target).
    """
    probs = list(dict.fromkeys(r["problem"] for r in rows))
    solved: dict[str, int] = {}
    fastest: dict[str, int] = {}
    for prob in probs:
        prow = [r for r in rows if r["problem"] == prob]
        for r in prow:
            name = solver_name(r)
            solved[name] = solved.get(name, 0) + int(r["successes"] == r["runs"] > 0)
        fin = [r for r in prow if math.isfinite(r["median_time"])]
        if fin:
            best = solver_name(min(fin, key=lambda r: r["median_time"]))
            fastest[best] = fastest.get(best, 0) + 1
    order = sorted(solved, key=lambda k: (-solved[k], -fastest.get(k, 0), k))
    parts = [f"{k}: {solved[k]} solved, fastest on {fastest.get(k, 0)}" for k in order]
    return (f"Over the suite's {len(probs)} problems (reached the target in every run; "
            f"fastest by median time-to-target): " + "; ".join(parts) + ".")


def fastest_per_problem(rows: Sequence[dict[str, Any]], probs: list[str]) -> list[str]:
    """Two sentences over a set of problems: who was fastest how often, who reached always."""
    fastest: dict[str, int] = {}
    always: dict[str, int] = {}
    for prob in probs:
        prow = [r for r in rows if r["problem"] == prob]
        fin = [r for r in prow if math.isfinite(r["median_time"])]
        if fin:
            name = solver_name(min(fin, key=lambda r: r["median_time"]))
            fastest[name] = fastest.get(name, 0) + 1
        for r in prow:
            if r["runs"] and r["successes"] == r["runs"]:
                always[solver_name(r)] = always.get(solver_name(r), 0) + 1
    n = len(probs)
    solved = sum(fastest.values())
    by = sorted(fastest.items(), key=lambda kv: -kv[1])
    first = ("Fastest to the target, per problem: "
             + "; ".join(f"{k} on {v} of {n}" for k, v in by)
             + (f"; no solver reached it on {n - solved} of {n}." if solved < n else ".")
             if by else f"No solver reached the target on any of the {n} problems.")
    names = sorted({solver_name(r) for r in rows})
    second = ("Reached the target in every run: "
              + "; ".join(f"{k} on {always.get(k, 0)} of {n} problems" for k in names) + ".")
    return [first, second]


def solver_name(r: dict[str, Any]) -> str:
    """``"lbfgs (numpy)"``: a summary row's solver."""
    return f"{r['optimizer']} ({r['backend']})"


__all__ = ["fastest_per_problem", "solver_name", "suite_summary"]
