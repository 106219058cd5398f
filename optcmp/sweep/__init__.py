"""A sweep: :func:`compare` runs every optimizer on every backend, ``repeats`` times.

It plans the runs (:mod:`~optcmp.sweep.plan`), executes them (:mod:`~optcmp.sweep.execute`,
through :mod:`optcmp.executors`), one problem of a suite after the other
(:mod:`~optcmp.sweep.suite`); :func:`confirm_leaders` repeats a verdict's leaders
(:mod:`~optcmp.sweep.verdict`). The sweep depends on the run and the executors, never the
other way round. Repetitions: docs/concepts.md; run stores: docs/scaling-out.md.
"""

from optcmp.sweep.api import compare
from optcmp.sweep.plan import MAX_RUNS, ORDERS, Optimizers, execution_order
from optcmp.sweep.verdict import VERDICT_MAX_SECONDS, VERDICT_REPEATS, confirm_leaders

__all__ = ["MAX_RUNS", "ORDERS", "VERDICT_MAX_SECONDS", "VERDICT_REPEATS", "Optimizers",
           "compare", "confirm_leaders", "execution_order"]
