"""scipy submodules, imported on first use (``import optcmp`` loads none of them).

Callers on a timed path import them during setup or warm-up, never inside a timed step.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_loaded: dict[str, ModuleType] = {}


def _load(name: str) -> ModuleType:
    # cached once the import has returned: a module that another thread is still importing
    # (already in sys.modules, half initialized) is never handed out
    mod = _loaded.get(name)
    if mod is None:
        mod = _loaded[name] = importlib.import_module(name)
    return mod


def special() -> ModuleType:
    """:mod:`scipy.special`, imported on the first call."""
    return _load("scipy.special")


def optimize() -> ModuleType:
    """:mod:`scipy.optimize`, imported on the first call."""
    return _load("scipy.optimize")


def linalg() -> ModuleType:
    """:mod:`scipy.linalg`, imported on the first call."""
    return _load("scipy.linalg")
