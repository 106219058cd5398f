"""Where optcmp's warnings point: the user's line, not a frame inside optcmp."""

from __future__ import annotations

import inspect


def outside_level() -> int:
    """The ``stacklevel`` (1: the function calling this) of the first frame outside optcmp."""
    frame = inspect.currentframe()
    frame = frame.f_back if frame is not None else None  # the caller: level 1
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "optcmp":
        frame = frame.f_back
        level += 1
    del frame
    return level
