"""The run engine: how ``optcmp.run`` runs one run (its modules: docs/architecture.md, "The
picture")."""

from optcmp.engine.checks import (
    check_batch_size,
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
           "RunConfig", "Session", "check_batch_size", "check_callback", "check_problem",
           "check_resolution", "check_rule", "choose_driver", "configured", "host_activity",
           "make_stopping", "numpy_cpu_warning", "own_rule", "record_fixed_steps", "run",
           "skipped_result", "type_name", "why_step"]
