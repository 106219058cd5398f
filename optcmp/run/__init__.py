"""One run: its settings, the checks of its inputs, the session, the drivers, the monitor.

* :mod:`optcmp.run.config`: :class:`RunConfig`, the one carrier of every setting of a run, and
  :func:`configured` (keyword overrides of a config);
* :mod:`optcmp.run.checks`: the checks made before any work and the default stopping rule;
* :mod:`optcmp.run.session`: :class:`Session`, the adapter's lifecycle for one run (setup,
  execution mode, warm-up), shared by the timed run and :func:`optcmp.check_equivalence`;
* :mod:`optcmp.run.drivers`: the loops that take the timed steps, behind one interface;
* :mod:`optcmp.run.monitor`: :class:`Monitor`, everything done off the clock between steps;
* :mod:`optcmp.run.status`: how a run's status and message are decided;
* :mod:`optcmp.run.host`: the host and the runs active at once (:func:`host_activity`);
* :mod:`optcmp.run.runner`: :func:`run` and :func:`run_one`, a :class:`RunResult` built once.
"""

from optcmp.run.checks import (
    check_problem,
    check_resolution,
    check_rule,
    make_stopping,
    numpy_cpu_warning,
    type_name,
)
from optcmp.run.config import EXECUTIONS, Callback, RunConfig, check_callback, configured
from optcmp.run.drivers import LoopRecord, choose_driver, record_fixed_steps
from optcmp.run.host import host_activity
from optcmp.run.monitor import Monitor
from optcmp.run.runner import own_rule, run, run_one, skipped_result
from optcmp.run.session import CompileInTimedWarning, Session, resolve_execution

__all__ = ["EXECUTIONS", "Callback", "CompileInTimedWarning", "LoopRecord", "Monitor",
           "RunConfig", "Session", "check_callback", "check_problem", "check_resolution",
           "check_rule", "choose_driver", "configured", "host_activity", "make_stopping",
           "numpy_cpu_warning", "own_rule", "record_fixed_steps", "resolve_execution", "run",
           "run_one", "skipped_result", "type_name"]
