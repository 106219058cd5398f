"""The monitor (the old module path): the code lives in :mod:`optcmp.run.monitor`."""

from optcmp.run.config import Callback
from optcmp.run.monitor import LazyX, Monitor

__all__ = ["Callback", "LazyX", "Monitor"]
