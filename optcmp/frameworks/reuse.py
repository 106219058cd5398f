"""What identifies a compiled function across runs (:class:`ReuseKey`, :func:`problem_parts`).

Kept in an attribute of the problem and freed with it (a ``WeakKeyDictionary`` keyed by the
problem would never free them: the compiled functions reference the problem).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from optcmp.fingerprint import canonical_json

if TYPE_CHECKING:
    from optcmp.problems.base import Problem

#: Guards the get-or-create of an owner's dict of compiled functions (runs in threads).
_STORE_LOCK = threading.Lock()


class ReuseKey:
    """What identifies a compiled function across runs, and the object it is kept on."""

    __slots__ = ("owner", "parts")

    def __init__(self, owner: Any, parts: tuple[Any, ...]) -> None:
        self.owner = owner
        self.parts = parts

    def store(self) -> dict[Any, Any]:
        """The owner's dict of compiled functions (created on first use)."""
        with _STORE_LOCK:
            found = getattr(self.owner, "_optcmp_compiled", None)
            if found is None:
                found = self.owner._optcmp_compiled = {}
        return found  # type: ignore[no-any-return]


def problem_parts(problem: Problem) -> tuple[Any, ...] | None:
    """What a compiled function bakes in of the problem (part of a :class:`ReuseKey`)."""
    try:
        described = canonical_json(problem.spec())
    except (TypeError, ValueError):
        return None
    funcs = tuple(id(getattr(getattr(problem, name, None), "__func__", None)
                     or getattr(problem, name, None))
                  for name in ("objective", "gradient_ops"))
    return type(problem).__qualname__, described, funcs


__all__ = ["ReuseKey", "problem_parts"]
