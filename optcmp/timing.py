"""The stopwatch: it runs only around optimizer steps, syncs the device before every read and
adds up the CPU time of the run's own threads too (docs/concepts.md, 'Device sync', 'Time you
can trust', 'CPU time next to wall time: whose CPU time')."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

#: A run is *contended* when its timed wall time exceeds its CPU time by more than this
#: fraction: ``time > (1 + CONTENTION_MARGIN) * cpu_time`` (see :func:`contended`).
CONTENTION_MARGIN = 0.2
#: Timed regions shorter than this (seconds) are never flagged: a single scheduler tick
#: (about 4 ms on Linux) is a large fraction of them and says nothing about the host.
CONTENTION_MIN_TIME = 0.02


#: How a run's timing contract names a CPU clock that counts only the run's own threads.
OWN_THREADS = "own threads"
#: Backends whose compiled programs run on threads of their own runtime, not the caller's.
RUNTIME_BACKENDS = ("tensorflow", "jax")
#: Native ids of the threads each runtime started while optcmp watched (:func:`watch_runtime`).
_RUNTIME: dict[str, set[int]] = {}
#: Frameworks whose runtime had started before optcmp first watched it: their threads are
#: unknown, so their runs count the process's CPU time.
_UNWATCHED: set[str] = set()
#: The open watches: the framework and the native threads that existed when it opened.
_WATCHES: list[tuple[str, frozenset[int]]] = []
_LOCK = threading.Lock()


def native_threads() -> set[int] | None:
    """Native ids of this process's threads, from ``/proc/self/task`` (None without it)."""
    try:
        return {int(t) for t in os.listdir("/proc/self/task")}
    except OSError:
        return None


@contextlib.contextmanager
def watch_runtime(framework: str, started: bool = False) -> Iterator[None]:
    """Attribute to ``framework``'s runtime the native threads that start inside the body
    (Python threads, and threads another runtime started, excepted); ``started``: its runtime
    is already up (if optcmp never watched it before, its threads stay unknown)."""
    before = native_threads() if framework in RUNTIME_BACKENDS else None
    if before is None:
        yield
        return
    with _LOCK:
        if started and framework not in _RUNTIME:
            _UNWATCHED.add(framework)
        _RUNTIME.setdefault(framework, set())
    entry = (framework, frozenset(before))
    with _LOCK:
        _WATCHES.append(entry)
    try:
        yield
    finally:
        runtime_threads(framework)
        with _LOCK:
            _WATCHES.remove(entry)


def runtime_threads(framework: str) -> frozenset[int]:
    """Native ids of the live threads ``framework``'s runtime started while optcmp watched."""
    now = native_threads() or set()
    python = {t.native_id for t in threading.enumerate()}
    with _LOCK:
        own = _RUNTIME.setdefault(framework, set())
        others = set().union(*(v for k, v in _RUNTIME.items() if k != framework))
        for name, before in _WATCHES:
            if name == framework:
                own |= now - before - python - others
        own &= now
        return frozenset(own)


def _task_links() -> int | None:
    """The link count of ``/proc/self/task`` (two more than the process's threads; one
    ``stat``), or None without it."""
    try:
        return os.stat("/proc/self/task").st_nlink
    except OSError:
        return None


def _clock_id(tid: int) -> int:
    """Linux's CPU-time clock of thread ``tid`` of this process (as ``pthread_getcpuclockid``)."""
    return (~tid << 3) | 6


class ProcessCpu:
    """The CPU time of the whole process (or any clock given): every thread of it counts."""

    method = "process CPU time (every thread)"

    def __init__(self, clock: Callable[[], float] = time.process_time) -> None:
        self.clock = clock

    def read(self) -> Any:
        """A reading for :meth:`since`."""
        return self.clock()

    def since(self, start: Any) -> float:
        """CPU seconds since the reading ``start``."""
        return float(self.clock() - start)


