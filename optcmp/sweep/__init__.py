"""A sweep: :func:`compare` runs every optimizer on every backend, ``repeats`` times.

The sweep plans the runs (:mod:`optcmp.sweep.plan`: one :class:`~optcmp.executors.RunTask`
each, holding a :class:`~optcmp.engine.RunConfig`), reads finished ones back from a run store,
executes the others (sequentially, or on an executor: :mod:`optcmp.executors`) and collects a
:class:`~optcmp.comparison.Comparison` (:mod:`optcmp.sweep.execute`); a suite runs every
problem in turn into one comparison (:mod:`optcmp.sweep.suite`); :func:`confirm_leaders` runs
the repetitions behind a verdict (:mod:`optcmp.sweep.verdict`). The sweep depends on the run
and the executors; neither depends on it.

Repetitions
-----------
Repetition ``r`` uses seed ``seed + r`` for the initial point (for problems whose initial point
is random, e.g. ``init="normal"``) and the minibatch order (stochastic optimizers); the data
stay fixed unless ``redraw_data=True``, where repetition ``r`` runs on
``problem.with_seed(data_seed + r)`` (``data_seed`` is the problem's own data seed; repetition 0
is ``problem`` itself) and each run records its problem's spec in ``RunResult.problem_spec``.
Within a repetition every optimizer and backend gets the same data, initial point and minibatch
order. Timing noise differs between repetitions too, so repetitions of a deterministic
full-batch run measure the timing spread.

Run store
---------
With ``store="runs.jsonl"`` (see :mod:`optcmp.store`) every finished run is appended and
fsync-ed as it finishes; runs already in the store (same :func:`optcmp.store.run_key`) are read
back instead of run again, so re-running an interrupted sweep resumes it. A suite gets one store
file per problem, ``<store stem>-<problem name><ext>``.

Devices and executors
---------------------
``device`` applies to the framework backends (numpy always runs on the CPU, a warning says so)
and is checked before any run: an absent GPU is one error naming the available devices. By
default runs execute sequentially in this process, one at a time; with an executor
(:mod:`optcmp.executors`) concurrent runs are flagged ``shared_host`` with a warning, and the
callback runs on the worker.
"""

from optcmp.sweep.api import compare
from optcmp.sweep.plan import MAX_RUNS, ORDERS, Optimizers, execution_order
from optcmp.sweep.verdict import VERDICT_MAX_SECONDS, VERDICT_REPEATS, confirm_leaders

__all__ = ["MAX_RUNS", "ORDERS", "VERDICT_MAX_SECONDS", "VERDICT_REPEATS", "Optimizers",
           "compare", "confirm_leaders", "execution_order"]
