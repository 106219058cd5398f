"""The framework factor next to a cross-backend ranking: :func:`framework_gap_notes`.

Why: see docs/cli.md, 'A ranking across backends only'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


def _median(vals: Sequence[float]) -> float:
    v = [x for x in vals if x is not None and math.isfinite(x)]
    return float(np.median(v)) if v else math.inf


def step_factor(runs: Iterable[Any], problem: str, a: str, b: str) -> tuple[float, str] | None:
    """The per-step time factor backend ``a`` / backend ``b``, from an optimizer run on both."""
    per: dict[tuple[str, str], list[float]] = {}
    for r in runs:
        if r.problem == problem and r.nit and r.time and r.status != "skipped":
            per.setdefault((r.label, r.backend), []).append(r.time / r.nit)
    for label in dict.fromkeys(lab for lab, _ in per):
        if (label, a) in per and (label, b) in per:
            ta, tb = _median(per[(label, a)]), _median(per[(label, b)])
            if math.isfinite(ta) and math.isfinite(tb) and tb > 0:
                return ta / tb, label
    return None


def framework_gap_notes(runs: Iterable[Any]) -> list[str]:
    """Notes for every pair of optimizers ranked across backends only: the time-to-target gap
    and the :func:`step_factor` of their backends, with a warning when it is as large."""
    runs = [r for r in runs if r.status != "skipped"]
    notes: list[str] = []
    for prob in dict.fromkeys(r.problem for r in runs):
        mine = [r for r in runs if r.problem == prob]
        backends: dict[str, set[str]] = {}
        ttt: dict[tuple[str, str], list[float]] = {}
        for r in mine:
            backends.setdefault(r.label, set()).add(r.backend)
            ttt.setdefault((r.label, r.backend), []).append(
                r.time_to_target if r.time_to_target is not None else math.inf)
        labels = list(backends)
        for i, x in enumerate(labels):
            for y in labels[i + 1:]:
                if backends[x] & backends[y]:
                    continue
                bx, by = sorted(backends[x])[0], sorted(backends[y])[0]
                notes.append(_note(mine, prob, x, bx, _median(ttt[(x, bx)]), y, by,
                                   _median(ttt[(y, by)])))
    return notes


def _note(runs: list[Any], prob: str, x: str, bx: str, tx: float, y: str, by: str,
          ty: float) -> str:
    if tx > ty:
        x, bx, tx, y, by, ty = y, by, ty, x, bx, tx
    gap = ty / tx if math.isfinite(ty) and tx > 0 else math.inf
    head = (f"{prob}: {x} ({bx}) vs {y} ({by}) ran on different backends only; time-to-target "
            f"gap {gap:.3g}x")
    fac = step_factor(runs, prob, by, bx)
    if fac is None:
        return (f"{head}; no optimizer ran on both {bx} and {by} to measure the framework "
                "factor: the ranking may be the framework's (run one optimizer on both)")
    f, label = fac
    slow, fast = (by, bx) if f >= 1 else (bx, by)
    size = max(f, 1 / f) if f > 0 else math.inf
    warn = (" - WARNING: the framework factor is as large as the gap, so the ranking cannot "
            "tell the algorithm from the framework" if size >= gap else "")
    return (f"{head}; per-step factor {slow}/{fast} measured on {label}: {size:.3g}x{warn}")


__all__ = ["framework_gap_notes", "step_factor"]
