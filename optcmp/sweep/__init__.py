"""A sweep: :func:`compare` runs every optimizer on every backend, ``repeats`` times.

The sweep plans the runs (:mod:`optcmp.sweep.plan`: one :class:`~optcmp.executors.RunTask`
each, holding a :class:`~optcmp.run.RunConfig`), reads finished ones back from a run store,
executes the others (sequentially, or on an executor: :mod:`optcmp.executors`) and collects a
:class:`~optcmp.comparison.Comparison` (:mod:`optcmp.sweep.execute`); a suite runs every
problem in turn into one comparison (:mod:`optcmp.sweep.suite`); :func:`confirm_leaders` runs
the repetitions behind a verdict (:mod:`optcmp.sweep.verdict`). The sweep depends on the run
and the executors; neither depends on it.

:func:`compare` lives in :mod:`optcmp.sweep.api`, whose docstring describes repetitions, the run
store, devices and executors.
"""

from optcmp.sweep.api import compare
from optcmp.sweep.plan import MAX_RUNS, ORDERS, Optimizers, execution_order
from optcmp.sweep.verdict import VERDICT_MAX_SECONDS, VERDICT_REPEATS, confirm_leaders

__all__ = ["MAX_RUNS", "ORDERS", "VERDICT_MAX_SECONDS", "VERDICT_REPEATS", "Optimizers",
           "compare", "confirm_leaders", "execution_order"]
