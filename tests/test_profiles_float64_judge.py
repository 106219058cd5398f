"""Profiles, ECDFs and aRT read the float64 judge's values, never a float32 run's own trace.

A regression whose noise (sd 1000, f* = 9.93e5) dwarfs what the features explain
(f0 - f* = 1.26e4): float32 rounds f near 1e6 to about 0.06, 5e-6 of f0 - f*, so a float32
run's trace cannot tell a relative suboptimality of 1e-6 from one of 1e-5. Diagonal Newton in
float32 reads 1e-6 (even below f*) in its own trace, at iteration 868 on numpy and torch here,
while the float64 value of every iterate it takes stays above 4e-6. Which iteration the float32
trace first reads it depends on its rounding (the BLAS kernel); that it reads it, and the
float64 floor, do not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import optcmp
from optcmp.analysis import stats
from optcmp.analysis.stats.profiles import first_hit, judged_trace
from optcmp.problems import LinearRegression

TOL = 1e-6


@pytest.fixture(scope="module")
def runs():
    problem = LinearRegression(n_samples=10_000, noise=1000.0)
    iterates: list[np.ndarray] = []
    f32 = optcmp.run(problem, "diag_newton", dtype="float32", tol=TOL, max_iter=1500,
                     threads=1, callback=lambda ir: iterates.append(np.array(ir.x, float)))
    f64 = optcmp.run(problem, "diag_newton", tol=TOL, max_iter=1500, threads=1)
    gap0 = f32.f0 - f32.fstar
    floor = min((problem.fun64(x) - f32.fstar) / gap0 for x in iterates)
    return f32, f64, floor


def test_the_float32_trace_reads_a_target_its_float64_values_never_reach(runs):
    f32, f64, floor = runs
    assert f32.status != "converged" and not f32.success  # the float64 check refused it
    own = f32.trace.relative_suboptimality(f32.f0, f32.fstar)
    assert np.nanmin(own) <= TOL  # the float32 trace claims the target ...
    assert floor > 4 * TOL  # ... which no iterate reaches in float64 (4.4e-6 here)
    assert f64.status == "converged" and f64.relative_suboptimality <= TOL


def test_profiles_count_the_float32_run_unsolved_at_that_tolerance(runs):
    f32, f64, _ = runs
    both = [f32, f64]
    assert first_hit(f32, TOL, "nit") == math.inf
    assert first_hit(f64, TOL, "nit") == f64.nit_to_target
    # read from the float32 trace, the float32 run was the best solver (868 against 1224)
    perf = stats.performance_profile(both, tol=TOL, metric="nit", warn=False)
    assert perf.at(1.0) == {"diag_newton / float32": 0.0, "diag_newton / float64": 1.0}
    data = stats.data_profile(both, tol=TOL, metric="nit", warn=False)
    assert sorted(data.values[0].tolist()) == [float(f64.nit_to_target), math.inf]
    ecdf = stats.runtime_ecdf(both, tols=(1e-5, TOL), metric="nit", warn=False)
    col = ecdf.values[:, ecdf.solvers.index("diag_newton / float32")]
    # 1e-5: met by the float64 value of the iterate the run returned, at its end; 1e-6: never
    assert col.tolist() == [float(f32.nit), math.inf]
    assert stats.average_runtime([f32], "nit") == math.inf


def test_the_judged_trace_of_a_float32_run_is_its_start_and_its_float64_end(runs):
    f32, f64, _ = runs
    tr = judged_trace(f32)
    assert tr.iteration.tolist() == [0, f32.nit] and tr.fun.tolist() == [f32.f0, f32.fun]
    assert judged_trace(f64) is f64.trace
    lows = stats.best_found([f32])
    assert min(lows.values()) == f32.fun  # not a float32 value below f*
