"""The stopwatch: it runs only around optimizer steps, syncs the device before every read and
adds up the process CPU time too (docs/concepts.md, 'Device sync', 'Time you can trust')."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

#: A run is *contended* when its timed wall time exceeds its process CPU time by more than this
#: fraction: ``time > (1 + CONTENTION_MARGIN) * cpu_time`` (see :func:`contended`).
CONTENTION_MARGIN = 0.2
#: Timed regions shorter than this (seconds) are never flagged: a single scheduler tick
#: (about 4 ms on Linux) is a large fraction of them and says nothing about the host.
CONTENTION_MIN_TIME = 0.02


class Stopwatch:
    """Accumulates time over resumed/paused intervals, syncing the device before each read."""

    __slots__ = ("_c0", "_clock", "_cpu_clock", "_sync", "_t0", "cpu_elapsed", "elapsed",
                 "intervals")

    def __init__(self, sync: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter,
                 cpu_clock: Callable[[], float] = time.process_time) -> None:
        self._sync = sync or (lambda: None)
        self._clock = clock
        self._cpu_clock = cpu_clock
        self._t0: float | None = None
        self._c0 = 0.0
        self.elapsed = 0.0
        self.cpu_elapsed = 0.0
        self.intervals = 0

    @property
    def running(self) -> bool:
        """Whether an interval is open."""
        return self._t0 is not None

    def resume(self) -> None:
        """Sync, then open an interval."""
        if self._t0 is not None:
            raise RuntimeError("Stopwatch.resume() called while running")
        self._sync()
        self._c0 = self._cpu_clock()
        self._t0 = self._clock()

    def pause(self) -> float:
        """Sync, then close the interval; returns its length in seconds."""
        if self._t0 is None:
            raise RuntimeError("Stopwatch.pause() called while paused")
        self._sync()
        dt = self._clock() - self._t0
        self.cpu_elapsed += self._cpu_clock() - self._c0
        self._t0 = None
        self.elapsed += dt
        self.intervals += 1
        return dt

    def mark(self) -> tuple[float, float, int]:
        """The readings now (``elapsed``, ``cpu_elapsed``, ``intervals``), for :meth:`rewind`."""
        return self.elapsed, self.cpu_elapsed, self.intervals

    def rewind(self, mark: tuple[float, float, int]) -> None:
        """Drop the intervals closed since ``mark`` (steps that are timed again)."""
        if self._t0 is not None:
            raise RuntimeError("Stopwatch.rewind() called while running")
        self.elapsed, self.cpu_elapsed, self.intervals = mark

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


def contended(wall: float, cpu: float | None, *, margin: float | None = None,
              min_time: float = CONTENTION_MIN_TIME) -> bool:
    """Whether a timed region lost its CPU to other work: ``wall > (1 + margin) * cpu``.

    Why the CPU time is not divided by the threads: docs/concepts.md, 'Time you can trust'.
    ``margin`` defaults to ``$OPTCMP_CONTENTION_MARGIN`` or :data:`CONTENTION_MARGIN`.
    """
    if cpu is None or wall < min_time:
        return False
    if margin is None:
        try:
            margin = float(os.environ.get("OPTCMP_CONTENTION_MARGIN", "") or CONTENTION_MARGIN)
        except ValueError:
            margin = CONTENTION_MARGIN
    return wall > (1.0 + margin) * cpu


def load_average() -> float | None:
    """The host's 1-minute load average (:func:`os.getloadavg`), or None where unavailable."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):  # Windows has no load average
        return None
