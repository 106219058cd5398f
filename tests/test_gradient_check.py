"""check_gradient and from_function's gradient check: a gradient right at x0 only is refused."""

import numpy as np
import pytest

import optcmp
from optcmp.problems import GradientError, check_gradient, from_function

B = 10.0


def rosenbrock(ops, x, data):
    return B * (x[1] - x[0] ** 2) ** 2 + (1.0 - x[0]) ** 2


def grad_right(x, data):
    return np.array([-4 * B * x[0] * (x[1] - x[0] ** 2) - 2 * (1.0 - x[0]),
                     2 * B * (x[1] - x[0] ** 2)])


def grad_wrong(x, data):  # -2b instead of -4b in the first term: zero at x0 = (-1, 1)
    return np.array([-2 * B * x[0] * (x[1] - x[0] ** 2) - 2 * (1.0 - x[0]),
                     2 * B * (x[1] - x[0] ** 2)])


def test_a_gradient_wrong_by_2x_in_one_term_passes_at_x0_and_fails_at_perturbed_points():
    # claimed: a check at x0 sees nothing (both gradients agree there); right: at three points
    # x0 + 0.1 N(0, I) (default_rng(0)) the relative errors are 0.066, 0.86 and 0.21
    p = from_function(rosenbrock, [-1.0, 1.0], grad=grad_wrong, check_grad=False)
    c = check_gradient(p)
    assert c.labels == ["x0", "perturbed point 1", "perturbed point 2", "perturbed point 3"]
    assert c.errors[0] < 1e-10
    np.testing.assert_allclose(c.errors[1:], [0.0661, 0.859, 0.211], rtol=5e-3)
    assert not c.ok and c.failed == [1, 2, 3]
    assert all(comps == [0] for comps in c.components[1:])  # only x[0]'s formula is wrong


def test_from_function_refuses_the_wrong_gradient_before_any_run_naming_the_point():
    with pytest.raises(GradientError, match=r"perturbed point 1 x = \[-0.987427, 0.98679\].*"
                                            r"x\[0\]: -3.74227 vs -3.50968") as exc:
        from_function(rosenbrock, [-1.0, 1.0], grad=grad_wrong, optimum=0.0)
    assert "it agrees at x0" in str(exc.value)
    assert isinstance(exc.value, ValueError) and exc.value.check.failed == [1, 2, 3]


@pytest.mark.parametrize("reference", ["central", "complex_step", "autodiff"])
def test_the_right_gradient_passes_against_every_reference(reference):
    if reference == "autodiff" and optcmp.problems.function.host_value_and_grad(
            rosenbrock) is None:
        pytest.skip("no framework installed")
    p = from_function(rosenbrock, [-1.0, 1.0], grad=grad_right)
    c = check_gradient(p, 5, reference=reference)
    assert c.ok and len(c.errors) == 6 and max(c.errors) < 1e-11


def test_given_points_and_named_parameters():
    def f(ops, x, data):
        return ops.sum(x["w"] ** 2) + 3.0 * x["b"] ** 2

    def g(x, data):  # wrong in b: 3 b instead of 6 b
        return {"w": 2 * x["w"], "b": 3.0 * x["b"]}

    p = from_function(f, {"w": np.ones(3), "b": 1.0}, grad=g, check_grad=False)
    c = check_gradient(p, [np.ones(4), np.zeros(4) + 2.0])
    assert c.labels == ["point 0", "point 1"] and c.failed == [0, 1]
    assert "b: 3 vs 6" in c.message()
    with pytest.raises(ValueError, match="length 4"):
        check_gradient(p, [np.ones(3)])
    with pytest.raises(ValueError, match="reference must be one of"):
        check_gradient(p, reference="forward")
    with pytest.raises(ValueError, match="check_grad must be"):
        from_function(f, {"w": np.ones(3), "b": 1.0}, grad=g, check_grad="yes")


def test_with_the_right_gradient_lbfgs_reaches_1e_10_in_25_evaluations_on_every_backend():
    # scipy's L-BFGS-B with the right gradient stops after 21 iterations and 25 evaluations
    p = from_function(rosenbrock, [-1.0, 1.0], grad=grad_right, optimum=0.0)
    for backend in optcmp.available_backends():
        r = optcmp.run(p, optcmp.lbfgs(impl="scipy"),
                           optcmp.RunConfig(backend=backend, tol=1e-10, max_evals=25))
        assert r.status == "converged" and r.fun <= 1e-10 and r.nfev <= 25, (backend, r)


def test_a_gradient_right_at_x0_only_splits_numpy_from_autodiff_from_step_two():
    # L-BFGS with the wrong analytic gradient (numpy) vs torch's autodiff: step 1 agrees
    # because the gradient is right at x0, every later step differs
    pytest.importorskip("torch")
    p = from_function(rosenbrock, [-1.0, 1.0], grad=grad_wrong, optimum=0.0, check_grad=False)
    res = optcmp.check_equivalence(p, optcmp.lbfgs(impl="scipy"), backends=["numpy", "torch"],
                                   steps=5)
    assert res.verdict == "different"
    assert res.fun_rel_diff[1] <= res.tolerance and res.x_rel_diff[1] <= res.tolerance
    assert all(d > 1e-3 for d in res.fun_rel_diff[2:])


def test_no_perturbed_point_is_refused():
    """``points=0`` was accepted and checked only x0, where a wrong term can vanish (here the
    gradient 0 of x^3 at x0 = 0): it is refused, naming what is allowed."""
    p = from_function(lambda ops, x, d: ops.sum(x ** 3), np.zeros(3), grad=lambda x, d: 0 * x,
                      check_grad=False)
    with pytest.raises(ValueError, match=r"points must be >= 1 perturbed points .* got 0"):
        check_gradient(p, points=0)
    assert check_gradient(p, points=1).failed == [1]
