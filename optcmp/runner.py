"""One run (the old module path): the code lives in :mod:`optcmp.engine`.

:func:`run` and :func:`run_one` are in :mod:`optcmp.engine.runner`, :class:`RunConfig` in
:mod:`optcmp.engine.config`, the checks in :mod:`optcmp.engine.checks`, the session that sets an
adapter up in :mod:`optcmp.engine.session` and the loop drivers in :mod:`optcmp.engine.drivers`.
"""

from typing import Any

from optcmp.engine.checks import (
    check_problem,
    check_resolution,
    check_rule,
    make_stopping,
    numpy_cpu_warning,
    type_name,
)
from optcmp.engine.config import EXECUTIONS, Callback, RunConfig, check_callback
from optcmp.engine.drivers import BLOCK_FRACTION, BLOCK_SECONDS
from optcmp.engine.runner import own_rule, run, run_one, skipped_result
from optcmp.engine.session import CompileInTimedWarning, resolve_execution
from optcmp.ops.host import HostValueGrad
from optcmp.ops.host import host_value_and_grad as _objective_value_and_grad


def host_value_and_grad(problem: Any) -> HostValueGrad | None:
    """``(x, batch) -> (fun, grad)`` of ``problem.objective`` in numpy float64, by a framework's
    autodiff, or None when none is installed (:func:`optcmp.ops.host.host_value_and_grad`, which
    takes the objective itself).

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    callable or None
    """
    return _objective_value_and_grad(problem.objective)

__all__ = ["BLOCK_FRACTION", "BLOCK_SECONDS", "EXECUTIONS", "Callback", "CompileInTimedWarning",
           "RunConfig", "check_callback", "check_problem", "check_resolution", "check_rule",
           "host_value_and_grad", "make_stopping", "numpy_cpu_warning", "own_rule",
           "resolve_execution", "run", "run_one", "skipped_result", "type_name"]
