"""The repetitions behind a verdict: a one-repetition comparison's verdict would rest on the
timing noise of one run per entry, so :func:`confirm_leaders` runs its two fastest entries again.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from optcmp.analysis.ranking import rank_runs
from optcmp.comparison import Comparison
from optcmp.engine import RunConfig
from optcmp.engine.runner import run
from optcmp.fingerprint import canonical_json
from optcmp.optimizers.base import get_optimizer
from optcmp.problems.base import Problem
from optcmp.results import RunResult
from optcmp.stopping import rule_from_dict

#: Entries :func:`confirm_leaders` repeats beyond the first two (single-run runners-up).
MAX_NEW_RUNNERS_UP = 2
#: Repetitions of each of the two fastest entries behind a verdict (:func:`confirm_leaders`).
VERDICT_REPEATS = 5
#: :func:`confirm_leaders` repeats the two fastest entries only when their times add up to less.
VERDICT_MAX_SECONDS = 2.0


def leaders(runs: Sequence[RunResult]) -> list[RunResult]:
    """The fastest run of each ranked entry, in the order of the comparison's ranking."""
    return [min(e.reached, key=lambda r: float(r.time_to_target or 0.0))
            for e in rank_runs(runs) if e.ranked]


def confirm_leaders(problem: Problem, comp: Comparison, config: RunConfig | None = None, *,
                    repeats: int = VERDICT_REPEATS,
                    max_seconds: float = VERDICT_MAX_SECONDS) -> Comparison:
    """The comparison with more repetitions of its two fastest entries behind its verdict.

    With one repetition per entry and two entries that reached the target within
    ``max_seconds`` together, each runs ``repeats - 1`` more times, interleaved (A B, B A, ...),
    as its table's run did; so does an entry the medians bring into the first two places (up to
    :data:`MAX_NEW_RUNNERS_UP` entries, within ``max_seconds``).

    Parameters
    ----------
    problem : Problem
    comp : Comparison
        A comparison of ``problem``.
    config : RunConfig, optional
        The settings ``comp`` was run with; default: the settings ``comp`` recorded.
    repeats : int, default 5
        Runs of each of the two entries in all (the table's included), at least 1.
    max_seconds : float, default 2.0
        A finite positive number of seconds.

    Returns
    -------
    Comparison
        ``comp`` itself when there is nothing to confirm, else a copy with ``verdict_runs``.

    Raises
    ------
    ValueError
        ``problem`` is not the one ``comp`` ran, or ``repeats`` or ``max_seconds`` is not
        allowed.
    """
    repeats, max_seconds = _check_arguments(problem, comp, repeats, max_seconds)
    if int(comp.settings.get("repeats", 1) or 1) > 1:
        return comp
    top = leaders(comp.runs)[:2]
    if len(top) < 2 or sum(float(r.time_to_target or 0.0) for r in top) > max_seconds:
        return comp
    base = _base_config(comp, config)
    rule = rule_from_dict(comp.settings["stopping"])
    runs = _repeat(problem, top, base, rule, repeats)
    for _ in range(MAX_NEW_RUNNERS_UP):  # the runner-up by the medians is repeated as well
        ranked = [e for e in rank_runs([*comp.runs, *runs], comp.settings.get("rank_by"))
                  if e.ranked][:2]
        repeated = {(r.label, r.backend, r.device, r.dtype) for r in runs}
        new = [e for e in ranked if e.key not in repeated]
        if not new or float(new[0].time or 0.0) + float(ranked[0].time or 0.0) > max_seconds:
            break
        single = min(new[0].reached, key=lambda r: float(r.time_to_target or 0.0))
        runs += _repeat(problem, [single], base, rule, repeats)
    return comp.replace(verdict_runs=runs)


def _check_arguments(problem: Problem, comp: Comparison, repeats: Any,
                     max_seconds: Any) -> tuple[int, float]:
    """``repeats`` and ``max_seconds`` checked, and ``problem`` checked to be ``comp``'s."""
    ran: Any = comp.problem or next((r.problem_spec for r in comp.runs if r.problem_spec), {})
    if ran and canonical_json(ran) != canonical_json(problem.spec()):  # a saved one's too
        raise ValueError(f"problem {problem.spec()} is not the problem the comparison ran "
                         f"({ran}); its repetitions would mix runs of two problems into one "
                         "verdict. Pass the comparison's problem")
    if isinstance(repeats, (bool, np.bool_)) or not isinstance(repeats, numbers.Real) \
            or not float(repeats).is_integer() or float(repeats) < 1:
        raise ValueError(f"repeats must be an integer >= 1 (runs of each entry in all), got "
                         f"{type(repeats).__name__} {repeats!r:.80}")
    if isinstance(max_seconds, (bool, np.bool_)) or not isinstance(max_seconds, numbers.Real) \
            or not (math.isfinite(max_seconds) and float(max_seconds) > 0):
        raise ValueError(f"max_seconds must be a finite number of seconds > 0, got "
                         f"{type(max_seconds).__name__} {max_seconds!r:.80}")
    return int(float(repeats)), float(max_seconds)


def _repeat(problem: Problem, top: Sequence[RunResult], base: RunConfig, rule: Any,
            repeats: int) -> list[RunResult]:
    """``repeats - 1`` more runs of each entry of ``top``, interleaved (A B, B A, ...)."""
    runs: list[RunResult] = []
    for k in range(1, repeats):
        for r in (top if k % 2 == 0 else top[::-1]):
            spec = get_optimizer(r.optimizer, impl=r.impl or "auto", label=r.label,
                                 **r.hyperparameters)
            cfg = base.for_backend(r.backend).replace(
                stopping=rule, repeat=k, execution=r.conditions.execution or base.execution,
                gradient=r.conditions.gradient or base.gradient)
            runs.append(run(problem, spec, cfg))
    return runs


def _base_config(comp: Comparison, config: RunConfig | None) -> RunConfig:
    """``config``, checked against the settings ``comp`` recorded, or one built from them."""
    recorded = RunConfig().recorded()
    if config is None:
        given = {k: comp.settings[k] for k in recorded if k in comp.settings}
        if given.get("device") == "cpu":
            given["device"] = None
        return RunConfig(**given)
    for name, value in config.recorded().items():
        if name in comp.settings and comp.settings[name] != value:
            raise ValueError(f"config has {name}={value!r} but the comparison's runs used "
                             f"{name}={comp.settings[name]!r}; give the config the "
                             "comparison was run with")
    return config
