"""numpy, torch and TensorFlow agree step by step (check_equivalence), native and reference."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import HAS_TF, HAS_TORCH, lr_a, lr_b, needs_tf, needs_torch

import optcmp
from optcmp.equivalence import EquivalenceResult, check_equivalence

needs_both = pytest.mark.skipif(not (HAS_TORCH and HAS_TF), reason="needs torch and tensorflow")
ALL = ("numpy", "torch", "tensorflow")

SPECS = {
    "gd": (optcmp.gd(0.1), None),
    "diag_newton": (optcmp.diag_newton(1.0), None),
    "adadelta-native": (optcmp.adadelta(1.0, rho=0.9, eps=1e-6), "native"),
    "adadelta-reference": (optcmp.adadelta(1.0, rho=0.9, eps=1e-6), "reference"),
    "sgd-native": (optcmp.sgd(0.05, batch_size=64), "native"),
    "sgd-momentum-native": (optcmp.sgd(0.05, batch_size=64, momentum=0.9), "native"),
    "sgd-nesterov-native": (optcmp.sgd(0.03, batch_size=100, momentum=0.8, nesterov=True),
                            "native"),
    "sgd-reference": (optcmp.sgd(0.05, batch_size=64, momentum=0.9), "reference"),
}


@pytest.fixture(scope="module")
def problem():
    return lr_a()


@needs_both
@pytest.mark.parametrize("execution", ["step", "fused"])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-4)])
@pytest.mark.parametrize("key", list(SPECS))
def test_backends_agree_over_50_steps(problem, key, dtype, tol, execution):
    """Every execution mode: the fused path runs one-step blocks of its loop."""
    spec, impl = SPECS[key]
    res = check_equivalence(problem, spec, backends=ALL, steps=50, dtype=dtype, impl=impl,
                            execution=execution)
    assert res.backends == list(ALL)
    assert res.tolerance == tol
    assert res.passed, str(res)
    assert res.verdict == "equivalent"
    assert res.fun_rel_diff.shape == (51,) and res.x_rel_diff.shape == (51,)
    assert res.x_rel_diff[0] == 0.0  # the same initial point everywhere
    assert res.max_rel_diff <= tol
    # the optimizer moved: agreement is not the agreement of idle iterates
    assert res.fun["numpy"][-1] < 0.9 * res.fun["numpy"][0]
    if impl == "native":
        assert res.impls == {"numpy": "reference", "torch": "native", "tensorflow": "native"}
        assert res.implementations["torch"].startswith("torch.optim.")
        assert res.implementations["tensorflow"].startswith("keras.optimizers.")
    elif impl == "reference":
        assert set(res.impls.values()) == {"reference"}


@needs_both
def test_float64_agreement_is_much_tighter_than_the_tolerance(problem):
    res = check_equivalence(problem, optcmp.adadelta(1.0, rho=0.9, eps=1e-6), impl="native",
                            steps=50)
    assert res.max_rel_diff < 1e-13, str(res)


@needs_both
def test_equivalence_detects_a_different_algorithm(problem):
    """Different hyperparameters per backend must give the verdict 'different'."""
    res = check_equivalence(problem, optcmp.gd(0.1), backends=("numpy", "torch"), steps=10)
    assert res.passed
    # a spec that drifts: float32 on one side is a real difference at the float64 tolerance
    res32 = check_equivalence(problem, optcmp.gd(0.1), backends=("numpy", "torch"), steps=10,
                              dtype="float32", tolerance=1e-10)
    assert not res32.passed and res32.verdict == "different"
    assert res32.first_step_above() is not None
    assert "different" in str(res32)


@needs_torch
def test_equivalence_catches_a_sum_reduction_on_one_backend():
    """A sum instead of a mean on one backend only (a hidden learning rate) is flagged from step
    0."""
    X, y = np.arange(1.0, 5.0)[:, None], 2.0 * np.arange(1.0, 5.0)

    class SumOnTorch(optcmp.problems.LinearRegression):
        def objective(self, ops, x, batch):
            r = ops.matmul(batch["A"], x) - batch["y"]
            return ops.sum(r * r) if ops.name == "torch" else ops.mean(r * r)

    p = SumOnTorch.from_arrays(X, y, fit_intercept=False)
    res = check_equivalence(p, optcmp.gd(0.01), backends=("numpy", "torch"), steps=5)
    assert res.verdict == "different" and res.first_step_above() == 0
    assert res.fun["torch"][0] == pytest.approx(4 * res.fun["numpy"][0])


@needs_torch
def test_sgd_native_uses_the_reference_minibatch_sequence(problem):
    """Native torch SGD sees exactly the rows of BatchOrder (same as numpy's reference)."""
    from optcmp.batching import BatchOrder
    from optcmp.frameworks.torch.native import TorchNativeAdapter

    spec = optcmp.sgd(0.05, batch_size=300, impl="native")
    be = optcmp.get_backend("torch")
    ad = TorchNativeAdapter(spec, problem, be, np.zeros(problem.n_params), seed=5)
    ad.setup()
    order = BatchOrder(problem.n_samples, 300, True, 5)
    for k in range(9):  # crosses two epoch boundaries (4 steps per epoch, last has 100 rows)
        rows = be.to_numpy(ad._batch()["y"])
        np.testing.assert_array_equal(rows, problem.train_data["y"][order.batch_indices(k)])
        ad.step()
        ad.ready(1)


@needs_torch
@pytest.mark.parametrize("make", [lr_a, lr_b], ids=["LR-A", "LR-B"])
def test_torch_lbfgs_and_scipy_lbfgsb_reach_the_same_optimum(make):
    p = make()  # LR-B: condition number ~1e8, a real test for both line searches
    opt = p.optimum()
    # LR-B's float64 gradients resolve f to about 1e-7 of f* only, at a level that follows the
    # products' last bits (torch's L-BFGS stalls at 3.5e-8 of f* on one kernel, reaches 1e-13
    # on another): a target of 1e-10 of the initial gap, 6e-7 of f*
    tol, of_fstar = (1e-14, 1e-8) if p.name == "LR-A" else (1e-10, 1e-6)
    runs = {
        "torch-native": optcmp.run(p, optcmp.lbfgs(impl="native"), backend="torch",
                                       tol=tol, max_iter=500),
        "scipy-numpy": optcmp.run(p, optcmp.lbfgs(impl="scipy"), backend="numpy",
                                      tol=tol, max_iter=500),
        "scipy-torch": optcmp.run(p, optcmp.lbfgs(impl="scipy"), backend="torch",
                                      tol=tol, max_iter=500),
    }
    scale = np.max(np.abs(opt.x))
    for name, r in runs.items():
        assert r.status == "converged", (name, r.message)
        assert (r.fun - opt.fun) / opt.fun <= of_fstar, name
        assert r.fun >= opt.fun * (1 - 1e-15), name
    if p.name == "LR-A":  # well conditioned: the minimizers agree too
        for r in runs.values():
            np.testing.assert_allclose(r.x, opt.x, rtol=0, atol=1e-8 * scale)
    nat = runs["torch-native"]
    assert nat.impl == "native" and "strong_wolfe" in nat.implementation
    assert "max_eval=21" in nat.implementation and "history_size=10" in nat.implementation
    assert "tolerance_grad=0.0" in nat.implementation
    # every closure call counted: x0's, then at least one line-search call per iteration (the
    # incoming point's evaluation is the previous line search's, as in torch's own loop)
    assert nat.nit + 1 <= nat.nfev < 2 * nat.nit and nat.njev == nat.nfev


@needs_torch
def test_torch_lbfgs_step_cost_is_its_line_search():
    from optcmp.frameworks.torch.native import TorchNativeAdapter

    p = lr_a()
    calls = []
    be = optcmp.get_backend("torch")
    ad = TorchNativeAdapter(optcmp.lbfgs(history_size=3, max_linesearch=4, impl="native"), p, be,
                    np.zeros(p.n_params))
    ad.setup()
    assert ad.opt.param_groups[0]["max_eval"] == 5
    assert ad.opt.param_groups[0]["max_iter"] == 1
    assert ad.opt.param_groups[0]["history_size"] == 3
    orig = ad._loss_and_grad

    def counting(*args):
        calls.append(1)
        return orig(*args)

    ad._loss_and_grad = counting
    for i in range(4):
        n0 = len(calls)
        out = ad.step()
        # x0 is evaluated by the first step; a later step's incoming point was evaluated by
        # the line search before it
        assert out.nfev == len(calls) - n0 >= (2 if i == 0 else 1)
        assert out.nfev <= (1 if i == 0 else 0) + 4  # line search capped at max_linesearch
    assert ad.opt.state[ad.param]["n_iter"] == 4  # one L-BFGS iteration per optcmp step


@pytest.mark.parametrize("backend", [pytest.param("torch", marks=needs_torch),
                                     pytest.param("tensorflow", marks=needs_tf)])
def test_scipy_lbfgsb_on_framework_backends_float64_and_float32(backend):
    p = lr_a()
    ref = optcmp.run(p, optcmp.lbfgs(impl="scipy"), backend="numpy", tol=1e-10)
    r64 = optcmp.run(p, optcmp.lbfgs(impl="scipy"), backend=backend, tol=1e-10)
    assert r64.status == "converged" and r64.nit == ref.nit and r64.nfev == ref.nfev
    np.testing.assert_allclose(r64.x, ref.x, rtol=1e-9)
    r32 = optcmp.run(p, optcmp.lbfgs(impl="scipy"), backend=backend, dtype="float32",
                         tol=1e-6)
    assert r32.status == "converged", r32.message
    assert r32.x.dtype == np.float64
    assert r32.fun >= p.optimum().fun  # re-evaluated in float64: never below f*


def test_check_equivalence_input_errors(problem):
    with pytest.raises(ValueError, match="steps"):
        check_equivalence(problem, optcmp.gd(0.1), backends=("numpy",), steps=0)
    with pytest.raises(ValueError, match="float16"):
        check_equivalence(problem, optcmp.gd(0.1), backends=("numpy",), dtype="float16")
    with pytest.raises(ValueError, match="impl='native' on none"):
        check_equivalence(problem, optcmp.gd(0.1), backends=("numpy",), impl="native")
    with pytest.raises(ValueError, match="unknown backend"):
        check_equivalence(problem, optcmp.gd(0.1), backends=("mxnet",))


@needs_torch
def test_check_equivalence_loop_adapter_and_result_api(problem):
    res = check_equivalence(problem, optcmp.lbfgs(), backends=("numpy", "torch"), steps=3,
                            impl="scipy")
    assert isinstance(res, EquivalenceResult) and bool(res)
    assert res.x["torch"].shape == (4, problem.n_params)
    assert res.fun["numpy"][3] < res.fun["numpy"][0]
    assert res.first_step_above() is None


@pytest.mark.parametrize("kw, error, match", [
    ({"impl": "bogus"}, ValueError, r"impl must be None, one of \('auto', 'native', "
                                    r"'reference', 'scipy'\) or a mapping backend -> impl, "
                                    r"got 'bogus'"),
    ({"impl": ["native"]}, ValueError, r"impl must be None, one of .* got \['native'\]"),
    ({"impl": {"mxnet": "native"}}, ValueError, "unknown backend 'mxnet'"),
    ({"impl": {"torch": "fast"}}, ValueError, r"impl for backend 'torch' must be one of"),
    ({"seed": 1.5}, ValueError, "seed must be a non-negative integer, got 1.5"),
    ({"seed": -1}, ValueError, "seed must be a non-negative integer, got -1"),
    ({"tolerance": "x"}, ValueError, "tolerance must be a number > 0, got 'x'"),
    ({"backends": "numpy,mxnet"}, ValueError, "unknown backend 'mxnet'"),
])
def test_check_equivalence_bad_input(kw, error, match):
    with pytest.raises(error, match=match):
        check_equivalence(lr_a(), optcmp.adadelta, steps=2, **kw)


def test_check_equivalence_takes_backend_strings_and_auto():
    res = check_equivalence(lr_a(), optcmp.gd(0.1), backends="numpy", steps=2, impl="auto")
    assert res.backends == ["numpy"] and res.verdict == "inconclusive"
    with pytest.raises(TypeError, match="problem must be an optcmp Problem"):
        check_equivalence("LR-A", optcmp.gd(0.1))  # type: ignore[arg-type]


@needs_torch
@pytest.mark.parametrize("gradient", ["analytic", "autodiff"])
def test_check_equivalence_runs_and_records_the_gradient_asked_for(gradient, monkeypatch):
    """check_equivalence(..., gradient=...) computes that gradient on the framework backends,
    as a run with the same setting does (it once took no gradient setting and always ran "auto")."""
    import torch

    calls = []
    grad = torch.autograd.grad

    def counting(*args, **kwargs):
        calls.append(1)
        return grad(*args, **kwargs)

    monkeypatch.setattr(torch.autograd, "grad", counting)
    p = optcmp.problems.LinearRegression(n_samples=500)
    backends = ("numpy", "torch") + (("tensorflow",) if HAS_TF else ())
    res = check_equivalence(p, optcmp.gd(0.1), backends=backends, steps=10, gradient=gradient)
    assert res.verdict == "equivalent", str(res)
    assert res.gradients == {"numpy": "analytic", **{b: gradient for b in backends[1:]}}
    run = optcmp.run(p, optcmp.gd(0.1), backend="torch", gradient=gradient, max_iter=3)
    assert run.conditions.gradient == res.gradients["torch"]
    if gradient == "autodiff":  # every step and every evaluation of the trajectory
        assert len(calls) >= 2 * 10 + 1
    else:
        assert calls == []


@pytest.mark.skipif(not (HAS_TORCH or HAS_TF), reason="no framework installed")
def test_analytic_without_a_declared_gradient_is_skipped_like_the_run():
    p = optcmp.problems.LogisticRegression(n_samples=200)
    spec = optcmp.sgd(0.05, batch_size=64)
    frameworks = [b for b, ok in (("torch", HAS_TORCH), ("tensorflow", HAS_TF)) if ok]
    res = check_equivalence(p, spec, backends=("numpy", *frameworks), steps=3,
                            gradient="analytic")
    assert res.backends == ["numpy"] and res.gradients == {"numpy": "analytic"}
    for b in frameworks:
        assert "declares no gradient written against ops" in res.skipped[b]
        r = optcmp.run(p, spec, backend=b, gradient="analytic", max_iter=3)
        assert (r.status, r.message) == ("skipped", res.skipped[b])


def test_check_equivalence_takes_a_run_config():
    p = lr_a()
    cfg = optcmp.RunConfig(dtype="float32", execution="fused", seed=3)
    res = check_equivalence(p, optcmp.gd(0.1), backends=("numpy",), steps=4, config=cfg)
    assert (res.dtype, res.tolerance, res.executions) == ("float32", 1e-4, {"numpy": "fused"})
    # a config's execution="auto" (RunConfig's default) is the check's own default, "step"
    res = check_equivalence(p, optcmp.gd(0.1), backends=("numpy",), steps=4,
                            config=cfg.replace(execution="auto"))
    assert res.executions == {"numpy": "step"}
    np.testing.assert_array_equal(res.x["numpy"][0], p.init_params(3))
    # explicit arguments win over the config, and the default execution stays "step"
    res = check_equivalence(p, optcmp.gd(0.1), "numpy", 4, "float64", config=cfg, seed=0,
                            execution="step")
    assert (res.dtype, res.executions) == ("float64", {"numpy": "step"})
    assert check_equivalence(p, optcmp.gd(0.1), "numpy", 2).executions == {"numpy": "step"}
    with pytest.raises(TypeError, match="unexpected keyword argument.*'gradinet'"):
        check_equivalence(p, optcmp.gd(0.1), "numpy", 2, gradinet="autodiff")
    with pytest.raises(TypeError, match="backends="):
        check_equivalence(p, optcmp.gd(0.1), "numpy", 2, backend="torch")
