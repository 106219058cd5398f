"""torch and TensorFlow backends: ops namespace, conversions, devices, autodiff, tracing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import HAS_TF, HAS_TORCH, lr_a, lr_b, needs_cuda, needs_tf, needs_torch

from optcmp.frameworks import BackendUnavailable, get_backend
from optcmp.frameworks.numpy.ops import ops as np_ops
from optcmp.frameworks.reference import build_step
from optcmp.problems import LinearRegression

FRAMEWORKS = [pytest.param("torch", marks=needs_torch), pytest.param("tensorflow", marks=needs_tf)]

RNG = np.random.default_rng(7)
M = RNG.standard_normal((4, 3))
V = RNG.standard_normal(3)
P = np.abs(RNG.standard_normal((4, 3))) + 0.1

#: op name -> (positional numpy inputs, keyword arguments); every numpy op must be listed.
OP_CASES: dict[str, list[tuple[tuple[object, ...], dict[str, object]]]] = {
    "matmul": [((M, V), {}), ((M, M.T), {}), ((V, M.T), {}), ((V, V), {})],
    "mean": [((M,), {}), ((M,), {"axis": 0}), ((M,), {"axis": 1})],
    "sum": [((M,), {}), ((M,), {"axis": 0}), ((M,), {"axis": 1})],
    "reshape": [((M, (3, 4)), {}), ((M, (-1,)), {})],
    "sqrt": [((P,), {})],
    "exp": [((M,), {})],
    "log": [((P,), {})],
    "square": [((M,), {})],
    "abs": [((M,), {})],
    "maximum": [((M, P - 1.0), {}), ((M, 0.0), {})],
    "sigmoid": [((M,), {})],
    "logsumexp": [((M,), {}), ((M,), {"axis": 1}), ((M,), {"axis": 0})],
    "softmax": [((M,), {}), ((M,), {"axis": 0})],
    "ones_like": [((M,), {})],
    "zeros_like": [((M,), {})],
    "transpose": [((M,), {})],
    "concat": [(([M, P],), {}), (([M, P],), {"axis": 1})],
    "norm": [((M,), {}), ((V,), {})],
    "where": [((M > 0, M, P), {}), ((M > 0, M, 0.0), {})],
    "max": [((M,), {}), ((M,), {"axis": 0}), ((M,), {"axis": 1})],
    "min": [((M,), {}), ((M,), {"axis": 0}), ((M,), {"axis": 1})],
    "expm1": [((M * 1e-9,), {}), ((M,), {})],
    "log1p": [((M * 1e-9,), {}), ((P,), {})],
    "pow": [((P, M), {}), ((P, 2.0), {})],
    "power": [((P, 0.5), {})],
    "sign": [((M,), {}), ((np.array([np.nan, -0.0, 2.0]),), {})],
    "minimum": [((M, P - 1.0), {}), ((M, 0.0), {})],
    "clip": [((M,), {"min": -0.5, "max": 0.5}), ((M,), {"min": 0.0}), ((M,), {})],
    "tanh": [((M,), {})],
    "sin": [((M,), {})],
    "cos": [((M,), {})],
    "atan": [((M,), {}), ((np.array([-1e300, 0.0, 1e300]),), {})],
    # stable for large |x|: log(1 + e^800) = 800, log(1 + e^-800) = e^-800 (rounds to 0)
    "softplus": [((M,), {}), ((np.array([800.0, -800.0, 0.0, 30.0]),), {})],
    "logaddexp": [((M, P), {}), ((np.array([800.0, -800.0, 1.0]), 0.0), {}),
                  ((M, M), {}), ((np.array([np.inf, -np.inf, 3.0]),
                                  np.array([np.inf, -np.inf, -np.inf])), {})],
    "full_like": [((M, 2.5), {})],
    "permute_dims": [((M, (1, 0)), {})],
    "stack": [(([M, P],), {}), (([M, P],), {"axis": 1})],
    "vecdot": [((M, P), {}), ((V, V), {})],
    "size": [((M,), {}), ((V,), {})],
}


@pytest.mark.parametrize("name", FRAMEWORKS)
@pytest.mark.parametrize("op", ["softplus", "logaddexp"])
def test_log_sum_exp_ops_differentiate_exactly_at_ties_and_far_out(name, op):
    """d softplus(x)/dx = sigmoid(x), d logaddexp(a, b)/da = sigmoid(a - b): 1/2 at a tie."""
    be = get_backend(name)
    x = np.array([0.0, 1e-3, -2.0, 3.0, 40.0, -40.0, 800.0, -800.0])
    b = np.array([0.0, 1e-3, 1.0, 3.0, -1.0, 2.0, 0.0, 0.0])  # ties at 0 and 3
    with np.errstate(over="ignore"):
        want = (1.0 / (1.0 + np.exp(-x)) if op == "softplus"
                else 1.0 / (1.0 + np.exp(-(x - b))))
    f = (lambda o, t: o.sum(o.softplus(t))) if op == "softplus" else (
        lambda o, t: o.sum(o.logaddexp(t, o.reshape(be.asarray(b), (-1,)))))

    class P:  # the smallest "problem" a backend differentiates
        def objective(self, o, t, batch):
            return f(o, t)

    _, g = be.value_and_grad(P())(be.asarray(x), {})
    np.testing.assert_allclose(be.to_numpy(g), want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", ["numpy", *FRAMEWORKS])
def test_where_with_two_python_numbers_says_what_to_give(name):
    be = get_backend(name)
    x = be.asarray(np.array([1.0, -1.0]))
    with pytest.raises(TypeError, match="give at least one of the two values as an array"):
        be.ops.where(x > 0, 1.0, 0.0)
    np.testing.assert_array_equal(be.to_numpy(be.ops.where(x > 0, x, 0.0)), [1.0, 0.0])


def _convert(backend, a):
    if isinstance(a, np.ndarray):
        return backend.asarray(a)
    if isinstance(a, list):
        return [_convert(backend, v) for v in a]
    return a


def test_every_backend_defines_the_documented_ops():
    from optcmp.frameworks.ops import OPS

    assert set(vars(np_ops)) == set(OPS)


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_ops_namespace_has_numpy_names_and_values(name):
    be = get_backend(name)
    np_names = {k for k in vars(np_ops) if k != "name"}
    missing = np_names - set(vars(be.ops))
    assert not missing, f"{name} ops lack {sorted(missing)}"
    untested = np_names - set(OP_CASES)
    assert not untested, f"add OP_CASES for {sorted(untested)}"
    for op in sorted(np_names):
        for args, kw in OP_CASES[op]:
            want = getattr(np_ops, op)(*args, **kw)
            got = getattr(be.ops, op)(*(_convert(be, a) for a in args), **kw)
            np.testing.assert_allclose(be.to_numpy(got), want, rtol=1e-13, atol=1e-15,
                                       err_msg=f"{name}.ops.{op}{kw}")


@pytest.mark.parametrize("name", FRAMEWORKS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conversions_dtype_copy_and_rows(name, dtype):
    be = get_backend(name, dtype=dtype)
    assert be.describe() == {"backend": name, "device": "cpu", "dtype": dtype,
                             "framework_version": be.version}
    assert be.version[0].isdigit()
    a = np.arange(6.0).reshape(3, 2)
    t = be.asarray(a)
    assert str(be.to_numpy(t).dtype) == dtype
    ints = be.asarray(np.array([1, 2], dtype=np.int64))
    assert be.to_numpy(ints).dtype == np.int64
    # the backend copy never aliases the numpy source
    a[0, 0] = 99.0
    assert be.to_numpy(t)[0, 0] == 0.0
    data = be.place({"A": np.arange(10.0).reshape(5, 2), "y": np.arange(5.0)})
    idx = be.index_array(np.array([4, 0, 2]))
    rows = be.take_rows(data, idx)
    np.testing.assert_array_equal(be.to_numpy(rows["y"]), [4.0, 0.0, 2.0])
    np.testing.assert_array_equal(be.to_numpy(be.take_rows(data, slice(1, 3))["A"]),
                                  [[2.0, 3.0], [4.0, 5.0]])
    c = be.copy(t)
    np.testing.assert_array_equal(be.to_numpy(c), be.to_numpy(t))
    be.sync()  # no-op on the CPU


@pytest.mark.parametrize("name", FRAMEWORKS)
@pytest.mark.parametrize("device", ["cuda:7", "gpu:3"])
def test_absent_gpu_is_a_clear_error(name, device):
    with pytest.raises(ValueError) as err:
        get_backend(name, device=device)
    msg = str(err.value)
    assert device in msg and "available devices" in msg and "cpu" in msg.lower()


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_unknown_device_name(name):
    with pytest.raises(ValueError, match="tpu"):
        get_backend(name, device="tpu")


@needs_cuda
def test_torch_cuda_sync_and_placement():
    be = get_backend("torch", device="cuda")
    assert be.device.startswith("cuda")
    x = be.asarray(np.ones(3))
    assert x.device.type == "cuda"
    be.sync()


@pytest.mark.parametrize("name", FRAMEWORKS)
@pytest.mark.parametrize("make", [lr_a, lr_b], ids=["LR-A", "LR-B"])
def test_autodiff_gradient_equals_analytic(name, make):
    p = make()
    be = get_backend(name)
    vg = be.make_value_and_grad(p)
    data = be.place(p.train_data)
    rng = np.random.default_rng(1)
    for x in (np.zeros(p.n_params), rng.standard_normal(p.n_params), p.optimum().x + 0.01):
        f_np, g_np = p.value_and_grad(x, p.train_data)
        f, g = vg(be.asarray(x), data)
        assert float(be.to_numpy(f)) == pytest.approx(f_np, rel=1e-12)
        scale = np.max(np.abs(g_np))
        np.testing.assert_allclose(be.to_numpy(g), g_np, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_autodiff_gradient_multi_target(name):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50, 3))
    Y = X @ rng.standard_normal((3, 2)) + rng.standard_normal((50, 2))
    p = LinearRegression.from_arrays(X, Y)
    be = get_backend(name)
    x = rng.standard_normal(p.n_params)
    f_np, g_np = p.value_and_grad(x, p.train_data)
    f, g = be.make_value_and_grad(p)(be.asarray(x), be.place(p.train_data))
    assert float(be.to_numpy(f)) == pytest.approx(f_np, rel=1e-12)
    np.testing.assert_allclose(be.to_numpy(g), g_np, rtol=1e-12, atol=1e-14)
    hd = be.to_numpy(p.hess_diag(be.ops, be.asarray(x), be.place(p.train_data)))
    np.testing.assert_allclose(hd, p.hess_diag_numpy(), rtol=1e-13)


@needs_tf
def test_tf_step_traced_once_for_a_shorter_last_batch():
    from optcmp.optimizers.sgd import SGDRule

    p = lr_a()
    be = get_backend("tensorflow")
    rule = SGDRule()
    step = build_step(be, p, rule, {"learning_rate": 0.1, "momentum": 0.5, "nesterov": False})
    data = be.place(p.train_data)
    x = be.asarray(np.zeros(p.n_params))
    state = rule.init_state(be.ops, x)
    for a, b in [(0, 64), (64, 128), (960, 1000), (0, 64)]:  # last minibatch has 40 rows
        _, _, x, state = step(x, state, be.take_rows(data, slice(a, b)))
    assert step.tf_function.experimental_get_tracing_count() == 1


@needs_tf
def test_tf_value_and_grad_traced_once():
    p = lr_a()
    be = get_backend("tensorflow")
    vg = be.make_value_and_grad(p)
    data = be.place(p.train_data)
    for k in range(3):
        vg(be.asarray(np.full(p.n_params, float(k))), be.take_rows(data, slice(0, 10 + k)))
    assert vg.tf_function.experimental_get_tracing_count() == 1


@needs_tf
def test_tf_compiled_calls_take_the_flat_entry_and_return_what_the_function_returns(monkeypatch):
    """After the first call, a compiled call whose arguments are all tensors skips
    ``ConcreteFunction.__call__`` (its flat entry: the batch's keys out of sorted order, a
    state tuple, a None output come back as the function returns them); a numpy argument
    takes the usual entry. Both: ``x * z[0] - a[1]`` = [2.75, -4.25], the state (1.5, [4.5, -8])."""
    be = get_backend("tensorflow")

    def fn(x, state, batch):
        return None, x * batch["z"][0] - batch["a"][1], (state[0] + 1.0, state[1] * x)

    x = be.asarray(np.array([1.5, -2.0]))
    state = (be.asarray(np.array(0.5)), be.asarray(np.array([3.0, 4.0])))
    batch = {"z": be.asarray(np.array([2.0, 9.0])), "a": be.asarray(np.array([7.0, 0.25]))}
    call = be.compile(fn, (x, state, batch))
    call(x, state, batch)  # traced
    cls = type(call.tf_function.get_concrete_function())
    usual = []
    monkeypatch.setattr(cls, "__call__", lambda self, *a, **k: usual.append(1) or
                        cls._call_impl(self, a, k))
    for arg, entries in ((x, 0), (x.numpy(), 1)):
        none, y, (s0, s1) = call(arg, state, batch)
        assert none is None and len(usual) == entries
        np.testing.assert_array_equal(y.numpy(), [2.75, -4.25])
        np.testing.assert_array_equal(s0.numpy(), 1.5)
        np.testing.assert_array_equal(s1.numpy(), [4.5, -8.0])


@needs_tf
def test_tf_jit_compile_gives_the_same_iterates():
    from optcmp.frameworks.tensorflow.backend import TensorFlowBackend
    from optcmp.optimizers.adadelta import AdadeltaRule

    p = lr_a()
    hyper = {"learning_rate": 1.0, "rho": 0.9, "eps": 1e-6}
    out = []
    for jit in (False, True):
        be = TensorFlowBackend(jit_compile=jit)
        rule = AdadeltaRule()
        step = build_step(be, p, rule, hyper)
        data = be.place(p.train_data)
        x = be.asarray(np.zeros(p.n_params))
        state = rule.init_state(be.ops, x)
        for _ in range(20):
            _, _, x, state = step(x, state, data)
        out.append(be.to_numpy(x))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)


def test_missing_framework_names_the_extra(monkeypatch):
    import optcmp.frameworks as backends

    monkeypatch.setattr(backends, "is_available", lambda name: name == "numpy")
    with pytest.raises(BackendUnavailable) as info:  # optcmp is on no index: from a checkout
        backends.get_backend("torch")
    assert str(info.value) == ("backend 'torch' needs the 'torch' package, which is not "
                               "installed; install it with: pip install -c constraints/ci.txt "
                               "'.[torch]' in a checkout of optcmp")
    with pytest.raises(BackendUnavailable, match=r"'\.\[tensorflow\]' in a checkout"):
        backends.get_backend("tf")


def test_no_install_hint_names_a_package_index_optcmp_is_not_on():
    """Hints said pip install 'optcmp[torch]', which no index serves: every one installs the
    extra from a checkout (README's form), in the code, the docs and the examples."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [root / "README.md", *root.glob("docs/**/*.md"), *root.glob("optcmp/**/*.py"),
             *root.glob("examples/*.py"), *root.glob("scripts/*")]
    wrong = re.compile(r"pip install (-\S+ \S+ )?['\"]?optcmp\[")
    found = [f"{f.relative_to(root)}: {m.group(0)}" for f in files if f.is_file()
             for m in wrong.finditer(f.read_text(errors="replace"))]
    assert found == []
    assert "pip install -c constraints/ci.txt '.[torch,tensorflow,jax]'" in (
        root / "README.md").read_text()


