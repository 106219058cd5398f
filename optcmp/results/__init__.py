"""Results as data: :class:`Trace`, :class:`RunResult` (in parts, scipy's field names),
:class:`Settings` and :class:`ComparisonData`, with their dict/JSON round trip and the readers
of saved comparisons and run stores.

Nothing here analyses results: the tables, statistics, plots, reports and exports are
functions of :mod:`optcmp.analysis`, and :class:`optcmp.Comparison`
(:mod:`optcmp.comparison`) is the comparison with those as methods. ``Comparison`` of this
module is :class:`ComparisonData` (the data of one, as :func:`optcmp.compare` used to return
from here); its analysis methods are on :class:`optcmp.Comparison`, and calling one on the data
raises an :class:`AttributeError` that says so.

Modules: :mod:`~optcmp.results.trace`, :mod:`~optcmp.results.parts` (the five parts of a run),
:mod:`~optcmp.results.run`, :mod:`~optcmp.results.settings`, :mod:`~optcmp.results.data` and
:mod:`~optcmp.results.io` (reading files back).
"""

# check_output_path, write_text_atomic and environment were defined here once and stay
# importable from here.
from optcmp._io import check_output_path, write_text_atomic
from optcmp.environment import environment
from optcmp.results.data import ComparisonData, load_store
from optcmp.results.io import FORMAT_VERSION
from optcmp.results.parts import STATUSES, Conditions, Identity, Outcome, Timing, ToTarget
from optcmp.results.run import RunResult
from optcmp.results.settings import Settings
from optcmp.results.trace import Trace

#: The data class under its former name here (the analyses are on :class:`optcmp.Comparison`).
Comparison = ComparisonData

__all__ = ["FORMAT_VERSION", "STATUSES", "Comparison", "ComparisonData", "Conditions",
           "Identity", "Outcome", "RunResult", "Settings", "Timing", "ToTarget", "Trace",
           "check_output_path", "environment", "load_store", "write_text_atomic"]
