"""The frameworks' own L-BFGS knobs: passed through, and never deciding `converged`."""

from __future__ import annotations

import warnings

import pytest
from conftest import lr_b, lr_c, needs_torch

import optcmp
from optcmp.optimizers import optimizer_info


def test_scipy_options_pass_ftol_gtol_maxcor_maxls():
    spec = optcmp.lbfgs(history_size=7, max_linesearch=9, ftol=1e-12, gtol=1e-8)
    opts = optimizer_info("lbfgs").native("scipy").options(spec.hyperparameters)
    assert opts == {"maxcor": 7, "maxls": 9, "ftol": 1e-12, "gtol": 1e-8}


def test_torch_options_pass_every_knob():
    spec = optcmp.lbfgs(history_size=100, max_linesearch=20, tolerance_grad=1e-7,
                        tolerance_change=1e-9, line_search_fn=None, max_iter_per_step=20)
    opts = optimizer_info("lbfgs").native("torch").options(spec.hyperparameters)
    assert opts == {"lr": 1.0, "max_iter": 20, "max_eval": 401, "tolerance_grad": 1e-7,
                    "tolerance_change": 1e-9, "history_size": 100, "line_search_fn": None}
    default = optimizer_info("lbfgs").native("torch").options(optcmp.lbfgs().hyperparameters)
    assert default["max_eval"] == 21 and default["line_search_fn"] == "strong_wolfe"


def test_bad_knobs_raise_naming_the_value():
    with pytest.raises(ValueError, match="line_search_fn must be 'strong_wolfe' or None"):
        optcmp.lbfgs(line_search_fn="backtracking")
    with pytest.raises(ValueError, match="gtol must be"):
        optcmp.lbfgs(gtol=-1.0)
    with pytest.raises(ValueError, match="max_iter_per_step must be a positive integer"):
        optcmp.lbfgs(max_iter_per_step=0)


def test_scipy_success_far_from_the_optimum_is_recorded_not_copied():
    """LR-C with scipy's own default tolerances: scipy says success at f = 0.915."""
    spec = optcmp.lbfgs(impl="scipy", ftol=2.220446049250313e-09, gtol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = optcmp.run(lr_c(), spec, backend="numpy", threads=1, tol=1e-10, max_iter=300,
                           max_time=None)
    assert r.status == "stalled" and not r.success and r.nit_to_target is None
    assert "RELATIVE REDUCTION OF F" in r.message and "scipy success=True" in r.message
    # where it stops follows the BLAS kernel's rounding on this ill-conditioned problem (cond
    # ~7e14): 7 iterations under OpenBLAS Haswell and SkylakeX, 12 under Sandybridge; the
    # objective it stops at, 0.915 (f* = 0.0103), is the same under each
    assert 5 <= r.nit <= 20 and f"{r.fun:.3f}" == "0.915"
    assert r.hyperparameters["gtol"] == 1e-5


@needs_torch
def test_torch_defaults_several_iterations_per_step_without_line_search():
    """torch's own defaults (20 iterations per step(), no line search) on LR-B, threads=1."""
    spec = optcmp.lbfgs(impl="native", history_size=100, tolerance_grad=1e-7,
                        tolerance_change=1e-9, line_search_fn=None, max_iter_per_step=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = optcmp.run(lr_b(), spec, backend="torch", threads=1, tol=1e-10, max_iter=200,
                           max_time=None)
    assert r.status == "converged"
    # the target is met after the first step(): torch's 20 iterations, 21 evaluations
    assert (r.nit_to_target, r.nfev_to_target) == (20, 21)
