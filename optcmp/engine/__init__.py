"""The run engine: one run's settings, the checks of its inputs, the session, the drivers, the
monitor (``optcmp.run``, the function, runs one; this package is how).

* :mod:`optcmp.engine.config`: :class:`RunConfig`, the one carrier of every setting of a run, and
  :func:`configured` (keyword overrides of a config);
* :mod:`optcmp.engine.checks`: the checks made before any work and the default stopping rule;
* :mod:`optcmp.engine.session`: :class:`Session`, the adapter's lifecycle for one run (setup,
  execution mode, warm-up), shared by the timed run and :func:`optcmp.check_equivalence`;
* :mod:`optcmp.engine.drivers`: the loops that take the timed steps, behind one interface;
* :mod:`optcmp.engine.monitor`: :class:`Monitor`, everything done off the clock between steps;
* :mod:`optcmp.engine.status`: how a run's status and message are decided;
* :mod:`optcmp.engine.host`: the host and the runs active at once (:func:`host_activity`);
* :mod:`optcmp.engine.runner`: :func:`run` and :func:`run`, a :class:`RunResult` built once.
"""

from optcmp.engine.checks import (
    check_problem,
    check_resolution,
    check_rule,
    make_stopping,
    numpy_cpu_warning,
    type_name,
)
from optcmp.engine.config import EXECUTIONS, Callback, RunConfig, check_callback, configured
from optcmp.engine.drivers import LoopRecord, choose_driver, record_fixed_steps
from optcmp.engine.host import host_activity
from optcmp.engine.monitor import Monitor
from optcmp.engine.runner import LiveRun, own_rule, run, skipped_result
from optcmp.engine.session import CompileInTimedWarning, Session, why_step

__all__ = ["EXECUTIONS", "Callback", "CompileInTimedWarning", "LiveRun", "LoopRecord", "Monitor",
           "RunConfig", "Session", "check_callback", "check_problem", "check_resolution",
           "check_rule", "choose_driver", "configured", "host_activity", "make_stopping",
           "numpy_cpu_warning", "own_rule", "record_fixed_steps", "run", "skipped_result",
           "type_name", "why_step"]
