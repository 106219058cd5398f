"""scipy submodules, imported on first use (``import optcmp`` loads none of them).

Callers on a timed path import them during setup or warm-up, never inside a timed step.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_loaded: dict[str, ModuleType] = {}


def special() -> ModuleType:
    """:mod:`scipy.special`, imported on the first call.

    Returns
    -------
    module
    """
    mod = _loaded.get("special")
    if mod is None:
        mod = _loaded["special"] = importlib.import_module("scipy.special")
    return mod


def optimize() -> ModuleType:
    """:mod:`scipy.optimize`, imported on the first call.

    Returns
    -------
    module
    """
    mod = _loaded.get("optimize")
    if mod is None:
        mod = _loaded["optimize"] = importlib.import_module("scipy.optimize")
    return mod
