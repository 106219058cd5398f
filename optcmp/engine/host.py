"""Host sharing: how many optcmp runs of this process were active at once while a run ran.

Every run enters :func:`host_activity` around its whole execution, so its result records the
most runs active at once (:attr:`RunResult.conditions.concurrency`, an executor's threads or another sweep
of the same process) and whether that was more than itself (:attr:`RunResult.conditions.shared_host`).
Other processes, optcmp's or not, are seen through each run's contention measurement instead
(:func:`optcmp.timing.contended`: a process CPU time well below the wall time).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import uuid
from collections.abc import Iterator


class Activity:
    """The activity of one run: :attr:`peak`, valid once its :func:`host_activity` block ended."""

    def __init__(self) -> None:
        self.peak = 1


_ACTIVE: dict[str, dict[str, int]] = {}
_LOCK = threading.Lock()


@contextlib.contextmanager
def host_activity() -> Iterator[Activity]:
    """Register a run as active in this process; on exit, ``.peak`` is the most active at once.

    The count covers runs of this process only (an executor's threads, a caller running
    sweeps at the same time). Other processes, optcmp's or not, are seen through the
    contention measurement of every run instead (:func:`optcmp.timing.contended`): a
    process CPU time well below the wall time. No file is shared between processes.
    """
    act = Activity()
    me = uuid.uuid4().hex
    with _LOCK:
        _ACTIVE[me] = {"peak": 0}
        n = len(_ACTIVE)
        for v in _ACTIVE.values():
            v["peak"] = max(v["peak"], n)
    try:
        yield act
    finally:
        with _LOCK:
            entry = _ACTIVE.pop(me, None)
        act.peak = max(1, entry["peak"]) if entry else 1


def host_name() -> str:
    """The name of the host runs execute on (recorded in :attr:`RunResult.conditions.host`)."""
    return socket.gethostname()


__all__ = ["Activity", "host_activity", "host_name"]
