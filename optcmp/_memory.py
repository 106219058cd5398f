"""Host arrays that start on a 64-byte boundary: a CPU device of TensorFlow or JAX reads such
a read-only array in place (:func:`optcmp.frameworks.base.kept_host`)."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np


def aligned_empty(shape: tuple[int, ...], dtype: Any = np.float64,
                  order: Literal["C", "F"] = "C") -> np.ndarray:
    """An uninitialised array of ``shape`` and ``dtype`` in ``order`` whose data start on a
    64-byte boundary."""
    dt = np.dtype(dtype)
    nbytes = math.prod(shape) * dt.itemsize
    raw = np.empty(nbytes + 64, np.uint8)
    at = -raw.ctypes.data % 64
    flat = raw[at:at + nbytes].view(dt)
    return flat.reshape(shape[::-1]).T if order == "F" else flat.reshape(shape)


def aligned(arr: np.ndarray) -> bool:
    """Whether ``arr``'s data start on a 64-byte boundary."""
    return arr.ctypes.data % 64 == 0


__all__ = ["aligned", "aligned_empty"]
