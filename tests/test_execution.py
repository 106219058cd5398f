"""Execution modes, warm-up of every batch shape, compile counting, data layout.

No test here reads a clock: compilations are counted, trajectories compared, block sizes and
recorded fields checked. Every run pins ``threads=1`` (float reduction order).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import HAS_JAX, HAS_TF, HAS_TORCH, lr_a

import optcmp
from optcmp.analysis.stats.fairness import fairness_issues
from optcmp.engine.config import RunConfig
from optcmp.engine.drivers import BLOCK_FRACTION
from optcmp.engine.session import CompileInTimedWarning
from optcmp.problems import FizzBuzzMLP, LinearRegression

BACKENDS = ["numpy"] + (["torch"] if HAS_TORCH else []) + (["tensorflow"] if HAS_TF else [])
needs_tf = pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")


@pytest.fixture(scope="module")
def fizzbuzz():
    p = FizzBuzzMLP()
    assert p.n_samples == 900 and p.n_samples % 64 == 4  # 14 batches of 64 and one of 4
    return p


@pytest.fixture(scope="module")
def linreg2000():
    p = LinearRegression(n_samples=2000)
    assert p.n_samples % 64 == 16  # 31 batches of 64 and one of 16
    return p


def _run(problem, spec, backend, execution, max_iter):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileInTimedWarning)
        return optcmp.run(problem, spec, backend=backend, execution=execution, threads=1,
                              max_iter=max_iter, max_time=None)


@pytest.mark.slow
@pytest.mark.parametrize("execution", ["step", "fused"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_no_compilation_inside_the_timed_region(fizzbuzz, linreg2000, backend, execution):
    """FizzBuzz (900 rows, batch 64) and 2,000-row linear regression: every batch shape,
    the shorter last one included, is compiled in the warm-up; none inside the clock."""
    cases = [(fizzbuzz, optcmp.sgd(0.05, batch_size=64), 40),  # 2+ epochs: short batch twice
             (fizzbuzz, optcmp.sgd(0.05, batch_size=64, impl="reference"), 40),
             (linreg2000, optcmp.sgd(1e-3, batch_size=64), 70),
             (linreg2000, optcmp.gd("auto"), 30)]
    for problem, spec, max_iter in cases:
        r = _run(problem, spec, backend, execution, max_iter)
        assert r.status in ("max_iter", "converged"), r.message
        assert r.conditions.compiles_in_timed == 0, (spec, r.implementation)
        assert r.conditions.execution == execution
        assert r.conditions.compiled == {"numpy": "numpy", "torch": "eager", "tensorflow": "xla"}[backend]


@needs_tf
def test_the_counter_sees_a_shape_the_warm_up_missed(monkeypatch):
    """Negative control: skip the warm-up of the short last batch and the count is 1."""
    from optcmp.frameworks.stepper import MinibatchAdapter

    monkeypatch.setattr(MinibatchAdapter, "_warmup_steps", lambda self: [0])
    fresh = LinearRegression(n_samples=2000)  # nothing compiled for it by an earlier run
    with pytest.warns(CompileInTimedWarning, match="1 compilation"):
        r = optcmp.run(fresh, optcmp.sgd(1e-3, batch_size=64, impl="reference"),
                           backend="tensorflow", execution="step", threads=1, max_iter=40,
                           max_time=None)
    assert r.conditions.compiles_in_timed == 1


@needs_tf
def test_tensorflow_counts_traces_and_xla_shapes():
    import tensorflow as tf

    be = optcmp.get_backend("tensorflow")
    f = be.compile(lambda a: tf.reduce_sum(a * a), (np.zeros((8, 3)),), rows=(0,))
    assert be.compilations() == 0
    f(be.asarray(np.ones((8, 3))))
    assert be.compilations() == 1  # the trace
    f(be.asarray(np.ones((8, 3))))
    assert be.compilations() == 1
    f(be.asarray(np.ones((5, 3))))  # no retrace, but XLA compiles the new shape
    assert be.compilations() == 2


@pytest.mark.slow
@needs_tf
@pytest.mark.parametrize("execution", ["step", "fused"])
def test_a_tensorflow_repetition_does_not_compile_again(execution, made):
    """The second of two identical runs takes the compiled step and fused block the first
    one left on the problem (the native Keras defaults: the variable and optimizer with
    them, full batch and minibatch): its backend compiles nothing (setup, warm-up and timed
    steps), the iterate is the same; other hyperparameters (other constants of the graph)
    and another problem object compile anew."""

    def compiles(problem, spec):
        with warnings.catch_warnings():  # native Keras full-batch steps are not fused
            warnings.filterwarnings("ignore", "execution='fused' is not possible")
            r = optcmp.run(problem, spec, backend="tensorflow", execution=execution,
                               threads=1, max_iter=40, max_time=None)
        assert r.conditions.compiles_in_timed == 0 and (r.nit == 40 or r.status == "converged"), r.message
        return r, made[-1].compilations()

    p = LinearRegression(n_samples=1000)
    cases = [(optcmp.adam(1e-2), "reference"),
             (optcmp.sgd(1e-3, batch_size=64, impl="reference"), "reference"),
             (optcmp.adadelta(1.0, 0.9), "native"),  # Keras' defaults: full batch
             (optcmp.sgd(1e-3, batch_size=64, momentum=0.9), "native"),  # and minibatches
             (optcmp.lbfgs(), "scipy")]  # scipy's L-BFGS-B on the compiled value and gradient
    for spec, impl in cases:
        (first, n_first), (again, n_again) = compiles(p, spec), compiles(p, spec)
        assert n_first >= 1 and n_again == 0, spec
        assert first.impl == again.impl == impl
        np.testing.assert_array_equal(again.x, first.x)
    assert compiles(p, optcmp.adam(2e-2))[1] >= 1
    assert compiles(p, optcmp.adadelta(1.0, 0.95))[1] >= 1
    assert compiles(p, optcmp.sgd(1e-3, batch_size=32, momentum=0.9))[1] >= 1
    for spec, _ in (cases[0], cases[3]):
        assert compiles(LinearRegression(n_samples=1000), spec)[1] >= 1


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_torch_reads_dynamo_graph_counter(monkeypatch):
    from torch._dynamo.utils import counters

    be = optcmp.get_backend("torch")
    before = be.compilations()
    monkeypatch.setitem(counters["stats"], "unique_graphs",
                        counters["stats"].get("unique_graphs", 0) + 2)
    assert be.compilations() == before + 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spec", [optcmp.gd(0.01), optcmp.sgd(0.05, batch_size=64),
                                  optcmp.sgd(0.05, batch_size=64, momentum=0.9,
                                             impl="reference")], ids=["gd", "sgd", "sgd-ref"])
def test_step_and_fused_runs_are_the_same_run(backend, spec):
    """Same iterations, same target iteration, same iterate and trace (float64, 1e-10)."""
    p = lr_a()  # GD: hundreds of steps, so blocks of 2+ steps; SGD: 1000 % 64 = 40
    tol = 1e-8 if spec.name == "gd" else 1e-2
    runs = {ex: optcmp.run(p, spec, backend=backend, execution=ex, threads=1, tol=tol,
                               max_iter=3000, max_time=None) for ex in ("step", "fused")}
    a, b = runs["step"], runs["fused"]
    assert (a.conditions.execution, b.conditions.execution) == ("step", "fused")
    assert a.status == b.status == "converged"
    assert spec.name != "gd" or a.nit > 300  # fused blocks of 2+ steps, a hit inside one
    assert a.nit == b.nit and a.nit_to_target == b.nit_to_target and a.nfev == b.nfev
    scale = np.max(np.abs(a.x))
    np.testing.assert_allclose(b.x, a.x, rtol=0, atol=1e-10 * scale)
    np.testing.assert_array_equal(a.trace.iteration, b.trace.iteration)
    np.testing.assert_allclose(b.trace.fun, a.trace.fun, rtol=1e-10)
    assert np.all(np.diff(b.trace.time) >= 0) and b.time_to_target <= b.time


def test_fused_full_batch_blocks_are_at_most_one_percent_of_the_steps_before(monkeypatch):
    from optcmp.frameworks.reference import ReferenceAdapter

    sizes: list[tuple[int, int]] = []
    real = ReferenceAdapter.run_block

    def spy(self, n, *rest):
        sizes.append((self._k, n))
        return real(self, n, *rest)

    monkeypatch.setattr(ReferenceAdapter, "run_block", spy)
    p = lr_a()
    # the whole budget: no early stop
    rule = optcmp.make_stopping(p, tol=1e-15, max_iter=900, max_time=None, stall=False)
    r = optcmp.run(p, optcmp.gd(0.001), execution="fused", threads=1, stopping=rule)
    assert r.nit == 900 and sum(n for _, n in sizes[1:]) == 900  # [0] is the warm-up
    assert all(n <= max(1, BLOCK_FRACTION * k) for k, n in sizes[1:])
    assert max(n for _, n in sizes) == 8  # grew geometrically, stopped by MaxIter exactly


def test_a_callback_needs_every_iterate_so_full_batch_runs_step():
    seen = []
    with pytest.warns(UserWarning, match="callback needs every iterate"):
        r = optcmp.run(lr_a(), optcmp.gd(0.1), execution="fused", max_iter=5,
                           callback=lambda res: seen.append(res.nit))
    assert r.conditions.execution == "step" and len(seen) == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = optcmp.run(lr_a(), optcmp.gd(0.1), max_iter=5, callback=lambda res: None)
    assert auto.conditions.execution == "step"
    sgd = optcmp.run(lr_a(), optcmp.sgd(0.05, batch_size=64), max_iter=40, eval_every=8,
                         callback=lambda res: seen.append(res.nit))
    assert sgd.conditions.execution == "fused" and seen[-5:] == [8, 16, 24, 32, 40]


def test_layout_is_chosen_per_backend_and_workload():
    p = lr_a()
    gd = optcmp.run(p, optcmp.gd(0.1), max_iter=3)
    sgd = optcmp.run(p, optcmp.sgd(0.05, batch_size=64), max_iter=3)
    # the problem holds A column-major: GD shares it, SGD gathers rows from the row-major copy
    # the problem keeps: neither copies the data
    assert (gd.conditions.layout, sgd.conditions.layout) == ("column-major, shared",
                                                             "row-major, shared")
    assert (gd.conditions.compiled, gd.conditions.execution, gd.conditions.compiles_in_timed) == ("numpy", "fused", 0)
    be = optcmp.get_backend("numpy")
    placed = be.place(p.train_data, be.best_layout(minibatch=False))
    assert placed["A"] is p.train_data["A"] and not placed["A"].flags.c_contiguous
    rows = be.place(p.train_data, "row-major")["A"]
    assert rows.flags.c_contiguous and np.array_equal(rows, placed["A"])
    for idx in (np.array([5, 1, 7]), slice(3, 9)):  # a gather and a slice: row-major batches
        batch = be.take_rows(placed, idx)["A"]
        assert batch.flags.c_contiguous and np.array_equal(batch, rows[idx])
    with pytest.raises(ValueError, match="layout must be one of"):
        be.place(p.train_data, "diagonal")


@pytest.mark.parametrize("targets", [1, 2])
def test_linear_regression_reads_its_matrix_transposed_with_the_same_values(targets):
    """The objective, gradient and curvature on ``A.T`` held contiguous equal those on ``A``."""
    from optcmp.frameworks.base import layout_arrays
    from optcmp.frameworks.numpy.ops import ops

    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((300, 3)), rng.standard_normal((300, targets))
    p = LinearRegression.from_arrays(X, Y[:, 0] if targets == 1 else Y)
    x = rng.standard_normal(p.n_params)
    rows, cols = p.train_data, layout_arrays(p.train_data, "column-major", ("A",))
    assert sorted(cols) == ["A_T", "y"] and cols["A_T"].shape == (4, 300)
    assert cols["A_T"].flags.c_contiguous and np.shares_memory(cols["A_T"], rows["A"])
    f0, g0 = p.gradient_ops(ops, x, rows)
    f1, g1 = p.gradient_ops(ops, x, cols)
    np.testing.assert_allclose([f1, p.objective(ops, x, cols)], [f0, f0], rtol=1e-14)
    np.testing.assert_allclose(g1, g0, rtol=1e-13)
    np.testing.assert_allclose(g1, p.value_and_grad(x, rows)[1], rtol=1e-13)
    np.testing.assert_allclose(p.hess_diag(ops, x, cols), p.hess_diag_numpy(), rtol=1e-14)
    work: dict = {}
    for _ in range(2):  # the residual buffer reused
        np.testing.assert_allclose(p.gradient_into(ops, x, cols, work)[1], g0, rtol=1e-13)


def test_a_problem_declares_the_arrays_a_run_may_hold_transposed():
    from optcmp.frameworks.base import run_layout
    from optcmp.problems.base import transposed_arrays

    class Own(LinearRegression):
        def objective(self, ops, x, batch):
            return super().objective(ops, x, batch)

    p, own = lr_a(), Own(n_samples=100)
    A = p.train_data["A"]
    assert A.flags.f_contiguous and not A.flags.writeable
    assert (transposed_arrays(p), transposed_arrays(own)) == (("A",), ())
    numpy = optcmp.get_backend("numpy")
    assert run_layout(numpy, own, False) == ("column-major", ())  # Fortran order: any problem
    assert run_layout(numpy, FizzBuzzMLP(), True) == ("row-major", ())
    if HAS_TORCH:
        torch = optcmp.get_backend("torch")
        assert run_layout(torch, p, False) == ("column-major", ("A",))
        assert run_layout(torch, p, True) == ("row-major", ())  # index_select wants rows whole
        assert run_layout(torch, own, False) == ("row-major", ())
        placed = torch.place(p.train_data, "column-major", ("A",))
        assert tuple(placed["A_T"].shape) == (p.n_params, p.n_samples)
        assert placed["A_T"].data_ptr() == A.ctypes.data  # a view: no copy of the data
        rows = torch.take_rows(torch.place(p.train_data, "column-major"), slice(3, 9))["A"]
        assert rows.is_contiguous() and np.array_equal(rows.numpy(), A[3:9])
        gd = optcmp.run(p, optcmp.gd(0.1), backend="torch", max_iter=3)
        sgd = optcmp.run(p, optcmp.sgd(0.05, batch_size=64), backend="torch", max_iter=3)
        mine = optcmp.run(own, optcmp.gd(0.1), backend="torch", max_iter=3)
        assert [r.conditions.layout for r in (gd, sgd, mine)] == [
            "column-major, shared", "row-major, shared", "row-major, shared"]
        ref = optcmp.run(p, optcmp.gd(0.1), max_iter=3)
        np.testing.assert_allclose(gd.x, ref.x, rtol=1e-12)


def test_execution_is_checked():
    with pytest.raises(ValueError, match="execution must be one of"):
        RunConfig(execution="fast")
    with pytest.raises(ValueError, match="execution must be one or more of"):
        optcmp.compare(lr_a(), [optcmp.gd(0.1)], execution=["step", "turbo"], progress=False)
    with pytest.raises(ValueError, match="execution must be 'step' or 'fused'"):
        optcmp.check_equivalence(lr_a(), optcmp.gd(0.1), backends=("numpy",), steps=2,
                                 execution="auto")


def test_compare_runs_step_and_fused_side_by_side():
    cmp = optcmp.compare(lr_a(), [optcmp.gd(0.1)], execution=["step", "fused"], threads=1,
                         max_iter=50, progress=False)
    assert [(r.label, r.conditions.execution) for r in cmp] == [("gd [step]", "step"),
                                                      ("gd [fused]", "fused")]
    assert cmp[0].nit == cmp[1].nit and np.allclose(cmp[0].x, cmp[1].x, rtol=1e-12)
    from optcmp.store import run_key

    keys = {run_key(lr_a(), optcmp.gd(0.1), backend="numpy", device=None, dtype="float64",
                    seed=0, stopping=optcmp.MaxIter(5), execution=m) for m in ("auto", "step")}
    assert len(keys) == 2


def test_result_fields_round_trip_and_mixed_compilation_is_flagged():
    r = optcmp.run(lr_a(), optcmp.gd(0.1), max_iter=3)
    back = optcmp.results.RunResult.from_dict(r.to_dict())
    assert (back.conditions.compiled, back.conditions.layout, back.conditions.execution, back.conditions.compiles_in_timed) == \
        ("numpy", "column-major, shared", "fused", 0)
    eager = optcmp.results.RunResult.from_dict({**r.to_dict(), "backend": "torch",
                                                "compiled": "eager"})
    xla = optcmp.results.RunResult.from_dict({**r.to_dict(), "backend": "tensorflow",
                                              "compiled": "xla"})
    issues = fairness_issues([eager, xla], timer_resolution=1e-9)
    assert any("compiled and eager runs of the same optimizer" in i and "gd: eager, xla" in i
               for i in issues)
    assert not any("compiled and eager" in i
                   for i in fairness_issues([r, xla], timer_resolution=1e-9))


def test_cli_runs_both_modes_side_by_side(tmp_path, capsys):
    from optcmp import cli
    from optcmp.comparison import Comparison

    out = tmp_path / "r.json"
    rc = cli.main(["run", "--rows", "500", "--backends", "numpy", "--optimizers", "gd",
                   "--execution", "step,fused", "--max-iter", "20", "--max-time", "5",
                   "--threads", "1", "--out", str(out), "--no-progress"])
    assert rc == 0
    comp = Comparison.load(out)
    assert [(r.label, r.conditions.execution, r.conditions.compiled) for r in comp] == [
        ("gd [step]", "step", "numpy"), ("gd [fused]", "fused", "numpy")]
    assert comp[0].nit == comp[1].nit and comp.settings["execution"] == ["step", "fused"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_target_is_confirmed_on_the_replayed_iterate(backend):
    """float32 runs confirm a target in float64 on the iterate that met it: in a fused block
    that iterate is recomputed by replaying the block (the run goes on when unconfirmed)."""
    runs = [optcmp.run(lr_a(), optcmp.gd(0.01), backend=backend, dtype="float32",
                           execution=ex, threads=1, tol=1e-5, max_iter=5000, max_time=None)
            for ex in ("step", "fused")]
    a, b = runs
    assert b.conditions.execution == "fused" and a.status == b.status == "converged"
    assert (a.nit, a.nit_to_target) == (b.nit, b.nit_to_target) and a.nit > 200
    np.testing.assert_allclose(b.x, a.x, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_drop_last_epochs_fuse_without_the_short_batch(backend):
    """FizzBuzzMLP(drop_last=True): 14 batches per epoch, the 4-row rest dropped, in both
    modes: same iterate after three epochs, nothing compiled inside the clock."""
    p = FizzBuzzMLP(drop_last=True)
    runs = [_run(p, optcmp.sgd(0.05, batch_size=64, impl="reference"), backend, ex, 42)
            for ex in ("step", "fused")]
    a, b = runs
    assert a.nit == b.nit == 42 and a.outcome.epochs == b.outcome.epochs == 3.0
    assert a.conditions.compiles_in_timed == b.conditions.compiles_in_timed == 0
    np.testing.assert_allclose(b.x, a.x, rtol=1e-10, atol=1e-12)


SPANNING = (["tensorflow"] if HAS_TF else []) + (["jax"] if HAS_JAX else [])


@pytest.mark.parametrize("backend", SPANNING)
@pytest.mark.parametrize("spec", [optcmp.sgd(0.05, batch_size=64),
                                  optcmp.sgd(0.05, batch_size=64, momentum=0.9,
                                             impl="reference")], ids=["sgd", "sgd-ref"])
def test_compiled_minibatch_blocks_span_epochs_and_time_only_the_runs_steps(backend, spec,
                                                                           monkeypatch):
    """On TensorFlow and JAX a fused minibatch block spans observations and epochs (1,000
    rows, 16 minibatches an epoch, the last of 40 rows; an observation every 4 steps): the
    run is the one-step-per-call run (iterations, iterate, trace), and the clock holds
    exactly its steps: the block that holds the target is run again up to it, so the time to
    the target is the run's whole time."""
    from optcmp.frameworks.reference import ReferenceAdapter
    from optcmp.frameworks.tensorflow.native import KerasNativeAdapter
    from optcmp.timing import Stopwatch

    log: list[int | str] = []
    for cls in (ReferenceAdapter, KerasNativeAdapter):
        def spy(self, n, first=None, every=1, _real=cls.run_block):
            log.append(n)
            return _real(self, n, first, every)
        monkeypatch.setattr(cls, "run_block", spy)
    real_rewind = Stopwatch.rewind

    def rewind(self, mark):
        log.append("rewind")
        real_rewind(self, mark)
    monkeypatch.setattr(Stopwatch, "rewind", rewind)
    p = lr_a()
    runs = {ex: optcmp.run(p, spec, backend=backend, execution=ex, threads=1, tol=1e-3,
                               eval_every=4, max_iter=3000, max_time=None)
            for ex in ("step", "fused")}
    a, b = runs["step"], runs["fused"]
    assert a.status == b.status == "converged" and b.conditions.execution == "fused"
    assert a.nit_to_target == b.nit_to_target and a.nit > 2 * 16  # over two epochs
    np.testing.assert_allclose(b.x, a.x, rtol=0, atol=1e-12 * np.max(np.abs(a.x)))
    np.testing.assert_array_equal(a.trace.iteration, b.trace.iteration)
    np.testing.assert_allclose(b.trace.fun, a.trace.fun, rtol=1e-12)
    blocks = [n for n in log if n != "rewind"]
    timed = sum(n for i, n in enumerate(log)
                if n != "rewind" and (i + 1 == len(log) or log[i + 1] != "rewind"))
    assert len(blocks) < len(b.trace.iteration) / 4  # blocks span observations
    assert timed == b.nit_to_target and "rewind" in log  # the target fell inside a block
    assert b.time == b.time_to_target and b.cpu_time == b.cpu_time_to_target
    # the observations the rewound block passed share the rerun's span: times never go back
    assert np.all(np.diff(b.trace.time) >= 0) and b.trace.time[-1] == b.time_to_target


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
@pytest.mark.parametrize(("spec", "path"), [
    (optcmp.sgd(0.05, batch_size=64), "in-place"),
    (optcmp.sgd(0.02, batch_size=64, momentum=0.9), "functional"),
    (optcmp.sgd(0.02, batch_size=64, momentum=0.9, nesterov=True), "functional"),
    (optcmp.adam(0.01, batch_size=64), "in-place"),
    (optcmp.adam(0.01, batch_size=64, amsgrad=True, weight_decay=0.01), "functional")],
    ids=["plain", "momentum", "nesterov", "adam", "adam-amsgrad-decay"])
