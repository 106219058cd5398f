"""One run (the old module path): the code lives in :mod:`optcmp.run`.

:func:`run` and :func:`run_one` are in :mod:`optcmp.run.runner`, :class:`RunConfig` in
:mod:`optcmp.run.config`, the checks in :mod:`optcmp.run.checks`, the session that sets an
adapter up in :mod:`optcmp.run.session` and the loop drivers in :mod:`optcmp.run.drivers`.
"""

from optcmp.run.checks import (
    check_problem,
    check_resolution,
    check_rule,
    make_stopping,
    numpy_cpu_warning,
    type_name,
)
from optcmp.run.config import EXECUTIONS, Callback, RunConfig, check_callback
from optcmp.run.drivers import BLOCK_FRACTION, BLOCK_SECONDS
from optcmp.run.runner import own_rule, run, run_one, skipped_result
from optcmp.run.session import CompileInTimedWarning, resolve_execution

__all__ = ["BLOCK_FRACTION", "BLOCK_SECONDS", "EXECUTIONS", "Callback", "CompileInTimedWarning",
           "RunConfig", "check_callback", "check_problem", "check_resolution", "check_rule",
           "make_stopping", "numpy_cpu_warning", "own_rule", "resolve_execution", "run",
           "run_one", "skipped_result", "type_name"]
