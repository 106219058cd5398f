"""CPU thread counts: the same number of threads for every backend, recorded in every result
(why: docs/concepts.md, 'CPU threads'); a framework's pools are set through its backend class."""

from __future__ import annotations

import contextlib
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from optcmp._warn import outside_level
from optcmp.frameworks.base import blas_threads
from optcmp.timing import watch_runtime

#: Threads every backend gets unless asked otherwise (why one: docs/concepts.md, 'CPU threads').
DEFAULT_THREADS = 1


def check_threads(n: Any) -> int | None:
    """Validate a thread count."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"threads must be a positive integer or None, got {n!r}")
    return int(n)


def _backend_class(backend: str, load: bool = False) -> Any:
    """The backend's class when its framework is imported (with ``load``: installed), else None;
    ``load`` lets a run set the pools before TensorFlow's runtime starts and fixes them."""
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
    """Run the body with ``n`` compute threads on ``backend`` (and numpy's BLAS).

    The pools are the process's: runs that overlap in one process (threads calling runs) share
    one limit, set by the first to start and undone by the last to end (one asking for another
    count waits until they end). Threads ``backend``'s runtime starts inside are its own
    (:func:`optcmp.timing.watch_runtime`).
    """
    n = check_threads(n)
    with contextlib.ExitStack() as stack:
        cls = _backend_class(backend, load=True)
        if cls is not None:
            stack.enter_context(cls.run_settings())
        started = cls is not None and cls.runtime_started()
        stack.enter_context(watch_runtime(str(getattr(cls, "name", backend)), started))
        if n is not None:
            stack.enter_context(_SHARED.hold(n, cls))
        yield


class _SharedLimit:
    """The thread limit of the overlapping runs of this process, reference-counted."""

    def __init__(self) -> None:
        self.lock = threading.Condition(threading.RLock())
        self.holders = 0
        self.n: int | None = None
        self.stack = contextlib.ExitStack()
        self.set_for: set[Any] = set()
        self.mine = threading.local()  # the holds of the calling thread

    @contextlib.contextmanager
    def hold(self, n: int, cls: Any) -> Iterator[None]:
        """Hold the limit ``n`` for the body; the first holder sets it, the last undoes it."""
        mine = getattr(self.mine, "n", 0)
        with self.lock:
            if mine and n != self.n:  # waiting for itself would never end
                raise ValueError(f"threads={n} asked for inside a run of threads={self.n} on "
                                 "the same thread: a run inside another computes with its "
                                 "thread count; give both the same")
            self.lock.wait_for(lambda: not self.holders or n == self.n)
            if not self.holders:
                self.n = n
                self.stack.callback(_blas_control)  # last: other threads may set it again
                self._limit_blas(n)
            if cls is not None and cls not in self.set_for:
                self.set_for.add(cls)
                restore = cls.set_threads(n)
                if restore is not None:
                    self.stack.callback(restore)
            self.holders += 1
        self.mine.n = mine + 1
        try:
            yield
        finally:
            self.mine.n = mine
            with self.lock:
                self.holders -= 1
                if not self.holders:
                    self.set_for.clear()
                    _blas_control()
                    self.stack.close()  # undone newest first
                    self.lock.notify_all()

    def _limit_blas(self, n: int) -> None:
        """Give the BLAS/OpenMP pools loaded now ``n`` threads until the last holder ends."""
        controller = _controller()
        if controller is None:  # pragma: no cover - a runtime dependency
            warnings.warn("threadpoolctl is not installed: numpy's BLAS threads are not limited",
                          stacklevel=outside_level())
            return
        _blas_control()
        self.stack.callback(controller.limit(limits=n).restore_original_limits)


_CONTROLLERS: dict[int, Any] = {}


def _controller() -> Any:
    """threadpoolctl's controller of the libraries loaded now (None: not installed), scanned
    again only when an import has loaded modules since (a scan costs ~30 ms per run)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - a runtime dependency
        return None
    key = len(sys.modules)
    controller = _CONTROLLERS.get(key)
    if controller is None:  # runs in threads may scan at once: each keeps its own scan
        controller = ThreadpoolController()
        _CONTROLLERS.clear()
        _CONTROLLERS[key] = controller
    return controller


def _blas_control() -> None:
    """Let this thread set the BLAS pools: threadpoolctl lets one thread at a time set the
    process-wide pool of OpenBLAS, and overlapping runs end on other threads than they began."""
    with contextlib.suppress(ImportError, AttributeError):
        from threadpoolctl import OpenBLASController
        OpenBLASController.clear_controlling_thread(force=True)


#: The process's one shared limit (:func:`limit_threads`).
_SHARED = _SharedLimit()


def pools_seen(backend: str) -> dict[str, int]:
    """The thread pools in force now, each by its library: what a run actually computes with."""
    out: dict[str, int] = {}
    controller = _controller()
    if controller is not None:
        for info in controller.info():
            api, n = str(info.get("internal_api", "?")), info.get("num_threads")
            if isinstance(n, int):
                out[api] = max(n, out.get(api, 0))
    cls = _backend_class(backend)
    own = None if cls is None else cls.get_threads()
    name = str(getattr(cls, "name", backend))
    if own is not None and name != "numpy":  # numpy's count is its BLAS pool's, listed above
        out[name] = int(own)
    return out


def limit_late_pools(n: int | None) -> None:
    """Give ``n`` threads to the BLAS/OpenMP pools loaded inside :func:`limit_threads`."""
    with _SHARED.lock:
        if n is not None and _SHARED.holders:
            _SHARED._limit_blas(int(_SHARED.n or n))
