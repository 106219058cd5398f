"""Results as data: :class:`Trace`, :class:`RunResult`, :class:`Settings` and
:class:`ComparisonData`, with their JSON round trip; nothing here analyses results, so that
results load without any analysis (:mod:`optcmp.analysis`, :class:`optcmp.Comparison`).
"""

from optcmp.results.data import ComparisonData, load_store
from optcmp.results.io import FORMAT_VERSION
from optcmp.results.parts import (
    STATUSES,
    CensorBound,
    Conditions,
    Identity,
    Outcome,
    Timing,
    ToTarget,
)
from optcmp.results.run import RunResult
from optcmp.results.settings import Settings
from optcmp.results.trace import Trace

__all__ = ["FORMAT_VERSION", "STATUSES", "CensorBound", "ComparisonData", "Conditions",
           "Identity", "Outcome", "RunResult", "Settings", "Timing", "ToTarget", "Trace",
           "load_store"]
