"""A framework's first import out of the cyclic garbage collector's way, in a process that
opts in (:func:`freezing_imports`: the ``optcmp`` command, whose process optcmp owns).

Importing torch, TensorFlow or JAX creates hundreds of thousands of objects that live as long
as the process, and each full pass of the collector during and after the import traverses all
of them again (about 1 s of the main job's CPU time, none of it the runs'). Under
:func:`first_import` the collector makes no full pass during the import (its young
generations are collected as usual: the import's garbage goes), and ``gc.freeze()`` then moves
every object alive into the permanent generation, which no later pass traverses (reference
counting still frees them). A library call (:func:`optcmp.compare`) freezes nothing: the
caller's objects alive then would never be collected if they later became cyclic garbage.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import threading
from collections.abc import Iterator
from types import ModuleType

#: Set while a process that opted in runs (:func:`freezing_imports`).
_FREEZING: list[bool] = []
#: First imports under way (in any thread), and the collector's thresholds before them.
_under_way = 0
_threshold = gc.get_threshold()
_LOCK = threading.Lock()


@contextlib.contextmanager
def freezing_imports() -> Iterator[None]:
    """Let :func:`first_import` freeze what the process holds after each first import, for
    the block (what was frozen stays so: the process ends with the command)."""
    _FREEZING.append(True)
    try:
        yield
    finally:
        _FREEZING.pop()


def first_import(name: str) -> ModuleType:
    """``importlib.import_module(name)``; the first time, where the process opted in, with no
    full collection during the import and every object alive after it frozen."""
    if not _FREEZING or name in sys.modules:
        return importlib.import_module(name)
    global _under_way, _threshold
    with _LOCK:  # imports in several threads: the thresholds of before the first come back
        if _under_way == 0:
            _threshold = gc.get_threshold()
            gc.set_threshold(_threshold[0], _threshold[1], 1 << 30)
        _under_way += 1
    try:
        return importlib.import_module(name)
    finally:
        with _LOCK:
            _under_way -= 1
            if _under_way == 0:
                gc.freeze()
                gc.set_threshold(*_threshold)
