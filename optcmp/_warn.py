"""Where optcmp's warnings point: the user's line, not a frame inside optcmp."""

from __future__ import annotations

import inspect

#: Modules whose frames sit between optcmp's own (a ``with`` block's context manager): skipped.
_PASSED = ("optcmp", "contextlib")


def outside_level() -> int:
    """The ``stacklevel`` (1: the function calling this) of the first frame outside optcmp (and
    outside :mod:`contextlib`, which runs optcmp's context managers)."""
    frame = inspect.currentframe()
    frame = frame.f_back if frame is not None else None  # the caller: level 1
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in _PASSED:
        frame = frame.f_back
        level += 1
    del frame
    return level
