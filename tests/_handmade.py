"""Hand-made RunResults with known statistics (shared by test_stats, test_plot, test_report)."""

from __future__ import annotations

import numpy as np

from optcmp.comparison import Comparison
from optcmp.results import RunResult, Trace


def make_run(label: str, ttt: float | None, *, repeat: int = 0, problem: str = "P",
             backend: str = "numpy", device: str = "cpu", dtype: str = "float64",
             status: str | None = None, time: float | None = None, nit: int = 100,
             nit_to_target: int | None = None, njev_to_target: int | None = None,
             spec: dict | None = None, fstar: float | None = 0.0, trace: Trace | None = None,
             message: str = "", n_params: int = 4) -> RunResult:
    """A run that reached the target at ``ttt`` seconds (``None``: it did not)."""
    ok = ttt is not None
    if trace is None:  # f0 = 1, f* = 0, geometric decay reaching 1e-6 at ttt
        m = 13
        t_end = ttt if ok else (time or 1.0)
        fun = np.logspace(0, -6 if ok else -3, m)
        trace = Trace(iteration=np.arange(m, dtype=np.int64), time=np.linspace(0, t_end, m),
                      fun=fun, grad_norm=np.sqrt(fun), nfev=np.arange(m, dtype=np.int64),
                      njev=np.arange(m, dtype=np.int64) * 2)
    return RunResult(
        problem=problem, optimizer=label.split("(")[0], label=label, backend=backend,
        device=device, dtype=dtype, seed=repeat, repeat=repeat,
        success=ok, status=status or ("converged" if ok else "max_iter"),
        message=message or ("target reached" if ok else "budget exhausted: MaxIter(n=100)"),
        nit=nit, nfev=nit, njev=nit, time=time if time is not None else (ttt if ok else 1.0),
        time_to_target=ttt, nit_to_target=(nit_to_target if nit_to_target is not None else
                                           (nit if ok else None)),
        nfev_to_target=nit if ok else None,
        njev_to_target=(njev_to_target if njev_to_target is not None else
                        (nit if ok else None)),
        f0=1.0, fstar=fstar, target="RelativeSuboptimality(tol=1e-06)", n_params=n_params,
        problem_spec=spec if spec is not None else {"problem": problem, "seed": 0},
        trace=trace, fun=float(trace.fun[-1]) if len(trace) else float("nan"),
    )


def table_runs() -> list[RunResult]:
    """Solver A: 1, 4, 3 s; solver B: 2, 2, never (on repetitions 0, 1, 2)."""
    a = [make_run("A", t, repeat=r, njev_to_target=j)
         for r, (t, j) in enumerate([(1.0, 10), (4.0, 40), (3.0, 30)])]
    b = [make_run("B", t, repeat=r, njev_to_target=j, time=5.0)
         for r, (t, j) in enumerate([(2.0, 20), (2.0, 20), (None, None)])]
    return a + b


def comparison(runs: list[RunResult] | None = None) -> Comparison:
    runs = table_runs() if runs is None else runs
    return Comparison(runs, problem={"problem": "P", "seed": 0},
                      settings={"target": "RelativeSuboptimality(tol=1e-06)",
                                "stopping": {"rule": "AnyOf", "rules": [
                                    {"rule": "RelativeSuboptimality", "tol": 1e-6},
                                    {"rule": "MaxIter", "n": 100}]}},
                      environment={"python": "3.x", "numpy": "2", "scipy": "1",
                                   "timer_resolution": 1e-9})