class ThreadCpu(ProcessCpu):
    """The CPU time of a run's own threads: the thread that starts each interval and, for a
    backend of :data:`RUNTIME_BACKENDS`, the threads its runtime started
    (:func:`runtime_threads`); idle workers of other pools (numpy's BLAS) never count.

    Each thread is read on its own CPU-time clock (Linux, nanoseconds). A runtime that started
    before optcmp watched it has no known threads: then the process CPU time counts. The
    runtime's threads are listed again only when the process's thread count changed or a
    listed thread ended (:meth:`runtime`), not at every reading.
    """

    def __init__(self, framework: str | None = None) -> None:
        super().__init__()
        self.framework = framework if framework in RUNTIME_BACKENDS else None
        self.counted: frozenset[int] = frozenset()
        self.method = f"{OWN_THREADS} (the calling thread)"
        self._listed: tuple[int | None, frozenset[int]] | None = None
        self._kept: tuple[frozenset[int], int, tuple[tuple[int, int], ...]] | None = None

    def runtime(self) -> frozenset[int]:
        """The runtime's threads (:func:`runtime_threads`), listed again where the process's
        thread count changed since the last listing or a thread of it ended."""
        assert self.framework is not None
        links = _task_links()
        if self._listed is None or links is None or links != self._listed[0]:
            self._listed = (links, runtime_threads(self.framework))
        return self._listed[1]

    def read(self) -> dict[int, float]:
        """Each counted thread's CPU seconds, by native id (0: the process, as a fallback)."""
        own = threading.get_native_id()
        if self.framework is None:
            clocks: tuple[tuple[int, int], ...] = ((own, _clock_id(own)),)
        else:
            runtime = frozenset() if self.framework in _UNWATCHED else self.runtime()
            if not runtime:
                self.counted, self.method = frozenset(), ProcessCpu.method
                return {0: time.process_time()}
            clocks = self._clocks(own, runtime)
            self.method = f"{OWN_THREADS} (the calling thread and {self.framework}'s runtime threads)"
        try:
            out = {tid: time.clock_gettime(c) for tid, c in clocks}
        except OSError:  # a thread ended: list the runtime's threads again next time
            self._listed = None
            out = {}
            for tid, c in clocks:
                with contextlib.suppress(OSError):
                    out[tid] = time.clock_gettime(c)
        self.counted = frozenset(out)
        return out

    def _clocks(self, own: int, runtime: frozenset[int]) -> tuple[tuple[int, int], ...]:
        """``(thread, clock id)`` of the calling thread and the runtime's, kept per listing."""
        kept = self._kept
        if kept is None or kept[0] is not runtime or kept[1] != own:
            tids = [own, *sorted(runtime - {own})]
            kept = self._kept = (runtime, own, tuple((t, _clock_id(t)) for t in tids))
        return kept[2]

    def since(self, start: dict[int, float]) -> float:
        """CPU seconds of the threads of ``start`` since then (one that ended: up to its end)."""
        if 0 in start:
            return time.process_time() - start[0]
        try:
            return sum(time.clock_gettime(_clock_id(tid)) - c0 for tid, c0 in start.items())
        except OSError:  # a thread ended
            total = 0.0
            for tid, c0 in start.items():
                with contextlib.suppress(OSError):
                    total += time.clock_gettime(_clock_id(tid)) - c0
            return total


def run_cpu_clock(backend: str, threads: int | None, on_cpu: bool = True) -> ProcessCpu:
    """The CPU clock of a run: its own threads (:class:`ThreadCpu`) when it computes with one
    thread on the CPU under Linux; else the process's, whose every pool works for the run."""
    if threads != 1 or not on_cpu or not sys.platform.startswith("linux"):
        return ProcessCpu()
    return ThreadCpu(backend)


class Stopwatch:
    """Accumulates time over resumed/paused intervals, syncing the device before each read;
    ``cpu_clock`` (a :class:`ProcessCpu`, or a callable read as one) gives ``cpu_elapsed``."""

    __slots__ = ("_c0", "_clock", "_sync", "_t0", "cpu", "cpu_elapsed", "elapsed", "intervals")

    def __init__(self, sync: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter,
                 cpu_clock: Callable[[], float] | ProcessCpu = time.process_time) -> None:
        self._sync = sync or (lambda: None)
        self._clock = clock
        self.cpu = cpu_clock if isinstance(cpu_clock, ProcessCpu) else ProcessCpu(cpu_clock)
        self._t0: float | None = None
        self._c0: Any = 0.0
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
        self._c0 = self.cpu.read()
        self._t0 = self._clock()

    def pause(self) -> float:
        """Sync, then close the interval; returns its length in seconds."""
        if self._t0 is None:
            raise RuntimeError("Stopwatch.pause() called while paused")
        self._sync()
        dt = self._clock() - self._t0
        self.cpu_elapsed += self.cpu.since(self._c0)
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
