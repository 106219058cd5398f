"""The stopwatch: it runs only around optimizer steps and syncs the device before every read.

CUDA (and other asynchronous devices) return from a call before the work is done; a clock read
without a sync times the enqueueing, not the work (pytorch/pytorch#21286). :class:`Stopwatch`
calls ``sync()`` before reading the clock at both ends of every timed interval, so the time a
step spends on the device is always counted, and monitoring done between steps never is.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def _noop() -> None:
    return None


class Stopwatch:
    """Accumulates time over resumed/paused intervals, syncing the device before each read.

    Parameters
    ----------
    sync : callable, optional
        Waits for queued device work (``Backend.sync``). Called before every clock read.
    clock : callable, default :func:`time.perf_counter`
        Monotonic clock in seconds.

    Attributes
    ----------
    elapsed : float
        Seconds accumulated over all closed intervals.
    intervals : int
        Number of closed intervals.

    Examples
    --------
    >>> sw = Stopwatch()
    >>> sw.resume(); _ = sum(range(1000)); sw.pause()
    >>> sw.elapsed > 0
    True
    """

    __slots__ = ("_clock", "_sync", "_t0", "elapsed", "intervals")

    def __init__(self, sync: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self._sync = sync or _noop
        self._clock = clock
        self._t0: float | None = None
        self.elapsed = 0.0
        self.intervals = 0

    @property
    def running(self) -> bool:
        """Whether an interval is open."""
        return self._t0 is not None

    def resume(self) -> None:
        """Sync, then open an interval.

        Raises
        ------
        RuntimeError
            An interval is already open.
        """
        if self._t0 is not None:
            raise RuntimeError("Stopwatch.resume() called while running")
        self._sync()
        self._t0 = self._clock()

    def pause(self) -> float:
        """Sync, then close the interval; returns its length in seconds.

        Raises
        ------
        RuntimeError
            No interval is open.
        """
        if self._t0 is None:
            raise RuntimeError("Stopwatch.pause() called while paused")
        self._sync()
        dt = self._clock() - self._t0
        self._t0 = None
        self.elapsed += dt
        self.intervals += 1
        return dt

    def timer_resolution(self) -> float:
        """Smallest non-zero difference between two reads of the clock, in seconds."""
        best = float("inf")
        for _ in range(50):
            a = self._clock()
            b = self._clock()
            while b == a:
                b = self._clock()
            best = min(best, b - a)
        return best