def test_compare_records_missing_backend_as_skipped(monkeypatch):
    import optcmp
    import optcmp.frameworks as backends

    monkeypatch.setattr(backends, "is_available", lambda name: name == "numpy")
    p = lr_a()
    with pytest.warns(UserWarning, match="not installed"):
        cmp = optcmp.compare(p, [optcmp.gd(0.1)], backends=("numpy", "torch", "tensorflow"),
                             tol=1e-3, progress=False)
    by = {r.backend: r for r in cmp.runs}
    assert by["numpy"].status == "converged"
    for b, extra in (("torch", "torch"), ("tensorflow", "tensorflow")):
        assert by[b].status == "skipped"
        assert f"pip install -c constraints/ci.txt '.[{extra}]' in a checkout" in by[b].message
    with pytest.raises(BackendUnavailable):
        optcmp.compare(p, [optcmp.gd(0.1)], backends=("numpy", "torch"), tol=1e-3,
                       progress=False, strict=True)
    res = optcmp.check_equivalence(p, optcmp.gd(0.1), steps=3)
    assert res.backends == ["numpy"] and set(res.skipped) == {"torch", "tensorflow"}
    assert res.verdict == "inconclusive" and not res


@pytest.mark.skipif(not (HAS_TORCH or HAS_TF), reason="no framework installed")
def test_import_optcmp_loads_no_framework():
    code = textwrap.dedent("""
        import sys
        import optcmp
        from optcmp import check_equivalence
        import optcmp.optimizers, optcmp.equivalence
        heavy = [m for m in ("torch", "tensorflow", "keras") if m in sys.modules]
        assert not heavy, heavy
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("torch", marks=needs_torch),
                                     pytest.param("tensorflow", marks=needs_tf)])
def test_minibatch_steps_compute_no_gradient_norm(backend) -> None:
    # the timed step of a minibatch optimizer must not spend work on a norm nobody reads
    from optcmp.optimizers.gd import GDRule

    p = lr_a()
    be = get_backend(backend)
    data = be.place(p.train_data)
    x = be.asarray(np.zeros(p.n_params))
    with_norm = build_step(be, p, GDRule(), {"learning_rate": 0.1})
    without = build_step(be, p, GDRule(), {"learning_rate": 0.1}, grad_norm=False)
    f1, g1, x1, _ = with_norm(x, (), data)
    f2, g2, x2, _ = without(x, (), data)
    assert g2 is None and float(g1) > 0
    assert float(f1) == float(f2)
    np.testing.assert_array_equal(be.to_numpy(x1), be.to_numpy(x2))


@needs_tf
def test_tensorflow_retracing_warning_about_optcmp_functions_is_dropped_others_pass():
    # "5 out of the last 5 calls to <function TensorFlowBackend.value_and_grad.<locals>...>
    # triggered tf.function retracing ... define your @tf.function outside of the loop"
    # used to appear in the main job's output: each run traces its own function on purpose
    import logging

    get_backend("tensorflow")
    (flt,) = [f for f in logging.getLogger("tensorflow").filters
              if type(f).__name__ == "_OwnRetracingFilter"]

    def record(msg):
        return logging.LogRecord("tensorflow", logging.WARNING, __file__, 1, msg, None, None)

    ours = ("5 out of the last 5 calls to <function TensorFlowBackend.compile_block.<locals>."
            "block at 0x7f> triggered tf.function retracing. Tracing is expensive")
    loop = ("6 out of the last 6 calls to <function _minibatch_loop.<locals>.mini_block at "
            "0x7f> triggered tf.function retracing. Tracing is expensive")
    theirs = "5 out of the last 5 calls to <function f at 0x7f> triggered tf.function retracing."
    assert not flt.filter(record(ours)) and not flt.filter(record(loop))
    assert flt.filter(record(theirs))
    assert flt.filter(record("TensorFlowBackend. something else"))


@pytest.mark.parametrize("name", ["numpy", *FRAMEWORKS])
def test_full_like_keeps_a_python_float_exact_in_float64(name):
    """``full_like(a, 0.1)`` is the float64 0.1, not 0.1 rounded through float32 (TensorFlow's
    ``tf.cast`` of a Python float did that: 0.10000000149011612)."""
    b = get_backend(name)
    out = b.to_numpy(b.ops.full_like(b.asarray(np.zeros(3)), 0.1))
    assert out.dtype == np.float64 and np.all(out == 0.1)


def test_numpy_sigmoid_is_expit_for_every_input_kind():
    """numpy's sigmoid gives ``scipy.special.expit``'s values (to rounding) and float dtype for
    integers (unsigned and signed, with ``out=`` too), booleans, lists, scalars and the
    extremes, raises no floating-point error, and leaves an integer input it cannot write
    into as it was (a uint8 with ``out=`` once gave 1.8e-111 for expit(1) = 0.731)."""
    from scipy.special import expit

    from optcmp.frameworks.numpy.ops import sigmoid

    for a in ([0.0, 1.0], 2.0, np.array(2.0), np.array([True, False]), np.int8([-128, 127]),
              np.uint8([1, 2, 200]), np.array([-800.0, 800.0, 0.0, 1e308, -1e308, np.inf])):
        with np.errstate(all="raise"):
            got = sigmoid(a)
            into = sigmoid(a, out=np.zeros(np.shape(a)))
        np.testing.assert_allclose(got, expit(a), rtol=1e-15)
        np.testing.assert_allclose(into, expit(a), rtol=1e-15)
        assert np.asarray(got).dtype == np.asarray(expit(a)).dtype
    ai = np.array([-1, 0, 1])
    with pytest.raises(TypeError):
        sigmoid(ai, out=ai)
    np.testing.assert_array_equal(ai, [-1, 0, 1])


def test_numpy_row_logsumexp_and_row_sum_are_scipys_and_numpys_to_the_bit():
    """The FizzBuzz cross-entropy's row logsumexp equals ``scipy.special.logsumexp(Z, axis=1,
    keepdims=True)`` and its row sum ``np.sum(Z, axis=1)`` bit for bit (value, sign of zero,
    dtype), rows with ties, infinities, NaN and all -inf included; rows of 8 or more columns,
    float16, complex and byte-swapped arrays go to scipy and numpy (a float16 row summed in
    float16 gave 1.0 where numpy's sum is 1.001)."""
    from scipy.special import logsumexp

    from optcmp.frameworks.numpy.ops import row_logsumexp, row_sum

    rng = np.random.default_rng(0)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    for trial in range(600):
        k, n = int(rng.integers(1, 10)), int(rng.integers(1, 40))
        Z = rng.standard_normal((n, k)) * np.exp(rng.uniform(-5, 6))
        Z = Z.astype((np.float64, np.float32)[trial % 2])
        Z[rng.integers(n)] = Z[rng.integers(n), 0]  # a row of ties
        Z.flat[rng.integers(Z.size, size=2)] = rng.choice(special, 2)
        if trial % 5 == 0:
            Z[rng.integers(n)] = rng.choice(special[:3])
        if trial % 7 == 0:
            Z = np.round(Z)
        with np.errstate(all="ignore"):
            want, got = logsumexp(Z, axis=1, keepdims=True), row_logsumexp(Z)
            total, summed = row_sum(Z), np.sum(Z, axis=1)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want, equal_nan=True), Z
        assert np.array_equal(np.signbit(got), np.signbit(want))
        assert total.dtype == Z.dtype and np.array_equal(total, summed, equal_nan=True)
        assert np.array_equal(np.signbit(total), np.signbit(summed))
    # numpy sums float16 in float32 and complex rows pairwise; -0.0 alone sums to +0.0
    odd = [np.array([[1, 2**-11, 2**-11]], np.float16), np.array([[-0.0, -0.0]]),
           np.array([[-0.0]]), np.array([[0.1 + 0.2j, 0.3 + 0.1j, 0.7 - 0.3j, 1e-17 + 1e-17j]]),
           np.array([[-1.922, -0.3271, 2.553, 1.551, 0.5444, 0.3896, 0.945]], np.float16),
           np.array([[1.0, 2.0, 3.0]], ">f8")]
    for Z in odd:
        assert np.array_equal(row_sum(Z), np.sum(Z, axis=1))
        assert np.array_equal(np.signbit(row_sum(Z).real), np.signbit(np.sum(Z, axis=1).real))
        assert row_sum(Z).dtype == np.sum(Z, axis=1).dtype
        want = logsumexp(Z, axis=1, keepdims=True)
        assert np.array_equal(row_logsumexp(Z), want) and row_logsumexp(Z).dtype == want.dtype
