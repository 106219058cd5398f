"""The timing contract of a run, and the memory-bandwidth floor that flags impossible steps.

A step faster than reading its data at the memory bandwidth (:func:`step_floor`) timed something
other than its work. Why: see docs/backends.md, "The timing contract".
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np

#: The measured copy bandwidth is multiplied by this before it bounds a step: caches, several
#: memory channels and a quieter moment than the one measured cannot beat it.
BANDWIDTH_SAFETY = 10.0
#: Upper bound on a GPU's memory bandwidth, in bytes per second (above every HBM part sold).
DEVICE_BANDWIDTH_BOUND = 20e12
#: Steps reading fewer bytes than this are not checked (their data stay in the caches).
FLOOR_MIN_BYTES = 1 << 20
#: Size of the array :func:`memory_bandwidth` copies: small enough to add little to a run's
#: peak memory; a cache that holds it and its copy only raises the bandwidth, so loosens the
#: floor that :data:`BANDWIDTH_SAFETY` already loosens (a missing barrier is off by far more).
COPY_BYTES = 4 << 20


@functools.lru_cache(maxsize=1)
def memory_bandwidth() -> float:
    """Bytes per second a large numpy copy moves (read plus write), best of three, once."""
    src = np.ones(COPY_BYTES // 8)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * src.nbytes / max(best, 1e-9)


def step_bytes(problem: Any, dtype: str, steps_per_epoch: int | None = None) -> int:
    """Bytes of training data one step must read: every row, or one minibatch's share."""
    size = np.dtype(dtype).itemsize
    total = 0
    for a in problem.train_data.values():
        arr = np.asarray(a)
        total += arr.size * (size if np.issubdtype(arr.dtype, np.floating) else arr.itemsize)
    return int(total // max(int(steps_per_epoch or 1), 1))


def step_floor(nbytes: int, device: str) -> float:
    """The fastest a step reading ``nbytes`` can run, in seconds (0.0: not checked)."""
    if nbytes < FLOOR_MIN_BYTES:
        return 0.0
    on_cpu = str(device or "cpu").lower().startswith("cpu")
    bound = memory_bandwidth() * BANDWIDTH_SAFETY if on_cpu else DEVICE_BANDWIDTH_BOUND
    return float(nbytes / bound)


def timing_error(elapsed: float, nit: int, floor: float) -> str:
    """Why ``nit`` steps in ``elapsed`` seconds cannot be right, or ``""``."""
    if nit <= 0 or floor <= 0.0 or elapsed >= nit * floor:  # a product: exact at the floor
        return ""
    return (f"timing error: {elapsed / nit:.3g}s per step is below the memory-bandwidth floor "
            f"{floor:.3g}s for the data each step must read: the clock did not wait for the "
            "device's work (a missing barrier), so the time is not the run's")


#: The contract of a backend without a ``timing_contract`` method (numpy's): every call returns
#: after its work is done, in the run's dtype, with full-precision matrix products.
SYNCHRONOUS = {"barrier": "none (synchronous)", "matmul_precision": "highest"}


def timing_contract(backend: Any, threads: int | None, floor: float,
                    cpu: Any = None) -> dict[str, Any]:
    """The run's timing contract: the backend's, the threads, the step floor and, given the
    stopwatch's CPU clock ``cpu`` (:class:`optcmp.timing.ProcessCpu`), whose CPU time counts."""
    own = getattr(backend, "timing_contract", None)
    stated = own() if callable(own) else {**SYNCHRONOUS, "compute_dtype": backend.dtype}
    clock = {} if cpu is None else {"cpu_clock": cpu.method}
    if getattr(cpu, "counted", None):
        clock["cpu_threads"] = len(cpu.counted)
    return {**stated, "threads": threads, "step_floor": floor, **clock}


__all__ = ["BANDWIDTH_SAFETY", "COPY_BYTES", "DEVICE_BANDWIDTH_BOUND", "FLOOR_MIN_BYTES",
           "SYNCHRONOUS", "memory_bandwidth", "step_bytes", "step_floor", "timing_contract",
           "timing_error"]
