"""One run: its settings (:class:`RunConfig`), the checks of its inputs, and the run itself.

:mod:`optcmp.run.config` holds :class:`RunConfig`, the one carrier of every setting of a run;
:mod:`optcmp.run.checks` the checks made before any work and the default stopping rule.
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

__all__ = ["EXECUTIONS", "Callback", "RunConfig", "check_callback", "check_problem",
           "check_resolution", "check_rule", "configured", "make_stopping", "numpy_cpu_warning",
           "type_name"]
