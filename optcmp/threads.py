"""CPU thread counts: the same number of threads for every backend, recorded in every result.

On a CPU, the thread pools decide timings as much as the algorithm does: numpy's BLAS, PyTorch's
intra-op pool and TensorFlow's intra-op pool each default to their own count, and on a small or
busy machine an oversubscribed BLAS pool can make a step many times slower. A fair comparison
gives every backend the same count, by default :data:`DEFAULT_THREADS` (one).
:func:`limit_threads` sets it for the duration of a run:

* numpy/scipy: the BLAS and OpenMP pools, through :mod:`threadpoolctl` (here: no framework);
* the run's framework: its backend class (found through the registry,
  :mod:`optcmp.frameworks`), which keeps the framework's own code in its folder:
  :meth:`~optcmp.frameworks.base.Backend.run_settings` (what a run sets in the process: JAX's
  XLA CPU flags before it starts, its ``jax_enable_x64`` restored afterwards) and
  :meth:`~optcmp.frameworks.base.Backend.set_threads` (PyTorch's pool, restored afterwards;
  TensorFlow's pools, which can be set only before its first operation: later they keep their
  size, a warning says so, and the result records the count actually in force).

References
----------
threadpoolctl, https://github.com/joblib/threadpoolctl (BLAS/OpenMP pool control).
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from optcmp.frameworks.base import blas_threads

#: Threads every backend gets unless asked otherwise (:class:`optcmp.engine.RunConfig`,
#: :func:`optcmp.compare`, :func:`optcmp.tune`, ``optcmp run``). One thread per backend is the
#: same count for every library, is reproducible on a shared machine (a float reduction has one
#: order; a busy host cannot oversubscribe the pools) and keeps the contention flag exact
#: (:func:`optcmp.timing.contended`). ``benchmarks/threads.py`` measures the choice.
DEFAULT_THREADS = 1


def check_threads(n: Any) -> int | None:
    """Validate a thread count."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"threads must be a positive integer or None, got {n!r}")
    return int(n)


def _backend_class(backend: str, load: bool = False) -> Any:
    """The backend's class when its framework is already imported (None otherwise).

    With ``load``, an installed framework is imported first: a run about to use it sets its
    pools before the framework's runtime starts (TensorFlow fixes them then).
    """
    from optcmp.frameworks import BACKENDS, backend_class, canonical_backend, is_available

    info = BACKENDS[canonical_backend(backend)]
    if info.requires not in sys.modules and not (load and is_available(info.name)):
        return None
    try:
        return backend_class(info.name)
    except ImportError:  # installed but broken: the run itself reports it
        return None


def current_threads(backend: str) -> int | None:
    """Threads the backend's compute pool uses now (None if unknown)."""
    cls = _backend_class(backend)
    return blas_threads() if cls is None else cls.get_threads()


@contextlib.contextmanager
def limit_threads(n: int | None, backend: str) -> Iterator[None]:
    """Run the body with ``n`` compute threads on ``backend`` (and numpy's BLAS)."""
    n = check_threads(n)
    with contextlib.ExitStack() as stack:
        cls = _backend_class(backend, load=True)
        if cls is not None:
            stack.enter_context(cls.run_settings())
        if n is None:
            yield
            return
        try:
            from threadpoolctl import threadpool_limits

            stack.enter_context(threadpool_limits(limits=n))
        except ImportError:  # pragma: no cover - a runtime dependency
            warnings.warn("threadpoolctl is not installed: numpy's BLAS threads are not limited",
                          stacklevel=3)
        restore = None if cls is None else cls.set_threads(n)
        if restore is not None:
            stack.callback(restore)
        late: list[Callable[[], Any]] = []
        _LATE.append(late)

        def undo_late() -> None:  # the pools limit_late_pools set, newest first
            _LATE.remove(late)
            for undo in reversed(late):
                undo()

        stack.callback(undo_late)
        yield


def pools_seen(backend: str) -> dict[str, int]:
    """The thread pools in force now, each by its library: what a run actually computes with."""
    out: dict[str, int] = {}
    try:
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            api, n = str(info.get("internal_api", "?")), info.get("num_threads")
            if isinstance(n, int):
                out[api] = max(n, out.get(api, 0))
    except ImportError:  # pragma: no cover - a runtime dependency
        pass
    cls = _backend_class(backend)
    own = None if cls is None else cls.get_threads()
    name = str(getattr(cls, "name", backend))
    if own is not None and name != "numpy":  # numpy's count is its BLAS pool's, listed above
        out[name] = int(own)
    return out


def limit_late_pools(n: int | None) -> None:
    """Give ``n`` threads to BLAS/OpenMP pools loaded after :func:`limit_threads` started.

    A library loaded during a run's setup (scipy's own OpenBLAS, say) starts with its default
    pool size; this sets every pool to ``n`` again. Inside :func:`limit_threads` every pool
    gets back the size it had before this call when that context exits (torch's OpenMP pool
    included: a later torch computation in the process uses its own count again).
    """
    if n is None:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a runtime dependency
        return
    lim = threadpool_limits(limits=int(n))
    if _LATE:
        _LATE[-1].append(lim.restore_original_limits)


#: Undo calls of :func:`limit_late_pools`, one list per active :func:`limit_threads` context.
_LATE: list[list[Callable[[], Any]]] = []


__all__ = ["DEFAULT_THREADS", "limit_late_pools", "check_threads", "current_threads", "limit_threads", "pools_seen"]
