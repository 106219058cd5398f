"""from_function: a user's objective written once, data-free problems, estimated and given optima."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp.problems import Optimum, from_function
from optcmp.problems.base import count_rows
from tests.conftest import HAS_JAX, HAS_TF, HAS_TORCH, needs_tf, needs_torch

FRAMEWORKS = [b for b, ok in (("torch", HAS_TORCH), ("tensorflow", HAS_TF)) if ok]


def rosen(ops, x, data):
    return 100.0 * (x[1] - x[0] ** 2) ** 2 + (1.0 - x[0]) ** 2


def rosen_grad(x, data):
    return np.array([-400.0 * x[0] * (x[1] - x[0] ** 2) - 2.0 * (1.0 - x[0]),
                     200.0 * (x[1] - x[0] ** 2)])


def test_rosenbrock_data_free_with_grad_runs_on_numpy():
    p = from_function(rosen, [-1.2, 1.0], grad=rosen_grad, optimum=0.0, name="rosenbrock")
    assert p.n_samples == 0 and p.train_data == {}
    assert p.fun64(p.init_params()) == pytest.approx(24.2, abs=1e-12)
    r = optcmp.run(p, optcmp.lbfgs(impl="scipy"), tol=1e-10, max_iter=500, threads=1)
    assert r.status == "converged"
    assert r.fun <= 1e-10 * 24.2


def test_numpy_without_grad_is_skipped_with_what_to_add():
    p = from_function(rosen, [-1.2, 1.0], optimum=0.0)
    r = optcmp.run(p, optcmp.gd(learning_rate=1e-3), max_iter=5)
    assert r.status == "skipped"
    assert "grad=" in r.message and "from_function" in r.message
    assert r.nit == 0 and r.f0 == pytest.approx(24.2)


@pytest.mark.skipif(not FRAMEWORKS, reason="no framework installed")
def test_frameworks_differentiate_the_objective_and_agree():
    p = from_function(rosen, [-1.2, 1.0], optimum=0.0, name="rosenbrock")
    for b in FRAMEWORKS:
        r = optcmp.run(p, optcmp.gd(learning_rate=1e-3), backend=b, max_iter=3)
        q = from_function(rosen, [-1.2, 1.0], grad=rosen_grad, optimum=0.0)
        ref = optcmp.run(q, optcmp.gd(learning_rate=1e-3), max_iter=3, threads=1)
        np.testing.assert_allclose(r.x, ref.x, rtol=1e-13)
    # the host-side gradient (off the clock) is the framework's exact autodiff
    f, g = p.value_and_grad(np.array([-1.2, 1.0]), {})
    np.testing.assert_allclose(g, rosen_grad(np.array([-1.2, 1.0]), {}), rtol=1e-14)


def _logreg_data(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.standard_normal(n) > 0).astype(np.float64)
    return {"X": X, "y": y}


def logloss(ops, p, data):
    z = ops.matmul(data["X"], p["w"]) + p["b"]
    return ops.mean(ops.softplus(z) - data["y"] * z) + 0.5e-2 * ops.sum(p["w"] * p["w"])


def test_named_parameters_and_their_gradient():
    data = _logreg_data()

    def grad(p, data):
        z = data["X"] @ p["w"] + p["b"]
        r = (1.0 / (1.0 + np.exp(-z)) - data["y"]) / z.size
        return {"w": data["X"].T @ r + 1e-2 * p["w"], "b": np.sum(r)}

    p = from_function(logloss, {"w": np.zeros(3), "b": 0.0}, data, grad=grad, optimum="estimate")
    assert p.layout.names == ("w", "b") and p.layout.shapes == ((3,), ())
    assert p.n_samples == 200 and p.n_params == 4
    opt = p.optimum()
    assert opt.kind == "estimated" and "L-BFGS-B" in opt.method and "gtol=1e-10" in opt.method
    f, g = p.value_and_grad(opt.x, p.train_data)
    assert np.max(np.abs(g)) < 1e-8
    assert f == pytest.approx(opt.fun, abs=1e-15)


def test_estimated_optimum_is_flagged_in_the_table():
    p = from_function(rosen, [-1.2, 1.0], grad=rosen_grad, optimum="estimate")
    comp = optcmp.compare(p, [optcmp.lbfgs(impl="scipy")], progress=False, tol=1e-8,
                          max_iter=200, threads=1)
    assert comp.optimum["kind"] == "estimated"
    text = comp.table()
    assert "rel.subopt*" in text and "is an estimate" in text
    assert "lstsq" not in text and "direct solve" not in text


def test_given_optimum_is_not_called_a_direct_solve():
    p = from_function(rosen, [-1.2, 1.0], grad=rosen_grad, optimum=0.0)
    comp = optcmp.compare(p, [optcmp.lbfgs(impl="scipy")], progress=False, max_iter=200)
    text = comp.table()
    assert "lstsq" not in text and "direct solve" not in text
    assert "given by the user" in text
    # a user's Optimum with a timed closed form keeps its own method in the floor row
    own = Optimum(fun=0.0, x=np.ones(2), method="closed form", time=1e-6)
    comp2 = optcmp.compare(from_function(rosen, [-1.2, 1.0], grad=rosen_grad, optimum=own),
                           [optcmp.lbfgs(impl="scipy")], progress=False, max_iter=200)
    floor = [ln for ln in comp2.table().splitlines() if "floor" in ln]
    assert len(floor) == 1 and "closed form" in floor[0] and "lstsq" not in floor[0]


def test_linear_regression_floor_row_still_says_lstsq():
    p = optcmp.problems.LinearRegression(n_samples=500)
    comp = optcmp.compare(p, [optcmp.lbfgs(impl="scipy")], progress=False, max_iter=100)
    floor = [ln for ln in comp.table().splitlines() if "floor" in ln]
    assert len(floor) == 1 and "lstsq" in floor[0]


def test_stochastic_optimizer_on_a_data_free_problem_is_skipped():
    p = from_function(rosen, [-1.2, 1.0], grad=rosen_grad, optimum=0.0)
    r = optcmp.run(p, optcmp.sgd(learning_rate=1e-3), max_iter=5)
    assert r.status == "skipped" and "no training data" in r.message


def test_without_optimum_or_target_the_error_says_what_to_do():
    p = from_function(rosen, [-1.2, 1.0], grad=rosen_grad)
    assert p.default_target() is None
    with pytest.raises(ValueError, match="optimum='estimate'"):
        optcmp.make_stopping(p)
    q = from_function(rosen, [-1.2, 1.0], grad=rosen_grad, default_target=optcmp.LossTarget(1e-8))
    r = optcmp.run(q, optcmp.lbfgs(impl="scipy"), max_iter=200)
    assert r.status == "converged" and r.fun <= 1e-8


def test_the_base_class_declares_default_target():
    lr = optcmp.problems.LinearRegression(n_samples=10)
    assert lr.default_target(1e-6) is None
    assert optcmp.problems.FizzBuzzMLP().default_target() is not None


@pytest.mark.parametrize("data, match", [
    ({"a": np.zeros(3), "b": np.zeros(4)}, "different numbers of rows"),
    ({"a": np.float64(1.0)}, "0-d"),
    ({"a": np.array([1.0, np.nan])}, "NaN"),
    ({"a": np.array(["x", "y"])}, "numeric"),
])
def test_bad_data_is_refused_naming_it(data, match):
    with pytest.raises(ValueError, match=match):
        from_function(rosen, [0.0, 0.0], data)


def test_count_rows_of_no_data_is_zero():
    assert count_rows({}) == 0
    assert count_rows({"a": np.zeros((5, 2)), "b": np.zeros(5)}) == 5


@pytest.mark.parametrize("kwargs, err", [
    ({"x0": []}, ValueError), ({"x0": [[1.0]]}, ValueError), ({"x0": [np.nan]}, ValueError),
    ({"x0": [1.0], "optimum": "exact"}, ValueError), ({"x0": [1.0], "optimum": np.inf}, ValueError),
    ({"x0": [1.0], "grad": 3}, TypeError), ({"x0": [1.0], "data": [1, 2]}, TypeError),
    ({"x0": [1.0], "lipschitz": -1.0}, ValueError), ({"x0": {}}, ValueError),
])
def test_bad_arguments(kwargs, err):
    with pytest.raises(err):
        from_function(rosen, **kwargs)


def test_wrong_gradient_shape_is_named():
    with pytest.raises(ValueError, match="grad returned shape"):  # by the gradient check
        from_function(rosen, [-1.2, 1.0], grad=lambda x, d: np.zeros(3))
    p = from_function(rosen, [-1.2, 1.0], grad=lambda x, d: np.zeros(3), check_grad=False)
    with pytest.raises(ValueError, match="grad returned shape"):
        p.value_and_grad(np.zeros(2), {})


@needs_torch
@needs_tf
def test_user_logistic_objective_is_equivalent_across_backends():
    p = from_function(logloss, {"w": np.zeros(3), "b": 0.0}, _logreg_data(), optimum="estimate")
    res = optcmp.check_equivalence(p, optcmp.gd(learning_rate=0.5), backends=["torch",
                                                                             "tensorflow"],
                                   steps=5)
    assert res.verdict == "equivalent", str(res)


@needs_torch
@needs_tf
@pytest.mark.skipif(not (HAS_TORCH and HAS_TF and HAS_JAX), reason="needs torch, TensorFlow and JAX")
def test_the_ten_line_example_in_the_docs_is_equivalent_on_four_backends(capsys):
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "problems.md").read_text()
    block = re.search(r"<!-- test: own-problem -->\n```python\n(.*?)```", doc, re.S).group(1)
    body = [ln for ln in block.splitlines()
            if ln.strip() and not ln.startswith(("import ", "rng =", "X =", "print("))]
    assert len(body) <= 10, body  # the objective, its numpy gradient and the problem
    exec(compile(block, "docs/problems.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "equivalent"


def test_no_numpy_path_uses_another_frameworks_gradient():
    """check_equivalence and the numpy backend itself refuse a problem without a numpy grad."""
    from optcmp.frameworks import get_backend

    p = from_function(rosen, [-1.2, 1.0], optimum=0.0)
    res = optcmp.check_equivalence(p, optcmp.gd(learning_rate=1e-3),
                                   backends=["numpy", *FRAMEWORKS], steps=2)
    assert "numpy" not in res.backends and "grad=" in res.skipped["numpy"]
    with pytest.raises(ValueError, match="grad="):
        get_backend("numpy").value_and_grad(p)


def test_a_given_optimum_above_the_start_fails_the_run_instead_of_converging_at_once():
    # optimum=30 with f(x0) = 24.2 used to give status "converged" after 0 iterations
    p = from_function(rosen, [-1.2, 1.0], grad=rosen_grad, optimum=30.0, name="rosenbrock")
    comp = optcmp.compare(p, [optcmp.gd(learning_rate=1e-4)], backends="numpy", max_iter=5,
                          progress=False, threads=1)
    (r,) = comp.runs
    assert r.status == "failed" and r.nit == 0 and r.time_to_target is None
    assert "f* = 30 (given by the user) is above the objective at the initial point, " \
           "f(x0) = 24.2" in r.message
    # the start exactly at a given optimum is a true minimum: met at once, as before
    at_min = from_function(rosen, [1.0, 1.0], grad=rosen_grad, optimum=0.0)
    assert optcmp.run(at_min, optcmp.gd(learning_rate=1e-4), max_iter=5,
                          threads=1).status == "converged"


@pytest.mark.parametrize("backend", ["numpy"] + FRAMEWORKS)
def test_an_objective_returning_a_vector_is_named_on_every_backend(backend):
    # numpy used to say "only 0-dimensional arrays can be converted to Python scalars", torch
    # "grad can be implicitly created only for scalar outputs"
    with pytest.raises(ValueError, match="objective of problem 'squares' must return a scalar"):
        from_function(lambda ops, x, data: x * x, np.ones(3), grad=lambda x, data: 2 * x,
                      optimum=0.0, name="squares")  # the gradient check evaluates it at once
    p = from_function(lambda ops, x, data: x * x, np.ones(3), grad=lambda x, data: 2 * x,
                      optimum=0.0, name="squares", check_grad=False)
    (r,) = optcmp.compare(p, [optcmp.gd(learning_rate=0.1)], backends=backend, max_iter=3,
                          threads=1, progress=False).runs
    assert r.status == "failed"
    assert "objective of problem 'squares' must return a scalar (the loss), got an array of " \
           "shape (3,)" in r.message


@pytest.mark.parametrize("x0, match", [
    # an empty named array used to give a problem with n_params = 0; the others raised numpy's
    # "could not convert string to float" / "float() argument must be ..." without naming x0,
    # and a complex x0 lost its imaginary part with a ComplexWarning only
    ({"w": np.ones(0), "b": 0.0}, r"x0\['w'\] is an empty array"),
    ({"w": {"nested": 1.0}}, r"x0\['w'\] must be real numbers .* got dict"),
    ({"w": "abc"}, r"x0\['w'\] must be real numbers .* got str 'abc'"),
    ("abc", r"x0 must be real numbers .* got str 'abc'"),
    ([1.0, [2.0, 3.0]], r"x0 must be real numbers .* got list"),
    (np.ones(2) * (1 + 1j), r"x0 must be real numbers .* got ndarray"),
])
def test_bad_x0_is_named(x0, match):
    with pytest.raises(ValueError, match=match):
        from_function(rosen, x0)


def test_an_estimate_that_did_not_converge_warns(monkeypatch):
    # an unbounded objective (sum(x)) used to give f* = -3.3e14 after the solve ran out of
    # evaluations, silently taken as the optimum; here a 3-iteration cap stands in for that
    import optcmp.problems.function as fn

    monkeypatch.setitem(fn.ESTIMATE_OPTIONS, "maxiter", 3)
    p = from_function(rosen, [-1.2, 1.0], grad=rosen_grad, optimum="estimate", name="rosen3")
    with pytest.warns(UserWarning, match=r"reference solve for the optimum of problem 'rosen3' "
                                         r"did not converge .* after 3 iterations\): f\* is "
                                         "unreliable"):
        opt = p.optimum()
    assert opt.kind == "estimated" and opt.fun > 1.0  # far from the true minimum 0


def test_integer_data_are_values_on_every_backend():
    # integer data used to fail on torch ("addmv input tensors must have the same dtype") and
    # TensorFlow, and promoted numpy float32 runs to float64
    X = np.array([[1, 2], [3, 4], [5, 7], [2, 0]])
    y = np.array([1, 0, 2, 1])

    def loss(ops, w, d):
        r = ops.matmul(d["X"], w) - d["y"]
        return ops.mean(r * r)

    p = from_function(loss, np.zeros(2), {"X": X, "y": y}, optimum=0.0,
                      grad=lambda w, d: 2 * d["X"].T @ (d["X"] @ w - d["y"]) / 4)
    assert p.train_data["X"].dtype == np.float64 and p.fun64(np.zeros(2)) == 1.5
    funs = {}
    for b in ["numpy"] + FRAMEWORKS:
        r = optcmp.run(p, optcmp.gd(learning_rate=0.01), backend=b, max_iter=3, threads=1,
                           stopping=optcmp.make_stopping(p, max_iter=3, stall=False))
        assert r.status == "max_iter", r.message
        funs[b] = r.fun
    assert all(f == pytest.approx(funs["numpy"], rel=1e-12) for f in funs.values())


@pytest.mark.parametrize("objective, grad, message", [
    (lambda x: x.sum(), None, r"objective must take \(ops, x, data\), got <lambda>\(x\)"),
    (lambda ops, x, d: ops.sum(x ** 2), lambda x: 2 * x,
     r"grad must take \(x, data\), got <lambda>\(x\)"),
])
def test_a_function_of_the_wrong_signature_is_refused_when_built(objective, grad, message):
    """An objective ``f(x)`` was accepted and failed later, in a run, with a bare TypeError:
    it is refused when the problem is built, naming the arguments it must take."""
    with pytest.raises(TypeError, match=message):
        from_function(objective, np.ones(2), grad=grad)
