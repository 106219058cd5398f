"""Problem suites: sets of problems compared together, for performance and data profiles
(docs/problems.md, 'A problem set')."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from optcmp.problems.base import Problem
from optcmp.problems.mgh import MGHProblem
from optcmp.problems.mgh_functions import MGH


class Suite:
    """A named set of problems.

    Parameters
    ----------
    name : str
    problems : sequence of Problem
        With unique names.
    """

    def __init__(self, name: str, problems: Sequence[Problem]) -> None:
        probs = list(problems)
        bad = [type(p).__name__ for p in probs if not isinstance(p, Problem)]
        if bad:
            raise TypeError(f"a suite holds optcmp Problems, got {bad[0]}")
        if not probs:
            raise ValueError(f"suite {name!r} has no problems")
        names = [p.name for p in probs]
        dups = sorted({n for n in names if names.count(n) > 1})
        if dups:
            raise ValueError(f"suite {name!r}: problem names must be unique, repeated: {dups}")
        self.name = name
        self.problems = probs

    def __len__(self) -> int:
        return len(self.problems)

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def __getitem__(self, i: int) -> Problem:
        return self.problems[i]

    @property
    def names(self) -> list[str]:
        """The problems' names, in order."""
        return [p.name for p in self.problems]

    def spec(self) -> dict[str, Any]:
        """``{"suite": name, "problems": [spec, ...]}`` (JSON-serializable)."""
        return {"suite": self.name, "problems": [p.spec() for p in self.problems]}

    def __repr__(self) -> str:
        return f"Suite({self.name!r}, {len(self.problems)} problems)"


def mgh(problems: Sequence[int | str] | None = None,
        sizes: dict[int, dict[str, int]] | None = None) -> Suite:
    """The Moré-Garbow-Hillstrom unconstrained test set (35 problems, :mod:`optcmp.problems.mgh`).

    Parameters
    ----------
    problems : sequence of int or str, optional
        A subset, by number (1..35) or name; default all 35.
    sizes : dict, optional
        ``{number: {"n": ..., "m": ...}}`` overrides of the default dimensions.

    Returns
    -------
    Suite
        :class:`~optcmp.problems.MGHProblem` instances at the paper's standard starting points.
    """
    sizes = sizes or {}
    out = []
    for k in list(MGH) if problems is None else problems:
        p = MGHProblem(k)
        out.append(MGHProblem(p.info.number, **sizes[p.info.number])
                   if p.info.number in sizes else p)
    return Suite("mgh", out)


#: Suites by command-line name.
SUITES = {"mgh": mgh}
