"""The verdict of a comparison over a set of problems (a suite), in two sentences."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any


def _tally(rows: Sequence[dict[str, Any]], probs: list[str]) -> tuple[Counter[str], Counter[str]]:
    """Per solver: on how many of ``probs`` it was fastest, and reached the target every run."""
    fastest: Counter[str] = Counter()
    always: Counter[str] = Counter()
    for prob in probs:
        prow = [r for r in rows if r["problem"] == prob]
        for r in prow:
            always[solver_name(r)] += int(r["successes"] == r["runs"] > 0)
        fin = [r for r in prow if math.isfinite(r["median_time"])]
        if fin:
            fastest[solver_name(min(fin, key=lambda r: r["median_time"]))] += 1
    return fastest, always


def suite_summary(rows: Sequence[dict[str, Any]]) -> str:
    """Per solver, on how many problems it always reached the target and was the fastest."""
    probs = list(dict.fromkeys(r["problem"] for r in rows))
    fastest, solved = _tally(rows, probs)
    order = sorted(solved, key=lambda k: (-solved[k], -fastest[k], k))
    parts = [f"{k}: {solved[k]} solved, fastest on {fastest[k]}" for k in order]
    return (f"Over the suite's {len(probs)} problems (reached the target in every run; "
            f"fastest by median time-to-target): " + "; ".join(parts) + ".")


def fastest_per_problem(rows: Sequence[dict[str, Any]], probs: list[str]) -> list[str]:
    """Two sentences over a set of problems: who was fastest how often, who reached always."""
    fastest, always = _tally(rows, probs)
    n = len(probs)
    solved = sum(fastest.values())
    by = sorted(fastest.items(), key=lambda kv: -kv[1])
    first = ("Fastest to the target, per problem: "
             + "; ".join(f"{k} on {v} of {n}" for k, v in by)
             + (f"; no solver reached it on {n - solved} of {n}." if solved < n else ".")
             if by else f"No solver reached the target on any of the {n} problems.")
    names = sorted({solver_name(r) for r in rows})
    second = ("Reached the target in every run: "
              + "; ".join(f"{k} on {always[k]} of {n} problems" for k in names) + ".")
    return [first, second]


def solver_name(r: dict[str, Any]) -> str:
    """``"lbfgs (numpy)"``: a summary row's solver."""
    return f"{r['optimizer']} ({r['backend']})"


__all__ = ["fastest_per_problem", "solver_name", "suite_summary"]
