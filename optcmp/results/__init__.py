"""Results as data: :class:`Trace`, :class:`RunResult` (in parts, scipy's field names),
:class:`Settings` and :class:`ComparisonData`, with their dict/JSON round trip and the readers
of saved comparisons and run stores.

Nothing here analyses results, so that results load without any analysis: the analyses are
functions of :mod:`optcmp.analysis`, and :class:`optcmp.Comparison` has them as methods.
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
