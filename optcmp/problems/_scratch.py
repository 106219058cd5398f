"""Work arrays a numpy evaluation reuses from call to call, one set per thread.

An array of over 128 KiB freed on every call is faulted in again page by page the next time
(more than the arithmetic costs); these are allocated once per shape and thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

#: Elements below which a work array is left to numpy's allocator (its small-block cache).
MIN_ELEMENTS = 1 << 14

#: Shapes kept per thread (the oldest is dropped first).
MAX_SHAPES = 4

_local = threading.local()


def work_arrays(shape: tuple[int, ...], dtype: Any, count: int) -> list[np.ndarray] | None:
    """``count`` work arrays of ``shape`` and ``dtype`` for this thread, or None for small ones."""
    if int(np.prod(shape)) < MIN_ELEMENTS:
        return None
    kept: dict[tuple[Any, ...], list[np.ndarray]] = getattr(_local, "kept", None) or {}
    _local.kept = kept
    key = (tuple(shape), np.dtype(dtype).str, count)
    found = kept.pop(key, None)
    if found is None:
        found = [np.empty(shape, dtype) for _ in range(count)]
        while len(kept) >= MAX_SHAPES:
            kept.pop(next(iter(kept)))
    kept[key] = found  # the newest last
    return found


@contextmanager
def dropped_after() -> Iterator[None]:
    """This thread's work arrays first allocated inside the block are dropped at its end."""
    before = set(getattr(_local, "kept", None) or ())
    try:
        yield
    finally:
        kept = getattr(_local, "kept", None) or {}
        for key in [k for k in kept if k not in before]:
            del kept[key]
