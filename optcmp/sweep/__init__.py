"""A sweep: :func:`compare` runs every optimizer on every backend, ``repeats`` times.

It plans the runs (:mod:`~optcmp.sweep.plan`), executes them (:mod:`~optcmp.sweep.execute`,
through :mod:`optcmp.executors`), one problem of a suite after the other
(:mod:`~optcmp.sweep.suite`); :func:`confirm_leaders` repeats a verdict's leaders
(:mod:`~optcmp.sweep.verdict`). The sweep depends on the run and the executors, never the
other way round.

Repetitions
-----------
Repetition ``r`` uses seed ``seed + r`` for the initial point (when it is random) and the
minibatch order; the data stay fixed unless ``redraw_data=True``: then repetition ``r`` runs on
``problem.with_seed(data_seed + r)``, recorded in ``RunResult.problem_spec``.

Run store
---------
With ``store="runs.jsonl"`` (:mod:`optcmp.store`) every run is kept as it finishes, and a rerun
of the same sweep reads finished runs back instead of running them again: it resumes. A suite
gets one store file per problem, ``<store stem>-<problem name><ext>``.
"""

from optcmp.sweep.api import compare
from optcmp.sweep.plan import MAX_RUNS, ORDERS, Optimizers, execution_order
from optcmp.sweep.verdict import VERDICT_MAX_SECONDS, VERDICT_REPEATS, confirm_leaders

__all__ = ["MAX_RUNS", "ORDERS", "VERDICT_MAX_SECONDS", "VERDICT_REPEATS", "Optimizers",
           "compare", "confirm_leaders", "execution_order"]
