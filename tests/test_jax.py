"""The JAX backend and optax's optimizers: agreement with the other backends, compile counts,
the float64 guarantee and the barrier before every clock read."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import HAS_TF, HAS_TORCH, lr_a

pytest.importorskip("optcmp.frameworks.jax.ops")  # jax installed (imported, not started)
pytest.importorskip("optax")

import optcmp  # noqa: E402
from optcmp.engine.session import CompileInTimedWarning  # noqa: E402
from optcmp.equivalence import check_equivalence  # noqa: E402
from optcmp.problems import from_function  # noqa: E402

FRAMEWORKS = ("numpy", *(("torch",) if HAS_TORCH else ()),
              *(("tensorflow",) if HAS_TF else ()), "jax")

#: The reference rule of each optimizer, and optax's native under the convention it implements.
SPECS = {
    "gd": optcmp.gd(0.1),
    "sgd": optcmp.sgd(0.05, batch_size=64, momentum=0.9),
    "adam": optcmp.adam(0.01),
    "adadelta": optcmp.adadelta(1.0, rho=0.9, eps=1e-6),
    "rmsprop": optcmp.rmsprop(1e-3, momentum=0.5, convention="eps_inside_sqrt"),
    "momentum": optcmp.momentum(0.05),
}


@pytest.fixture(scope="module")
def problem():
    return lr_a()


@pytest.mark.parametrize("key", list(SPECS))
def test_reference_rule_agrees_on_every_framework_to_1e_12(problem, key):
    res = check_equivalence(problem, SPECS[key], backends=FRAMEWORKS, steps=50, dtype="float64",
                            impl="reference")
    assert res.verdict == "equivalent", str(res)
    assert res.max_rel_diff <= 1e-12
    assert res.fun["numpy"][-1] < 0.9 * res.fun["numpy"][0]  # the optimizer moved


@pytest.mark.parametrize("key", [k for k in SPECS if k != "gd"])
def test_optax_native_agrees_with_the_reference_of_its_convention(problem, key):
    res = check_equivalence(problem, SPECS[key], backends=("numpy", "jax"), steps=50,
                            dtype="float64", impl={"numpy": "reference", "jax": "native"})
    assert res.implementations["jax"].startswith("optax.")
    assert res.verdict == "equivalent", str(res)
    assert res.max_rel_diff <= 1e-12


@pytest.mark.parametrize("execution", ["step", "fused"])
def test_fused_blocks_take_the_same_path_and_compile_nothing_while_timed(problem, execution):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileInTimedWarning)
        r = optcmp.run(problem, optcmp.gd(0.1), backend="jax", tol=1e-8,
                           execution=execution)
    assert r.status == "converged" and r.conditions.execution == execution
    assert r.nit_to_target == 46  # as on numpy, torch and TensorFlow (tests/optimizer_db.py)
    assert r.conditions.compiles_in_timed == 0 and r.conditions.compiled == "xla"


def test_minibatches_with_a_shorter_last_one_are_warmed_up(problem):
    # 1000 rows in minibatches of 64: the last of each epoch has 40 rows, a second shape
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileInTimedWarning)
        r = optcmp.run(problem, optcmp.sgd(0.05, batch_size=64, impl="reference"),
                           backend="jax", tol=1e-3, execution="step")
    assert r.status == "converged" and r.conditions.compiles_in_timed == 0


def test_float64_is_computed_in_float64_and_refused_when_x64_is_off(problem):
    import jax

    from optcmp.frameworks import get_backend

    b = get_backend("jax", dtype="float64")
    assert b.asarray(np.zeros(3)).dtype == np.float64
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(ValueError, match="jax_enable_x64"):
            b.asarray(np.zeros(3))
    finally:
        jax.config.update("jax_enable_x64", True)


def test_optax_conventions_that_differ_are_skipped_with_the_reason(problem):
    # optax.rmsprop keeps the learning rate inside the momentum buffer: with eps outside the
    # square root, momentum and a schedule it is neither torch's nor Keras' algorithm
    spec = optcmp.rmsprop(1e-3, momentum=0.5, schedule="multistep(milestones=[30], gamma=0.1)",
                          impl="native")
    r = optcmp.run(problem, spec, backend="jax", max_iter=10)
    assert r.status == "skipped" and "matches neither" in r.message
    r = optcmp.run(problem, optcmp.adagrad(0.5, impl="native"), backend="jax", max_iter=5)
    assert r.status == "skipped" and "eps_inside_sqrt" in r.message


def _chained_rosenbrock(o, x, data):
    return o.sum(100.0 * o.square(x[1:] - o.square(x[:-1])) + o.square(1.0 - x[:-1]))


@pytest.mark.skipif(not HAS_TORCH, reason="scipy's L-BFGS-B here gets torch's autodiff gradient")
def test_optax_lbfgs_reports_compilation_apart_and_is_judged_by_the_same_target():
    """"optax L-BFGS is 10x slower than scipy" timed the compilation and stopped on other
    tests: here compilation is warm-up (never timed), and both runs stop at optcmp's target."""
    problem = from_function(_chained_rosenbrock, np.zeros(100), optimum=0.0,
                            name="chained_rosenbrock_100")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileInTimedWarning)
        ox = optcmp.run(problem, optcmp.lbfgs(impl="native"), backend="jax", tol=1e-8,
                            max_iter=3000)
    sp = optcmp.run(problem, optcmp.lbfgs(impl="scipy"), backend="torch", tol=1e-8,
                        max_iter=3000)
    assert ox.implementation.startswith("optax.lbfgs(") and ox.impl == "native"
    assert ox.status == sp.status == "converged"
    assert ox.outcome.target == sp.outcome.target == "RelativeSuboptimality(tol=1e-08)"
    assert ox.conditions.compiles_in_timed == 0
    assert ox.warmup_time > 0.0  # tracing and XLA compilation, reported apart
    for r in (ox, sp):  # the same accuracy: f - f* <= 1e-8 (f0 - f*) with f* = 0, f0 = 99
        assert r.fun <= 1e-8 * 99.0
        assert r.nfev_to_target >= r.nit_to_target


