"""A problem's gradient written once against ops, used by the framework backends.

No test reads a clock. Values are checked against the framework's autodiff and numpy's analytic
gradient; trajectories with ``gradient="auto"`` (analytic) and ``"autodiff"`` agree to 1e-10 in
float64 on every backend (threads=1).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import HAS_TF, HAS_TORCH

import optcmp
from optcmp.engine.config import RunConfig
from optcmp.frameworks import get_backend
from optcmp.frameworks.base import declares_gradient_ops, gradient_kind
from optcmp.problems import FizzBuzzMLP, LinearRegression, LogisticRegression

FRAMEWORKS = (["torch"] if HAS_TORCH else []) + (["tensorflow"] if HAS_TF else [])
needs_fw = pytest.mark.skipif(not FRAMEWORKS, reason="neither torch nor tensorflow installed")


@pytest.fixture(scope="module")
def linreg():
    return LinearRegression(n_samples=500, n_features=4)


def _two_targets():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    Y = X @ rng.normal(size=(3, 2)) + 0.1 * rng.normal(size=(40, 2))
    return LinearRegression.from_arrays(X, Y, fit_intercept=True)


@pytest.mark.parametrize("name", FRAMEWORKS)
@pytest.mark.parametrize("multi", [False, True])
def test_gradient_ops_equals_autodiff_and_numpy(name, multi, linreg):
    p = _two_targets() if multi else linreg
    be = get_backend(name)
    x = np.random.default_rng(1).normal(size=p.n_params)
    rows = np.arange(3, 35)  # a minibatch too
    for batch in (p.train_data, {k: v[rows] for k, v in p.train_data.items()}):
        f_np, g_np = p.value_and_grad(x, batch)
        placed = be.place(batch)
        fa, ga = be.make_value_and_grad(p, "analytic")(be.asarray(x), placed)
        fd, gd = be.make_value_and_grad(p, "autodiff")(be.asarray(x), placed)
        for f, g in ((fa, ga), (fd, gd)):
            assert float(be.to_numpy(f)) == pytest.approx(f_np, rel=1e-13)
            np.testing.assert_allclose(be.to_numpy(g), g_np, rtol=1e-11, atol=1e-13)
        _, g_only = p.gradient_ops(be.ops, be.asarray(x), placed, value=False)
        np.testing.assert_allclose(be.to_numpy(g_only), be.to_numpy(ga), rtol=1e-14, atol=1e-14)


def test_which_gradient_is_declared(linreg):
    assert declares_gradient_ops(linreg)
    assert declares_gradient_ops(FizzBuzzMLP())
    assert not declares_gradient_ops(LogisticRegression(n_samples=50))

    class OtherObjective(LinearRegression):  # the inherited gradient is not this one's
        def objective(self, ops, x, batch):
            r = ops.matmul(batch["A"], x) - batch["y"]
            return ops.sum(r * r)

    assert not declares_gradient_ops(OtherObjective.from_arrays(np.eye(3), np.ones(3)))
    np_be = get_backend("numpy")
    assert gradient_kind(np_be, LogisticRegression(n_samples=50),
                         "autodiff") == "analytic"  # numpy has no tape
    with pytest.raises(ValueError, match="gradient must be one of"):
        gradient_kind(np_be, linreg, "symbolic")
    with pytest.raises(ValueError, match="gradient must be one of"):
        RunConfig(gradient="tape")


@needs_fw
def test_analytic_without_a_declared_gradient_is_refused():
    be = get_backend(FRAMEWORKS[0])
    with pytest.raises(ValueError, match="declares no gradient written against ops"):
        gradient_kind(be, LogisticRegression(n_samples=50), "analytic")


def _run(p, spec, backend, gradient, execution="auto"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optcmp.run(p, spec, backend=backend, stopping=optcmp.MaxIter(40), threads=1,
                              seed=2, gradient=gradient, execution=execution)


@pytest.mark.parametrize("name", FRAMEWORKS)
@pytest.mark.parametrize("impl", ["gd", "native", "reference"])
def test_analytic_and_autodiff_runs_agree_and_are_recorded(name, impl, linreg):
    lr = 0.5 / linreg.lipschitz()
    spec = (optcmp.gd("auto") if impl == "gd" else
            optcmp.sgd(lr, batch_size=64, impl=impl))
    ref = _run(linreg, spec if impl == "gd" else optcmp.sgd(lr, batch_size=64), "numpy", "auto")
    assert ref.conditions.gradient == "analytic"
    auto = _run(linreg, spec, name, "auto")
    tape = _run(linreg, spec, name, "autodiff")
    assert (auto.conditions.gradient, tape.conditions.gradient) == ("analytic", "autodiff")
    assert auto.nit == tape.nit == ref.nit == 40
    for r in (auto, tape):
        np.testing.assert_allclose(r.x, ref.x, rtol=1e-10, atol=1e-12)
        assert r.fun == pytest.approx(ref.fun, rel=1e-10)


@needs_fw
def test_fizzbuzz_runs_its_declared_gradient_and_autodiff_alike():
    p, spec = FizzBuzzMLP(), optcmp.sgd(0.05, batch_size=64)
    auto, tape = (_run(p, spec, FRAMEWORKS[0], g) for g in ("auto", "autodiff"))
    assert (auto.conditions.gradient, tape.conditions.gradient) == ("analytic", "autodiff")
    assert auto.nit == tape.nit == 40
    np.testing.assert_allclose(auto.x, tape.x, rtol=0, atol=1e-10 * np.max(np.abs(tape.x)))
    other = _run(LogisticRegression(n_samples=200), spec, FRAMEWORKS[0], "auto")
    assert other.conditions.gradient == "autodiff"  # no gradient written against ops


@needs_fw
def test_cli_gradient_flag_is_recorded(tmp_path):
    from optcmp import cli
    from optcmp.comparison import Comparison

    out = tmp_path / "r.json"
    backend = FRAMEWORKS[0]
    rc = cli.main(["run", "--rows", "500", "--backends", f"numpy,{backend}", "--optimizers",
                   "gd", "--gradient", "autodiff", "--max-iter", "20", "--max-time", "10",
                   "--threads", "1", "--out", str(out), "--no-progress"])
    assert rc == 0
    comp = Comparison.load(out)
    assert [(r.backend, r.conditions.gradient) for r in comp] == [("numpy", "analytic"),
                                                       (backend, "autodiff")]
    assert comp.settings["gradient"] == "autodiff"
    assert comp[0].nit == comp[1].nit == 20


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_minibatch_step_without_value(name, linreg):
    """value=False: eager torch skips the unread minibatch objective; the update is the same."""
    from optcmp.frameworks.reference import build_step
    from optcmp.optimizers.gd import GDRule

    be = get_backend(name)
    rows = {k: v[:64] for k, v in linreg.train_data.items()}
    x = be.asarray(np.zeros(linreg.n_params))
    full = build_step(be, linreg, GDRule(), {"learning_rate": 0.1}, grad_norm=False)
    lean = build_step(be, linreg, GDRule(), {"learning_rate": 0.1}, grad_norm=False,
                      value=False, example=(x, (), be.place(rows)))
    f1, _, x1, _ = full(x, (), be.place(rows))
    f2, _, x2, _ = lean(x, (), be.place(rows))
    assert float(be.to_numpy(f1)) > 0
    assert (f2 is None) == (name == "torch")  # TensorFlow's XLA drops it by itself
    np.testing.assert_allclose(be.to_numpy(x2), be.to_numpy(x1), rtol=1e-15, atol=0)


@pytest.mark.parametrize("make", [lambda: LinearRegression(n_samples=200, n_features=4),
                                  _two_targets, lambda: FizzBuzzMLP(),
                                  lambda: FizzBuzzMLP(loss="cross_entropy")],
                         ids=["linreg", "linreg-2-targets", "fizzbuzz", "fizzbuzz-ce"])
def test_numpy_grad_without_the_objective_is_the_same_gradient(make):
    """``grad`` (what numpy minibatch steps call) skips the objective and returns exactly
    ``value_and_grad``'s gradient, bit for bit."""
    p = make()
    assert p.has_numpy_grad
    x = p.init_params(1) if isinstance(p, FizzBuzzMLP) else np.linspace(-1.0, 1.0, p.n_params)
    rows = {k: v[:64] for k, v in p.train_data.items()}
    for batch in (p.train_data, rows):
        np.testing.assert_array_equal(p.grad(x, batch), p.value_and_grad(x, batch)[1])
