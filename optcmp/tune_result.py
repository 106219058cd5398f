"""What :func:`optcmp.tune` found: :class:`TuneResult`, saved as JSON and read back as
optimizer specs by :func:`load_specs` (``optcmp tune --out PATH``, ``optcmp run --tuned PATH``).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optcmp._io import write_text_atomic
from optcmp.comparison import Comparison
from optcmp.optimizers.base import OptimizerSpec


@dataclass
class ConfigScore:
    """The score of one configuration."""

    optimizer: str
    spec: OptimizerSpec
    point: dict[str, Any]
    scores: list[float]
    median: float
    successes: int
    statuses: list[str]
    best: bool = False
    final_gap: float = float("inf")
    reached: list[bool] = field(default_factory=list)
    spent: float | None = None
    censored: list[bool] = field(default_factory=list)

    def lower_median(self) -> float:
        """The median of the scores, censored runs at their bound (a lower bound of the median
        when it falls on one)."""
        return float(np.median(self.scores))


@dataclass
class TuneResult:
    """What :func:`~optcmp.tuning.tune` found.

    Attributes
    ----------
    specs : list of OptimizerSpec
        The chosen configuration of each optimizer that has one (a configuration that reached
        the target in a run), in the order given; :attr:`missed` names the others.
    configs : list of ConfigScore
    by, budget, repeats, mode
        As given to :func:`~optcmp.tuning.tune`.
    cost : dict
        ``runs``, ``executed``, ``timed``, ``run_wall`` and ``elapsed`` (seconds).
    comparison : Comparison
    settings : dict
        The run settings of every tuning run.
    """

    specs: list[OptimizerSpec]
    configs: list[ConfigScore]
    by: str
    budget: float
    repeats: int
    mode: str
    cost: dict[str, float]
    comparison: Comparison = field(repr=False)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> OptimizerSpec | None:
        """The chosen spec (with several optimizers: the one with the smallest median score);
        None when no configuration reached the target."""
        chosen = [c for c in self.configs if c.best]
        if not chosen:
            return None
        top = min(chosen, key=lambda c: (c.median, -c.successes))
        return self.specs[[s.name for s in self.specs].index(top.optimizer)]

    @property
    def missed(self) -> list[str]:
        """The optimizers none of whose configurations reached the target (no winner)."""
        return _missed([(c.optimizer, c.successes) for c in self.configs])

    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per configuration."""
        unit = "seconds" if self.by == "time" else "iterations"
        return [{"optimizer": c.optimizer, **{f"hp_{k}": v for k, v in c.point.items()},
                 f"median_{unit}_to_target": c.median, "successes": c.successes,
                 "repeats": len(c.scores), "best": c.best, "spec": c.spec.describe()}
                for c in self.configs]

    def to_frame(self) -> Any:
        """A pandas DataFrame of :meth:`rows` (needs pandas)."""
        import pandas as pd
        return pd.DataFrame(self.rows())

    def table(self) -> str:
        """A readable table of every configuration, the choices and the tuning cost."""
        unit = "s" if self.by == "time" else "it"
        head = ["optimizer", "configuration", f"median to target ({unit})", "reached", ""]
        lines = [head]
        for c in self.configs:
            point = ", ".join(f"{k}={v!r}" for k, v in c.point.items()) or "defaults"
            med = (f"> {c.lower_median():.4g} (censored)" if c.median == float("inf")
                   else f"{c.median:.4g}" if c.successes else f">= {c.median:.4g} (budget)")
            cut = sum(c.censored)
            lines.append([c.optimizer, point, med, f"{c.successes}/{len(c.scores)}"
                          + (f", {cut} censored" if cut else ""), "<- best" if c.best else ""])
        widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
        out = ["  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip() for r in lines]
        out.insert(1, "  ".join("-" * w for w in widths[:-1]))  # the marker column has no head
        budget = (f"{self.budget:g} s timed" if self.by == "time"
                  else f"{int(self.budget)} iterations")
        out.append(f"budget per run: {budget}; a run that misses the target scores the budget, "
                   "a censored one its bound (it was slower); best = smallest median over "
                   f"{self.repeats} repetition(s)")
        k = self.cost
        out.append(f"tuning cost: {int(k['runs'])} runs ({int(k['executed'])} executed), "
                   f"{k['timed']:.3g} s timed, {k['run_wall']:.3g} s run wall time, "
                   f"{k['elapsed']:.3g} s elapsed")
        out.extend(f"chosen: {s.describe()}" for s in self.specs)
        if self.missed:
            out.append(f"none reached the target: {', '.join(self.missed)} (no winner: raise "
                       "the budget or widen the grid)")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def curves(self, **options: Any) -> Any:
        """The tuning-budget curves of this tuning.

        Parameters
        ----------
        **options
            As in :func:`~optcmp.analysis.stats.budget_curves.budget_curves`.

        Returns
        -------
        BudgetCurves
        """
        from optcmp.analysis.stats.budget_curves import budget_curves
        return budget_curves(self, **options)

    def to_html(self, path: str | os.PathLike[str] | None = None, *, images: str = "svg",
                **options: Any) -> str:
        """A page of the tuning: the budget curves and every configuration.

        Parameters
        ----------
        path : str or path-like, optional
        images : {"svg", "png"}, default "svg"
        **options
            As in :meth:`curves`.

        Returns
        -------
        str
        """
        from optcmp.analysis.budget_report import budget_html
        if images not in ("svg", "png"):
            raise ValueError(f"images must be 'svg' or 'png', got {images!r}")
        page = budget_html(self.curves(**options), title="optcmp tuning", images=images,
                           tuning_table=self.table())
        if path is not None:
            write_text_atomic(path, page, what="tuning report")
        return page

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable summary (specs, configurations, cost, settings, the problem and target
        tuned on; not the runs)."""
        return {"format": "optcmp.tune", "by": self.by, "budget": self.budget,
                "repeats": self.repeats, "mode": self.mode,
                "specs": [s.to_dict() for s in self.specs],
                "configs": [{"optimizer": c.optimizer, "spec": c.spec.to_dict(),
                             "point": c.point, "scores": c.scores,
                             "median": c.median if c.median < float("inf") else None,
                             "successes": c.successes, "statuses": c.statuses, "best": c.best,
                             "reached": c.reached, "spent": c.spent, "censored": c.censored,
                             "final_gap": c.final_gap if c.final_gap < float("inf") else None}
                            for c in self.configs],
                "cost": self.cost, "settings": dict(self.settings),
                "problem": dict(self.comparison.problem),
                "target": self.comparison.settings.get("target")}

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_dict` as JSON, atomically.

        Parameters
        ----------
        path : str or path-like
        """
        write_text_atomic(path, json.dumps(self.to_dict(), indent=1), what="tuning result")


def load_specs(path: str | os.PathLike[str]) -> list[OptimizerSpec]:
    """The chosen specs of a :meth:`TuneResult.save` file.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    list of OptimizerSpec
        Those of the optimizers with a winner.

    Raises
    ------
    ValueError
        The file is no tuning result, or no configuration in it reached the target.

    Warns
    -----
    UserWarning
        Some optimizers have no winner (they are left out).
    """
    p = os.fspath(path)
    d = _load(p)
    configs = d.get("configs")
    missed = _missed([(c.get("optimizer"), c.get("successes")) for c in configs
                      if isinstance(c, dict)] if isinstance(configs, list) else [])
    try:
        specs = [OptimizerSpec.from_dict(x) for x in d["specs"]]
    except KeyError as exc:
        raise ValueError(f"{p}: a spec lacks {exc}") from None
    specs = [s for s in specs if s.name not in missed]  # files of older optcmp kept them
    if missed and not specs:
        raise ValueError(f"{p}: no configuration reached the target in this tuning "
                         f"({', '.join(missed)}): nothing to run; tune with a larger budget "
                         "or a wider grid")
    if missed:
        warnings.warn(f"{p}: no configuration of {', '.join(missed)} reached the target in "
                      "this tuning: left out", UserWarning, stacklevel=2)
    return specs


def _missed(scores: list[tuple[Any, Any]]) -> list[str]:
    """The optimizers of ``(optimizer, successes)`` pairs that never reached the target."""
    names = list(dict.fromkeys(str(o) for o, _ in scores))
    hit = {str(o) for o, n in scores if isinstance(n, int) and n > 0}
    return [o for o in names if o not in hit]


def tuned_for(path: str | os.PathLike[str]) -> tuple[dict[str, Any] | None, str | None]:
    """The problem spec and target description a :meth:`TuneResult.save` file was tuned on
    (None where the file does not record them)."""
    d = _load(os.fspath(path))
    problem, target = d.get("problem"), d.get("target")
    return (problem if isinstance(problem, dict) else None,
            target if isinstance(target, str) else None)


def _load(p: str) -> dict[str, Any]:
    """The JSON of a tuning result, checked for its format."""
    with open(p, "rb") as fh:
        raw = fh.read()
    try:
        d = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p} is not an optcmp tuning result (not JSON: {exc})") from None
    specs = d.get("specs") if isinstance(d, dict) else None
    if (not isinstance(d, dict) or d.get("format") != "optcmp.tune"
            or not isinstance(specs, list) or not all(isinstance(x, dict) for x in specs)):
        raise ValueError(f"{p} is not an optcmp tuning result (format optcmp.tune)")
    return d


__all__ = ["ConfigScore", "TuneResult", "load_specs", "tuned_for"]
