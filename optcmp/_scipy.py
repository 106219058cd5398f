"""scipy submodules, imported on first use (``import optcmp`` loads none of them).

Callers on a timed path import them during setup or warm-up, never inside a timed step.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType


def _load(name: str) -> ModuleType:
    mod = sys.modules.get(name)
    return mod if mod is not None else importlib.import_module(name)


def special() -> ModuleType:
    """:mod:`scipy.special`, imported on the first call.

    Returns
    -------
    module
    """
    return _load("scipy.special")


def optimize() -> ModuleType:
    """:mod:`scipy.optimize`, imported on the first call.

    Returns
    -------
    module
    """
    return _load("scipy.optimize")
