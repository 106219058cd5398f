"""Results as data: :class:`Trace`, :class:`RunResult` (in parts, scipy's field names),
:class:`Settings` and :class:`ComparisonData`, with their dict/JSON round trip and the readers
of saved comparisons and run stores.

Nothing here analyses results: the tables, statistics, plots, reports and exports are
functions of :mod:`optcmp.analysis`, and :class:`optcmp.Comparison`
(:mod:`optcmp.comparison`) is the comparison with those as methods; calling one on
:class:`ComparisonData` raises an :class:`AttributeError` that says so.

Modules: :mod:`~optcmp.results.trace`, :mod:`~optcmp.results.parts` (the five parts of a run),
:mod:`~optcmp.results.run`, :mod:`~optcmp.results.settings`, :mod:`~optcmp.results.data` and
:mod:`~optcmp.results.io` (reading files back).
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