def test_torch_fused_blocks_make_the_steps_of_optimizer_step(spec, path):
    """torch.optim.SGD and Adam in fused blocks (the update step() computes: the in-place
    statements of torch's single-tensor update, or its functional update with the param
    group and the state kept in the optimizer) reach bit for bit the iterates of
    ``optimizer.step()`` per call, over 5 epochs of lr_a (the state carried across blocks),
    and record the path."""
    p = lr_a()
    runs = {ex: optcmp.run(p, spec, backend="torch", execution=ex, threads=1, max_iter=80,
                               tol=1e-9, max_time=None, eval_every=7)
            for ex in ("step", "fused")}
    a, b = runs["step"], runs["fused"]
    assert a.nit == b.nit == 80 and b.conditions.execution == "fused"
    np.testing.assert_array_equal(b.x, a.x)
    np.testing.assert_array_equal(b.trace.fun, a.trace.fun)
    assert (a.conditions.update_path, b.conditions.update_path) == ("optimizer.step()", path)
    assert "as step() calls it" in b.implementation and "step()" not in a.implementation
    assert b.conditions.gather == "once per chunk of 16384 rows"


@pytest.mark.parametrize("backend", SPANNING)
def test_a_run_diverging_inside_a_spanning_block_ends_where_one_step_per_call_ends(backend):
    """SGD at learning rate 10 on lr_a overflows to inf and NaN within a few epochs (only the
    non-finite test on): the block that holds the non-finite objective is run again up to it
    (NaN equal to NaN), and the run ends ``diverged`` at the iteration of the
    one-step-per-call run, without a warning."""
    from optcmp.engine.drivers import NondeterministicBlockWarning

    p = lr_a()
    spec = optcmp.sgd(10.0, batch_size=64, impl="reference")
    rule = optcmp.make_stopping(p, max_iter=3000, divergence_factor=None, stall=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NondeterministicBlockWarning)
        runs = [optcmp.run(p, spec, backend=backend, execution=ex, threads=1,
                               eval_every=4, stopping=rule) for ex in ("step", "fused")]
    a, b = runs
    assert a.status == b.status == "diverged" and a.nit == b.nit > 16, (a.message, b.message)
    assert not np.isfinite(b.fun)


