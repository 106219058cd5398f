"""Targets that a huge f0 cannot fool, and a library's own "success" that never counts."""

import numpy as np
import pytest

import optcmp
from optcmp.problems import from_function
from optcmp.stopping.base import State
from optcmp.stopping.targets import CombinedTarget, RelativeSuboptimality, relative_only_note


def test_a_relative_target_met_far_from_the_optimum_is_refused_by_a_combined_target():
    # from f0 = 4.3e10, a local minimum at 3.974 (f* = 0) has relative suboptimality 9.2e-11
    s = State(nit=10, fun=3.974, f0=4.3e10, fstar=0.0, grad_norm=1e-9)
    assert (3.974 - 0.0) / 4.3e10 == pytest.approx(9.24e-11, rel=1e-3)
    assert RelativeSuboptimality(1e-10).check(s)
    both = CombinedTarget(relative=1e-10, absolute=1e-6)
    assert not both.check(s) and both.needs_optimum
    assert both.unmet(s) == ["AbsoluteSuboptimality(tol=1e-06)"]
    assert CombinedTarget(relative=1e-10, grad_norm=1e-8).check(s)  # stationary: both hold
    assert CombinedTarget(relative=1e-10, absolute=1e-6).check(
        State(fun=np.float32(1e-7), f0=4.3e10, fstar=0.0))
    note = relative_only_note(3.974, 4.3e10, 0.0)
    assert "relative suboptimality 9.2e-11 but f - f* = 3.974" in note
    assert relative_only_note(1e-9, 4.3e10, 0.0) == ""
    with pytest.raises(ValueError, match="at least one"):
        CombinedTarget()


def test_scipys_success_on_a_wrong_gradient_is_not_converged():
    # scipy L-BFGS-B with its default ftol stops with "success" at f = 0.0015464 (f0 = 4,
    # f* = 0): relative suboptimality 3.9e-4, not converged for tol 1e-6
    def f(ops, x, data):
        return 10.0 * (x[1] - x[0] ** 2) ** 2 + (1.0 - x[0]) ** 2

    def g(x, data):
        return np.array([-20.0 * x[0] * (x[1] - x[0] ** 2) - 2 * (1.0 - x[0]),
                         20.0 * (x[1] - x[0] ** 2)])

    p = from_function(f, [-1.0, 1.0], grad=g, optimum=0.0, check_grad=False)
    r = optcmp.run(p, optcmp.lbfgs(impl="scipy", ftol=2.220446049250313e-09, gtol=1e-5),
                       optcmp.RunConfig(backend="numpy", tol=1e-6, max_iter=500))
    assert r.status != "converged" and not r.success
    assert r.fun == pytest.approx(0.0015464, rel=1e-3)
    assert r.relative_suboptimality == pytest.approx(3.9e-4, rel=2e-2)


@pytest.mark.parametrize("kwargs, message", [
    ({"relative": float("nan")}, "CombinedTarget: relative must be a finite number > 0, got nan"),
    ({"relative": 2.0}, "CombinedTarget: relative must be a relative suboptimality in (0, 1)"),
    ({"absolute": -1.0}, "CombinedTarget: absolute must be a finite number > 0, got -1.0"),
    ({"loss": float("inf")}, "CombinedTarget: loss must be a finite number, got inf"),
])
def test_a_bad_tolerance_is_refused_naming_the_argument_written(kwargs, message):
    """``CombinedTarget(relative=nan)`` said "tol must be a finite number", naming a parameter
    the caller did not write: the message names ``relative``."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        CombinedTarget(**kwargs)
