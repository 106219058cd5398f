"""Old home of the run table and the verdict line; the code lives in
:mod:`optcmp.analysis.tables` (``rows``, ``table``, ``to_frame``, ``fixed_width``) and
:mod:`optcmp.analysis.verdict` (``verdict``). New code imports those."""

from optcmp.analysis.tables import fixed_width, rows, table, to_frame
from optcmp.analysis.verdict import verdict

__all__ = ["fixed_width", "rows", "table", "to_frame", "verdict"]
