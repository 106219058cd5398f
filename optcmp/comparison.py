"""The user-facing :class:`Comparison`: the runs of a sweep with their tables, statistics, plots.

``optcmp.compare`` returns one; ``Comparison.load`` reads one back from a JSON file or a run store.
"""

from optcmp.results import Comparison

__all__ = ["Comparison"]
