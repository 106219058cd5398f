"""The monitor (the old module path): the code lives in :mod:`optcmp.engine.monitor`."""

from optcmp.engine.config import Callback
from optcmp.engine.monitor import LazyX, Monitor

__all__ = ["Callback", "LazyX", "Monitor"]