def test_optax_lbfgs_counts_every_line_search_evaluation(problem):
    r = optcmp.run(problem, optcmp.lbfgs(impl="native"), backend="jax", tol=1e-10)
    assert r.status == "converged" and r.impl == "native"
    # the first step evaluates x0, every line search at least once more
    assert r.nfev_to_target >= r.nit_to_target + 1


def test_barrier_waits_for_the_work_the_clock_reads(problem, monkeypatch):
    """Without ``block_until_ready`` the clock reads the dispatch only: ``sync`` must call it on
    the outputs of the calls made since the last read."""
    import optcmp.frameworks.jax.backend as jb

    waited = []
    monkeypatch.setattr(jb, "block_until_ready", lambda xs: waited.append(len(xs)))
    b = jb.JaxBackend()
    f = b.compile(lambda a: a @ a, (np.eye(4),))
    f(b.asarray(np.eye(4)))
    f(b.asarray(np.eye(4)))
    b.sync()
    b.sync()
    assert waited == [2]  # both outputs waited for once; nothing pending afterwards


def test_gpu_device_is_refused_when_absent():
    import jax

    from optcmp.frameworks import get_backend

    try:
        has_gpu = bool(jax.devices("gpu"))
    except RuntimeError:
        has_gpu = False
    if has_gpu:
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="available devices"):
        get_backend("jax", device="cuda")


@pytest.mark.parametrize("execution", ["step", "fused"])
@pytest.mark.parametrize("spec", [optcmp.adam(1e-3), optcmp.adamw(1e-3),
                                  optcmp.adam(1e-3, batch_size=64),
                                  optcmp.adam(1e-3, impl="reference")],
                         ids=["adam", "adamw", "adam-minibatch", "adam-reference"])
