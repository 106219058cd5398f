"""scipy submodules, imported on first use (``import optcmp`` loads none of them); callers on a
timed path import them during setup or warm-up, never inside a timed step."""

from __future__ import annotations

import functools
from types import ModuleType

from optcmp._imports import first_import

_loaded: dict[str, ModuleType] = {}


def _load(name: str) -> ModuleType:
    """The module ``name``, imported on the first call."""
    # cached once the import has returned: a module that another thread is still importing
    # (already in sys.modules, half initialized) is never handed out
    mod = _loaded.get(name)
    if mod is None:
        mod = _loaded[name] = first_import(name)
    return mod


special = functools.partial(_load, "scipy.special")
optimize = functools.partial(_load, "scipy.optimize")
linalg = functools.partial(_load, "scipy.linalg")
