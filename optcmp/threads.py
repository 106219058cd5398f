"""CPU thread counts: the same number of threads for every backend, recorded in every result.

On a CPU, the thread pools decide timings as much as the algorithm does: numpy's BLAS, PyTorch's
intra-op pool and TensorFlow's intra-op pool each default to their own count, and on a small or
busy machine an oversubscribed BLAS pool can make a step many times slower. A fair comparison
gives every backend the same count. :func:`limit_threads` sets it for the duration of a run:

* numpy/scipy: the BLAS and OpenMP pools, through :mod:`threadpoolctl`;
* PyTorch: :func:`torch.set_num_threads` (restored afterwards);
* TensorFlow: ``tf.config.threading.set_intra_op_parallelism_threads`` and the inter-op pool.
  TensorFlow fixes its pools when its runtime starts, so the count can be set only before the
  first TensorFlow operation of the process; later, the pools keep their size, a warning says
  so, and the result records the count actually in force.

References
----------
threadpoolctl, https://github.com/joblib/threadpoolctl (BLAS/OpenMP pool control).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from typing import Any


def check_threads(n: Any) -> int | None:
    """Validate a thread count.

    Parameters
    ----------
    n : int or None
        Threads, or None for each library's default.

    Returns
    -------
    int or None

    Raises
    ------
    ValueError
        ``n`` is not None nor a positive integer.
    """
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"threads must be a positive integer or None, got {n!r}")
    return int(n)


def blas_threads() -> int | None:
    """Threads of the first BLAS pool numpy uses, or None if unknown.

    Returns
    -------
    int or None
        As reported by :func:`threadpoolctl.threadpool_info`; ``None`` when threadpoolctl is
        missing or no BLAS pool is loaded.
    """
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - a runtime dependency
        return None
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            return int(info["num_threads"])
    return None


def current_threads(backend: str) -> int | None:
    """Threads the backend's compute pool uses now (None if unknown).

    Parameters
    ----------
    backend : {"numpy", "torch", "tensorflow"}

    Returns
    -------
    int or None
        :func:`torch.get_num_threads` for torch (if imported), TensorFlow's intra-op count
        (its default, 0, reported as :func:`os.cpu_count`), else numpy's BLAS threads
        (:func:`blas_threads`).
    """
    if backend == "torch" and "torch" in sys.modules:
        return int(sys.modules["torch"].get_num_threads())
    if backend == "tensorflow" and "tensorflow" in sys.modules:
        tf = sys.modules["tensorflow"]
        n = int(tf.config.threading.get_intra_op_parallelism_threads())
        return n if n > 0 else os.cpu_count()
    return blas_threads()


@contextlib.contextmanager
def limit_threads(n: int | None, backend: str) -> Iterator[None]:
    """Run the body with ``n`` compute threads on ``backend`` (and numpy's BLAS).

    Parameters
    ----------
    n : int or None
        Threads; ``None`` leaves every library at its default.
    backend : {"numpy", "torch", "tensorflow"}
        The backend about to run (its framework must already be imported).

    Yields
    ------
    None
        The previous limits are restored on exit (BLAS and torch; TensorFlow's pools keep
        their new size, see the module docstring).

    Warns
    -----
    UserWarning
        TensorFlow's pools already started with another count, or threadpoolctl is missing.

    Raises
    ------
    ValueError
        ``n`` is not a positive integer.
    """
    if n is None:
        yield
        return
    n = int(check_threads(n))  # type: ignore[arg-type]
    with contextlib.ExitStack() as stack:
        try:
            from threadpoolctl import threadpool_limits

            stack.enter_context(threadpool_limits(limits=n))
        except ImportError:  # pragma: no cover - a runtime dependency
            warnings.warn("threadpoolctl is not installed: numpy's BLAS threads are not limited",
                          stacklevel=3)
        if backend == "torch" and "torch" in sys.modules:
            torch = sys.modules["torch"]
            old = torch.get_num_threads()
            torch.set_num_threads(n)
            stack.callback(torch.set_num_threads, old)
        if backend == "tensorflow" and "tensorflow" in sys.modules:
            _tf_threads(sys.modules["tensorflow"], n)
        yield


def _tf_threads(tf: Any, n: int) -> None:
    cur = tf.config.threading.get_intra_op_parallelism_threads()
    if cur == n:
        return
    try:
        tf.config.threading.set_intra_op_parallelism_threads(n)
        tf.config.threading.set_inter_op_parallelism_threads(n)
    except RuntimeError:
        warnings.warn(
            f"TensorFlow's thread pools were already started with "
            f"{cur or 'its default number of'} threads and cannot change to {n} in this "
            "process; the result records the count in force. Start a fresh process (or the "
            "TensorFlow runs first) to control them.", stacklevel=4)


__all__ = ["blas_threads", "check_threads", "current_threads", "limit_threads"]