def test_a_fresh_optimizer_state_compiles_nothing_while_timed(problem, spec, execution):
    """optax's ``init`` makes an uncommitted step count; the steps return committed arrays,
    and jit compiles again for those (no new trace) unless the state is placed first. Placed,
    no XLA compilation happens in the timed region (counted from JAX's own compile events)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileInTimedWarning)
        r = optcmp.run(problem, spec, backend="jax", execution=execution, threads=1,
                           max_iter=20, tol=1e-12, max_time=None)
    assert r.nit == 20 and r.conditions.compiles_in_timed == 0


def test_a_compile_without_a_new_trace_is_counted(monkeypatch):
    """With the state left uncommitted, the second step compiles again without tracing: the
    count sees it (the run records it and warns). A problem object of its own: no program an
    earlier run compiled is reused."""
    from optcmp.frameworks.jax.backend import JaxBackend

    monkeypatch.setattr(JaxBackend, "place_state", lambda self, state: state)
    with pytest.warns(CompileInTimedWarning):
        r = optcmp.run(lr_a(), optcmp.adam(1e-3), backend="jax", execution="step",
                           threads=1, max_iter=20, tol=1e-12, max_time=None)
    assert r.conditions.compiles_in_timed >= 1


_REPEATED = [optcmp.adam(1e-2), optcmp.sgd(0.05, batch_size=64, momentum=0.9),
             optcmp.sgd(0.05, batch_size=64, impl="reference")]


@pytest.mark.parametrize("spec, execution", [
    *((s, e) for s in _REPEATED for e in ("step", "fused")), (optcmp.lbfgs(), "step"),
    pytest.param(optcmp.lbfgs(impl="native"), "step", marks=pytest.mark.slow)],
    ids=["adam-step", "adam-fused", "sgd-minibatch-step", "sgd-minibatch-fused",
         "sgd-reference-step", "sgd-reference-fused", "lbfgs-scipy", "lbfgs-optax"])
def test_a_jax_repetition_does_not_compile_again(spec, execution, made):
    """The second of two identical runs calls the programs the first one compiled: no XLA
    compilation in its setup, warm-up or steps, and the same iterate; another learning rate
    (a constant of the program) and another problem object compile anew."""
    from optcmp.problems import LinearRegression

    def compiles(problem, spec):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lbfgs on few rows may stop by itself
            r = optcmp.run(problem, spec, backend="jax", execution=execution, threads=1,
                               max_iter=40, max_time=None)
        assert r.conditions.compiles_in_timed == 0, r.message
        return r, made[-1].compilations()

    p = LinearRegression(n_samples=1000)
    (first, n_first), (again, n_again) = compiles(p, spec), compiles(p, spec)
    assert n_first >= 1 and n_again == 0
    assert again.nit == first.nit
    np.testing.assert_array_equal(again.x, first.x)
    other = spec.replace(learning_rate=2e-2) if spec.name != "lbfgs" else spec
    if other is not spec:
        assert compiles(p, other)[1] >= 1
    assert compiles(LinearRegression(n_samples=1000), spec)[1] >= 1


@pytest.mark.slow
def test_a_problem_that_kept_compiled_programs_still_pickles():
    """Programs kept for repetitions (JAX, and TensorFlow's variables and functions) stay in
    this process: the problem pickles without them and runs again elsewhere, to the same
    iterate."""
    import pickle

    from conftest import HAS_TF

    p = lr_a()
    spec = optcmp.sgd(0.05, batch_size=64)
    runs = {b: optcmp.run(p, spec, backend=b, threads=1, max_iter=30, max_time=None)
            for b in ("jax", *(("tensorflow",) if HAS_TF else ()))}
    assert p.__dict__.get("_optcmp_compiled")
    copy = pickle.loads(pickle.dumps(p))
    assert "_optcmp_compiled" not in copy.__dict__
    again = optcmp.run(copy, spec, backend="jax", threads=1, max_iter=30, max_time=None)
    np.testing.assert_array_equal(again.x, runs["jax"].x)


def test_an_eval_every_beyond_int32_runs_fused_as_it_runs_step_by_step():
    """``eval_every=10**12`` once failed fused minibatch runs with an OverflowError (int32):
    the fused run takes the step-by-step run's path, to the same last iterate."""
    p = optcmp.problems.LinearRegression(n_samples=250)
    runs = [optcmp.run(p, optcmp.sgd(1e-3, batch_size=64), backend="jax", execution=ex,
                       eval_every=10**12, max_iter=300, max_time=None)
            for ex in ("fused", "step")]
    assert [(r.status, r.nit) for r in runs] == [("max_iter", 300)] * 2
    np.testing.assert_allclose(runs[0].x, runs[1].x, rtol=1e-12, atol=0)