@pytest.mark.parametrize("execution", ["step", "fused"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_each_epochs_gather_of_the_rows_is_on_the_clock(backend, execution, monkeypatch):
    """Three epochs of minibatch SGD on lr_a (16 minibatches an epoch, one chunk): the row
    order is placed off the clock, but each epoch's gather of the rows in that order (the
    copy a training loop pays for) happens while the stopwatch runs, once per epoch, epoch
    0's included (the warm-up's gather is dropped)."""
    from optcmp.frameworks.stepper import MinibatchAdapter
    from optcmp.timing import Stopwatch

    running = {"on": False}
    real_resume, real_pause = Stopwatch.resume, Stopwatch.pause
    real_gather = MinibatchAdapter._gather_chunk
    gathers: list[bool] = []

    def resume(self):
        real_resume(self)
        running["on"] = True

    def pause(self):
        running["on"] = False
        return real_pause(self)

    def gather(self, j):
        gathers.append(running["on"])
        real_gather(self, j)

    monkeypatch.setattr(Stopwatch, "resume", resume)
    monkeypatch.setattr(Stopwatch, "pause", pause)
    monkeypatch.setattr(MinibatchAdapter, "_gather_chunk", gather)
    r = optcmp.run(lr_a(), optcmp.sgd(0.01, batch_size=64), backend=backend,
                       execution=execution, threads=1, max_iter=48, tol=1e-12,
                       max_time=None)
    assert r.nit == 48 and r.conditions.execution == execution
    timed = [g for g in gathers if g]
    if backend == "tensorflow" and execution == "fused":
        assert gathers == []  # the compiled block gathers inside its own loop
    else:
        assert len(timed) == 3 and gathers[-3:] == [True, True, True], gathers


@pytest.mark.slow
@pytest.mark.parametrize("backend", SPANNING)
def test_observations_further_apart_than_the_index_vector_holds(backend):
    """300 rows in minibatches of 32 (10 steps an epoch): an index vector of 128 epochs holds
    1,280 steps, fewer than ``eval_every=1400``: blocks end where the index vector does, and
    the run is the one-step-per-call run."""
    p = LinearRegression(n_samples=300)
    runs = [optcmp.run(p, optcmp.sgd(batch_size=32), backend=backend, execution=ex,
                           threads=1, eval_every=1400, max_iter=1500, tol=1e-12,
                           max_time=None) for ex in ("step", "fused")]
    a, b = runs
    assert (a.status, a.nit) == (b.status, b.nit) == ("max_iter", 1500)
    np.testing.assert_allclose(b.x, a.x, rtol=0, atol=1e-12 * np.max(np.abs(a.x)))
    np.testing.assert_array_equal(a.trace.iteration, b.trace.iteration)


@pytest.mark.slow
@pytest.mark.parametrize("backend", SPANNING)
def test_a_callback_that_fails_inside_a_spanning_block_leaves_that_iterate(backend):
    """A callback raising ValueError at the observation after step 28 (every 7 steps): the
    fused run fails there with the iterate and objective of the one-step-per-call run, not
    those of the block's end."""
    def boom(r):
        if r.nit >= 25:
            raise ValueError("boom")

    p = LinearRegression(n_samples=300)
    runs = [optcmp.run(p, optcmp.sgd(batch_size=32), backend=backend, execution=ex,
                           threads=1, eval_every=7, max_iter=3000, callback=boom)
            for ex in ("step", "fused")]
    a, b = runs
    assert a.status == b.status == "failed" and a.nit == b.nit == 28, (a.message, b.message)
    np.testing.assert_allclose(b.x, a.x, rtol=0, atol=1e-12 * np.max(np.abs(a.x)))
    assert b.fun == pytest.approx(a.fun, rel=1e-12)


def test_a_run_that_ends_inside_an_epoch_gathers_only_the_chunks_it_reaches(monkeypatch):
    """100,000 rows in minibatches of 64 (1,563 an epoch): 300 steps gather two chunks of
    CHUNK_ROWS rows (minibatches 0-255 and 256-511), not the epoch's 100,000 rows."""
    from optcmp.frameworks.stepper import CHUNK_ROWS, MinibatchAdapter

    real = MinibatchAdapter._gather_chunk
    rows: list[int] = []

    def gather(self, j):
        real(self, j)
        rows.append(len(next(iter(self._chunk_rows.values()))))

    monkeypatch.setattr(MinibatchAdapter, "_gather_chunk", gather)
    r = optcmp.run(LinearRegression(n_samples=100_000), optcmp.sgd(1e-4, batch_size=64),
                       backend="numpy", threads=1, max_iter=300, tol=1e-12, max_time=None)
    assert r.nit == 300 and CHUNK_ROWS == 1 << 14
    # the warm-up's: the first chunk and the last (its shorter last minibatch); the run's: two
    assert rows == [CHUNK_ROWS, 100_000 - 6 * CHUNK_ROWS, CHUNK_ROWS, CHUNK_ROWS]


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
def test_index_vectors_of_successive_spanning_blocks_keep_the_epochs_order():
    """1,200 steps of lr_a (75 epochs) in blocks whose index vectors overlap (each new one
    keeps the epochs the last one drew): the same iterate as one step per call."""
    p = lr_a()
    spec = optcmp.sgd(0.01, batch_size=64, impl="reference")
    a, b = (optcmp.run(p, spec, backend="jax", execution=ex, threads=1, max_iter=1200,
                           tol=1e-12, max_time=None) for ex in ("step", "fused"))
    assert a.nit == b.nit == 1200 and len(b.trace.iteration) == 76
    np.testing.assert_allclose(b.x, a.x, rtol=0, atol=1e-12 * np.max(np.abs(a.x)))


@needs_tf
def test_keras_sgd_clips_in_float32_runs_as_the_reference_rule():
    """Keras' SGD with ``global_clipnorm`` failed every float32 run (a float64 clip norm met
    float32 tensors); it runs, and agrees with the reference rule to float32 rounding."""
    p = LinearRegression(n_samples=203)

    def spec(**kw):
        return optcmp.sgd(0.002, batch_size=32, momentum=0.9, clip_norm=0.5, **kw)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a budget-only run has no target
        r = optcmp.run(p, spec(), backend="tensorflow", dtype="float32", max_iter=10,
                           max_time=None, threads=1)
        q = optcmp.run(p, spec(impl="reference"), backend="numpy", dtype="float32",
                           max_iter=10, max_time=None, threads=1)
    assert r.status == "max_iter" and r.impl == "native", r.message
    np.testing.assert_allclose(r.x, q.x, rtol=0, atol=1e-5 * np.max(np.abs(q.x)))
