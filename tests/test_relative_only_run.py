"""A relative target met far from f* in absolute terms: ``run()`` alone warns, a comparison says
it under its table (one check behind both)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import optcmp
from optcmp.problems import from_function

#: 10 (x^2 - 1)^2 + 1.096 (x - 1)^2: f* = 0 at x = 1, a local minimum of 4.26 near x = -0.94.
CURVE, TILT, START = 10.0, 1.096, -255.8


def _tilted_double_well():
    return from_function(
        lambda ops, x, _: CURVE * (x[0] ** 2 - 1) ** 2 + TILT * (x[0] - 1) ** 2,
        np.array([START]), optimum=0.0, name="tilted_double_well",
        grad=lambda x, _: np.array([4 * CURVE * x[0] * (x[0] ** 2 - 1) + 2 * TILT * (x[0] - 1)]))


def test_run_alone_warns_when_a_relative_target_is_met_at_a_local_minimum():
    """From f0 = 4.28e10, L-BFGS stops in the local well at f = 4.26 (f* = 0): relative
    suboptimality 9.96e-11 meets tol = 1e-10, so the run is converged; run() says why that
    is not the optimum."""
    with pytest.warns(UserWarning, match="far from f") as rec:
        r = optcmp.run(_tilted_double_well(), "lbfgs", tol=1e-10, max_iter=1000)
    assert r.status == "converged" and r.f0 == pytest.approx(4.2814e10, rel=1e-4)
    assert r.fun == pytest.approx(4.26, abs=0.01) and float(r.x[0]) < 0  # the local well
    assert r.relative_suboptimality == pytest.approx(9.95e-11, rel=2e-3)
    (msg,) = [str(w.message) for w in rec if "far from f" in str(w.message)]
    assert msg.startswith("lbfgs on numpy converged: relative suboptimality 1e-10 but "
                          f"f - f* = {r.fun:.4g} (f0 = 4.28e+10)")
    assert rec[0].filename == __file__  # it points at the caller's line


def test_a_comparison_notes_it_under_the_table_and_does_not_warn():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        comp = optcmp.compare(_tilted_double_well(), ["lbfgs"], tol=1e-10, max_iter=1000,
                              progress=False)
    assert not [w for w in rec if "far from f" in str(w.message)]
    flat = " ".join(comp.table().split())
    assert "! lbfgs on numpy: relative suboptimality 1e-10 but f - f* = 4.26" in flat


def test_a_run_near_its_optimum_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = optcmp.run(optcmp.problems.LinearRegression(n_samples=200), "lbfgs", tol=1e-10)
    assert r.status == "converged"
