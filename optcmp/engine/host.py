"""Host sharing: how many optcmp runs of this process were active at once while a run ran.

Every run enters :func:`host_activity` around its whole execution (``conditions.concurrency``
and ``shared_host``: see docs/scaling-out.md); other processes are seen through each run's
contention measurement (:func:`optcmp.timing.contended`), so no file is shared.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


class Activity:
    """The activity of one run: :attr:`peak`, valid once its :func:`host_activity` block ended."""

    def __init__(self) -> None:
        self.peak = 1


_ACTIVE: set[Activity] = set()
_LOCK = threading.Lock()


@contextlib.contextmanager
def host_activity() -> Iterator[Activity]:
    """Register a run as active in this process; on exit, ``.peak`` is the most active at once."""
    act = Activity()
    with _LOCK:
        _ACTIVE.add(act)
        for other in _ACTIVE:
            other.peak = max(other.peak, len(_ACTIVE))
    try:
        yield act
    finally:
        with _LOCK:
            _ACTIVE.discard(act)


def host_name() -> str:
    """The name of the host runs execute on (recorded in :attr:`RunResult.conditions.host`)."""
    return socket.gethostname()


__all__ = ["Activity", "host_activity", "host_name"]
