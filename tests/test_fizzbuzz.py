"""FizzBuzzMLP: data, initialization, objective, analytic gradient, Gauss-Newton diagonal."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_cuda

import optcmp
from optcmp.frameworks import BackendUnavailable, get_backend, is_available
from optcmp.frameworks.numpy.ops import ops as np_ops
from optcmp.problems import PROBLEMS, FizzBuzzMLP
from optcmp.problems.fizzbuzz_data import CLASSES, binary_encode, fizzbuzz_labels
from optcmp.stopping import LossTarget

LOSSES = ("mse", "mse_sum", "cross_entropy")


def backend_or_skip(name: str, dtype: str = "float64"):
    """The backend, or a skip when its framework or its optcmp module is missing."""
    if not is_available(name):
        pytest.skip(f"{name} is not installed")
    try:
        return get_backend(name, dtype=dtype)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))


def small(loss: str = "mse", **kw) -> tuple[FizzBuzzMLP, np.ndarray, dict[str, np.ndarray]]:
    p = FizzBuzzMLP(hidden=6, loss=loss, init="glorot_uniform", **kw)
    x = p.init_params(1)
    batch = {k: v[:24] for k, v in p.train_data.items()}
    return p, x, batch


# ---------------------------------------------------------------------- data
def test_binary_encoding_msb_first():
    X = binary_encode([0, 1, 2, 5, 512, 999, 1023], 10)
    assert X.shape == (7, 10) and X.dtype == np.float64
    np.testing.assert_array_equal(X[0], np.zeros(10))
    np.testing.assert_array_equal(X[1], [0] * 9 + [1])
    np.testing.assert_array_equal(X[2], [0] * 8 + [1, 0])
    np.testing.assert_array_equal(X[3], [0] * 7 + [1, 0, 1])
    np.testing.assert_array_equal(X[4], [1] + [0] * 9)
    np.testing.assert_array_equal(X[5], [int(c) for c in format(999, "010b")])
    np.testing.assert_array_equal(X[6], np.ones(10))
    # decoding the digits gives the numbers back
    np.testing.assert_array_equal(X @ (2 ** np.arange(9, -1, -1)), [0, 1, 2, 5, 512, 999, 1023])


def test_binary_encoding_rejects_numbers_that_do_not_fit():
    with pytest.raises(ValueError, match="1024 does not fit in n_bits=10"):
        binary_encode([3, 1024], 10)
    with pytest.raises(ValueError, match="non-negative"):
        binary_encode([-1], 10)
    with pytest.raises(ValueError, match="does not fit in n_bits=10"):
        FizzBuzzMLP(high=1025)
    assert FizzBuzzMLP(high=1025, n_bits=11).train_data["X"].shape[1] == 11


def test_labels_and_class_counts():
    np.testing.assert_array_equal(fizzbuzz_labels([0, 1, 3, 5, 6, 10, 15, 30, 7, 999]),
                                  [0, 3, 2, 1, 2, 1, 0, 0, 3, 2])
    assert CLASSES == ("fizzbuzz", "buzz", "fizz", "number")
    p = FizzBuzzMLP()
    np.testing.assert_array_equal(p.class_counts("all"), [67, 133, 267, 533])  # the class priors
    assert p.n_samples == 900 and p.test_labels.size == 100
    np.testing.assert_array_equal(p.class_counts("train") + p.class_counts("test"),
                                  [67, 133, 267, 533])
    # one-hot targets agree with the integer labels and the numbers
    np.testing.assert_array_equal(np.argmax(p.train_data["Y"], axis=1), p.train_labels)
    np.testing.assert_array_equal(p.train_data["Y"].sum(axis=1), np.ones(900))
    np.testing.assert_array_equal(fizzbuzz_labels(p.train_numbers), p.train_labels)
    np.testing.assert_array_equal(binary_encode(p.train_numbers, 10), p.train_data["X"])


def test_split_is_a_seeded_partition():
    a, b, c = FizzBuzzMLP(seed=0), FizzBuzzMLP(seed=0), FizzBuzzMLP(seed=1)
    np.testing.assert_array_equal(a.train_numbers, b.train_numbers)
    assert not np.array_equal(a.train_numbers, c.train_numbers)
    both = np.concatenate([a.train_numbers, a.test_numbers])
    np.testing.assert_array_equal(np.sort(both), np.arange(1000))
    perm = np.random.default_rng(0).permutation(1000)
    np.testing.assert_array_equal(a.test_numbers, np.sort(perm[:100]))
    np.testing.assert_array_equal(a.train_numbers, perm[100:])


def test_range_options():
    p = FizzBuzzMLP(n_max=99, n_bits=7, test_fraction=0.2)
    assert sorted(np.concatenate([p.train_numbers, p.test_numbers]).tolist()) == list(range(100))
    assert p.n_samples == 80
    q = FizzBuzzMLP(low=100, high=200, n_bits=8, test_fraction=0.0)
    assert q.n_samples == 100 and q.test_labels.size == 0
    assert set(q.metrics(q.init_params(0))) == {"train_accuracy"}
    assert FizzBuzzMLP(low=0, high=1000).spec() == FizzBuzzMLP().spec()


@pytest.mark.parametrize("kwargs, match", [
    ({"loss": "mae"}, "loss must be one of"),
    ({"init": "zeros"}, "init must be one of"),
    ({"hidden": 0}, "hidden must be an integer >= 1"),
    ({"n_bits": 0}, "n_bits must be an integer >= 1"),
    ({"low": 10, "high": 10}, "empty"),
    ({"n_max": 10, "high": 10}, "n_max or high"),
    ({"test_fraction": 1.0}, r"test_fraction must be in \[0, 1\)"),
    ({"n_max": 0, "n_bits": 1, "test_fraction": 0.6}, "leaves no training rows"),
    ({"init_std": 0.0}, "init_std must be a finite float > 0"),
    ({"init": "glorot_uniform", "init_std": 0.1}, "init_std applies to"),
    ({"damping": 0.0}, "damping must be a finite float > 0"),
    ({"target_loss": -1.0}, "target_loss must be a finite float > 0"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FizzBuzzMLP(**kwargs)


def test_rebuilt_from_its_spec():
    from optcmp.problems import problem_from_spec, rebuildable

    p = FizzBuzzMLP(hidden=7, loss="cross_entropy", init="glorot_uniform", n_max=499, n_bits=9,
                    seed=3)
    assert rebuildable(p)
    q = problem_from_spec(p.spec())
    assert isinstance(q, FizzBuzzMLP) and q.spec() == p.spec()
    np.testing.assert_array_equal(q.train_data["X"], p.train_data["X"])
    np.testing.assert_array_equal(q.init_params(5), p.init_params(5))


def test_registered_and_layout():
    assert PROBLEMS["fizzbuzz"] is FizzBuzzMLP
    p = FizzBuzzMLP()
    assert p.layout.names == ("W1", "b1", "W2", "b2")
    assert p.layout.shapes == ((10, 100), (100,), (100, 4), (4,))
    assert p.n_params == 1504
    assert p.optimum() is None and p.hess_diag_is_constant is False
    assert p.reduction == "mean" and FizzBuzzMLP(loss="mse_sum").reduction == "sum"
    with pytest.raises(NotImplementedError, match="learning_rate as a positive float"):
        p.lipschitz()


# ---------------------------------------------------------------------- initialization
def test_initializations():
    p = FizzBuzzMLP()
    x = p.init_params(7)
    w = p.layout.unflatten(x)
    np.testing.assert_array_equal(w["b1"], 0.0)
    np.testing.assert_array_equal(w["b2"], 0.0)
    rng = np.random.default_rng(7)  # W1 then W2, standard normal (the story's numpy)
    np.testing.assert_array_equal(w["W1"], rng.standard_normal((10, 100)))
    np.testing.assert_array_equal(w["W2"], rng.standard_normal((100, 4)))
    np.testing.assert_array_equal(p.init_params(7), x)
    assert not np.array_equal(p.init_params(8), x)

    t = FizzBuzzMLP(init="truncated_normal").init_params(0)
    wt = np.concatenate([t[:1000], t[1100:1500]])
    assert np.max(np.abs(wt)) <= 0.02  # redrawn beyond 2 std
    # std of N(0, 0.01^2) truncated at 2 std is 0.01 * 0.8796
    assert abs(np.std(wt) / 0.01 - 0.8796) < 0.05

    g = FizzBuzzMLP(init="glorot_uniform")
    wg = g.layout.unflatten(g.init_params(0))
    lim1, lim2 = np.sqrt(6 / 110), np.sqrt(6 / 104)  # Keras' Glorot bounds: 0.2335 and 0.2402
    assert round(lim1, 4) == 0.2335 and round(lim2, 4) == 0.2402
    assert np.max(np.abs(wg["W1"])) <= lim1 and np.max(np.abs(wg["W1"])) > 0.95 * lim1
    assert np.max(np.abs(wg["W2"])) <= lim2 and np.max(np.abs(wg["W2"])) > 0.9 * lim2

    s = FizzBuzzMLP(init="normal", init_std=0.1)
    np.testing.assert_allclose(s.init_params(3), 0.1 * p.init_params(3), rtol=0, atol=0)


# ---------------------------------------------------------------------- objective and gradient
@pytest.mark.parametrize("loss", LOSSES)
def test_objective_matches_value_and_grad(loss):
    p, x, batch = small(loss)
    f, _ = p.value_and_grad(x, batch)
    assert abs(float(p.objective(np_ops, x, batch)) - f) <= 1e-15 * abs(f)


def test_losses_by_hand():
    p, x, batch = small("mse")
    w = p.layout.unflatten(x)
    H = 1 / (1 + np.exp(-(batch["X"] @ w["W1"] + w["b1"])))
    Z = H @ w["W2"] + w["b2"]
    out = 1 / (1 + np.exp(-Z))
    se = (out - batch["Y"]) ** 2
    assert p.value_and_grad(x, batch)[0] == pytest.approx(se.mean(), rel=1e-14)
    ps = FizzBuzzMLP(hidden=6, loss="mse_sum", init="glorot_uniform")
    assert ps.value_and_grad(x, batch)[0] == pytest.approx(se.sum(), rel=1e-14)
    pc = FizzBuzzMLP(hidden=6, loss="cross_entropy", init="glorot_uniform")
    P = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    ce = -np.mean(np.log(np.sum(P * batch["Y"], axis=1)))
    assert pc.value_and_grad(x, batch)[0] == pytest.approx(ce, rel=1e-13)


def test_cross_entropy_is_stable_for_huge_logits():
    p, x, batch = small("cross_entropy")
    x = x.copy()
    x[-4:] = [800.0, 0.0, 0.0, -800.0]  # b2: exp would overflow
    f, g = p.value_and_grad(x, batch)
    assert np.isfinite(f) and np.all(np.isfinite(g))
    assert float(p.objective(np_ops, x, batch)) == pytest.approx(f, rel=1e-14)


@pytest.mark.parametrize("loss", LOSSES)
def test_gradient_matches_finite_differences(loss):
    p, x, batch = small(loss)
    _, g = p.value_and_grad(x, batch)
    eps = 1e-6
    fd = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        fd[i] = (p.value_and_grad(x + e, batch)[0] - p.value_and_grad(x - e, batch)[0]) / (2 * eps)
    assert np.max(np.abs(fd - g)) <= 1e-7 * np.max(np.abs(g))


def test_float32_in_float32_out():
    p = FizzBuzzMLP()
    x = p.init_params(0).astype(np.float32)
    batch = {k: v.astype(np.float32) for k, v in p.train_data.items()}
    f, g = p.value_and_grad(x, batch)
    assert g.dtype == np.float32 and isinstance(f, float)
    assert p.hess_diag(np_ops, x, batch).dtype == np.float32
    f64, g64 = p.value_and_grad(x.astype(np.float64), p.train_data)
    assert f == pytest.approx(f64, rel=1e-5)
    assert np.max(np.abs(g - g64)) <= 1e-4 * np.max(np.abs(g64))


# ---------------------------------------------------------------------- Gauss-Newton diagonal
def _outputs(p: FizzBuzzMLP, x: np.ndarray, X: np.ndarray) -> np.ndarray:
    w = p.layout.unflatten(x)
    H = 1 / (1 + np.exp(-(X @ w["W1"] + w["b1"])))
    Z = H @ w["W2"] + w["b2"]
    return Z if p.loss == "cross_entropy" else 1 / (1 + np.exp(-Z))


@pytest.mark.parametrize("loss", LOSSES)
def test_hess_diag_is_the_gauss_newton_diagonal(loss):
    """Brute force: diag(sum_i J_i^T H_L,i J_i) with J_i from central differences."""
    p, x, batch = small(loss)
    X = batch["X"]
    n = X.shape[0]
    eps = 1e-6
    J = np.empty((x.size, n, 4))
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        J[i] = (_outputs(p, x + e, X) - _outputs(p, x - e, X)) / (2 * eps)
    if loss == "cross_entropy":
        Z = _outputs(p, x, X)
        P = np.exp(Z - Z.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        HL = (np.einsum("ik,kl->ikl", P, np.eye(4)) - np.einsum("ik,il->ikl", P, P)) / n
    else:
        c = 2.0 if loss == "mse_sum" else 2.0 / (4 * n)
        HL = np.broadcast_to(c * np.eye(4), (n, 4, 4))
    G = np.einsum("pik,ikl,pil->p", J, HL, J)
    h = p.hess_diag(np_ops, x, batch)
    assert np.all(h > 0)
    np.testing.assert_allclose(h - p.damping, G, rtol=0, atol=1e-8 * np.max(G))
    assert np.max(np.abs(h - p.damping - G)) <= 1e-7 * np.max(G)


def test_hess_diag_damping_keeps_it_positive():
    # numbers 0..7 in 5 bits: the two leading bits are 0 on every row, so the undamped
    # Gauss-Newton diagonal of their W1 rows is exactly 0; the damping is what is left.
    p = FizzBuzzMLP(hidden=3, low=0, high=8, n_bits=5, test_fraction=0.0, damping=1e-5)
    h = p.hess_diag(np_ops, p.init_params(0), p.train_data)
    W1 = h[:15].reshape(5, 3)
    np.testing.assert_array_equal(W1[:2], 1e-5)
    assert np.all(W1[2:] > 1e-5)


# ---------------------------------------------------------------------- targets and metrics
def test_class_prior_plateau_values_of_each_loss():
    full = FizzBuzzMLP(test_fraction=0.0)
    assert full.plateau_loss() == pytest.approx(0.155611, abs=5e-7)
    xp = full.plateau_params()
    assert full.fun64(xp) == pytest.approx(0.155611, abs=5e-7)
    s = FizzBuzzMLP(loss="mse_sum", test_fraction=0.0)
    assert s.fun64(xp) / 1000 == pytest.approx(0.622444, abs=5e-7)
    assert s.plateau_loss() / 1000 == pytest.approx(0.622444, abs=5e-7)
    assert full.metrics(xp) == {"train_accuracy": pytest.approx(0.533, abs=1e-12)}
    ce = FizzBuzzMLP(loss="cross_entropy", test_fraction=0.0)
    prior = np.array([0.067, 0.133, 0.267, 0.533])
    assert ce.fun64(ce.plateau_params()) == pytest.approx(-np.sum(prior * np.log(prior)), rel=1e-12)


def test_default_target_is_below_the_plateau():
    p = FizzBuzzMLP()
    t = p.default_target(1e-6)
    assert isinstance(t, LossTarget) and t.value == pytest.approx(0.1 * p.plateau_loss())
    assert t.value < p.plateau_loss() / 5
    assert FizzBuzzMLP(target_loss=0.05).default_target().value == 0.05
    rule = optcmp.make_stopping(p, max_iter=10)
    assert any(isinstance(r, LossTarget) for r in rule.rules())


def test_metrics():
    p = FizzBuzzMLP()
    x = p.init_params(0)
    m = p.metrics(x)
    assert set(m) == {"train_accuracy", "test_accuracy", "test_loss"}
    pred = p.predict(x, p.train_data["X"])
    assert m["train_accuracy"] == np.mean(pred == p.train_labels)
    assert m["test_loss"] == pytest.approx(p.value_and_grad(x, p.test_data)[0], rel=1e-15)


# ---------------------------------------------------------------------- autodiff backends
@pytest.mark.parametrize("backend", ["torch", "tensorflow"])
@pytest.mark.parametrize("loss", LOSSES)
def test_autodiff_matches_analytic_gradient(backend, loss):
    be = backend_or_skip(backend)
    p = FizzBuzzMLP(loss=loss)
    x = p.init_params(3)
    f, g = p.value_and_grad(x, p.train_data)
    data = be.place(p.train_data)
    fb, gb = be.make_value_and_grad(p)(be.asarray(x), data)
    gb = be.to_numpy(gb)
    assert abs(float(be.to_numpy(fb)) - f) <= 1e-12 * abs(f)
    assert np.max(np.abs(gb - g)) <= 1e-10 * np.max(np.abs(g))
    hb = be.to_numpy(p.hess_diag(be.ops, be.asarray(x), data))
    np.testing.assert_allclose(hb, p.hess_diag(np_ops, x, p.train_data), rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["torch", "tensorflow"])
@pytest.mark.parametrize("loss", LOSSES)
def test_declared_gradient_equals_autodiff(backend, loss):
    """The backpropagation written against ops equals the framework's autodiff to 1e-12
    (objective and gradient, the whole training set and a minibatch, without the value too)."""
    be = backend_or_skip(backend)
    p = FizzBuzzMLP(loss=loss)
    x = p.init_params(3) + 0.3 * np.random.default_rng(0).normal(size=p.n_params)
    rows = np.arange(5, 69)
    for batch in (p.train_data, {k: v[rows] for k, v in p.train_data.items()}):
        data = be.place(batch)
        fa, ga = be.make_value_and_grad(p, "analytic")(be.asarray(x), data)
        fd, gd = be.make_value_and_grad(p, "autodiff")(be.asarray(x), data)
        ga, gd = be.to_numpy(ga), be.to_numpy(gd)
        fd = float(be.to_numpy(fd))
        assert abs(float(be.to_numpy(fa)) - fd) <= 1e-12 * abs(fd)
        assert np.max(np.abs(ga - gd)) <= 1e-12 * np.max(np.abs(gd))
        f_np, g_np = p.value_and_grad(x, batch)
        assert abs(fd - f_np) <= 1e-12 * abs(f_np)
        assert np.max(np.abs(ga - g_np)) <= 1e-12 * np.max(np.abs(g_np))
        none, g_only = p.gradient_ops(be.ops, be.asarray(x), data, value=False)
        assert none is None
        # eager here, compiled above (XLA may reorder sums)
        assert np.max(np.abs(be.to_numpy(g_only) - ga)) <= 1e-12 * np.max(np.abs(ga))


# ---------------------------------------------------------------------- runs
def test_gd_and_sgd_without_learning_rate_are_skipped_with_the_reason():
    p = FizzBuzzMLP()
    r = optcmp.run(p, optcmp.gd, max_iter=5)
    assert r.status == "skipped" and not r.success and r.nit == 0
    assert "learning_rate" in r.message and "positive float" in r.message
    comp = optcmp.compare(p, [optcmp.sgd(), optcmp.sgd(learning_rate=1.0)], max_iter=3,
                          progress=False)
    assert [x.status for x in comp] == ["skipped", "max_iter"]
    assert "learning_rate" in comp[0].message
    assert "skipped" in comp.table() and "learning_rate" in comp.table()


def test_every_optimizer_runs_on_numpy():
    p = FizzBuzzMLP()
    specs = [optcmp.gd(learning_rate=10.0), optcmp.diag_newton(learning_rate=10.0),
             optcmp.adadelta(), optcmp.sgd(learning_rate=2.56), optcmp.lbfgs()]
    comp = optcmp.compare(p, specs, max_iter=20, progress=False)
    assert [r.status for r in comp] == ["max_iter"] * 5
    for r in comp:
        assert r.fun < r.f0 and r.identity.reduction == "mean" and r.fstar is None
        assert set(r.metrics) == {"train_accuracy", "test_accuracy", "test_loss"}
    table = comp.table()
    assert "loss" in table.splitlines()[0] and "train acc" in table and "test acc" in table


@needs_cuda
def test_cuda_gradient_and_sgd_steps_match_numpy():
    """On a GPU: autodiff gradient and 20 SGD steps (native torch.optim.SGD) agree with numpy."""
    p = FizzBuzzMLP()
    x = p.init_params(0)
    be = get_backend("torch", device="cuda")
    _, g = be.make_value_and_grad(p)(be.asarray(x), be.place(p.train_data))
    _, g64 = p.value_and_grad(x, p.train_data)
    assert np.max(np.abs(be.to_numpy(g) - g64)) <= 1e-10 * np.max(np.abs(g64))
    from optcmp.equivalence import check_equivalence

    res = check_equivalence(p, optcmp.sgd(learning_rate=2.56), backends=("numpy", "torch"),
                            steps=20, device="cuda", impl="native")
    assert res.max_rel_diff <= 1e-9, str(res)


# ---------------------------------------------------------------- the story's exact settings
def test_batch_order_drop_last_gives_the_storys_14_batches():
    from optcmp.batching import BatchOrder

    assert BatchOrder(900, 64, True, 0).steps_per_epoch == 15  # 14 x 64 + one batch of 4
    order = BatchOrder(900, 64, True, 0, drop_last=True)
    assert order.steps_per_epoch == 14
    sizes = [len(order.batch_indices(k)) for k in range(28)]
    assert sizes == [64] * 28  # no short batch, in epoch 0 or 1
    # step 14 starts epoch 1 with that epoch's permutation; its first rows are epoch 1's
    assert np.array_equal(order.batch_indices(14), order.epoch_indices(1)[:64])
    seen = np.concatenate([order.batch_indices(k) for k in range(14)])
    assert seen.size == 896 and np.unique(seen).size == 896  # 4 rows left out of epoch 0
    assert BatchOrder(896, 64, False, 0, drop_last=True).steps_per_epoch == 14  # divides
    with pytest.raises(ValueError, match=r"batch_size must be in \[1, n_samples=50\], got 64"):
        BatchOrder(50, 64, False, 0, drop_last=True)  # no longer capped at n silently


def test_fizzbuzz_drop_last_runs_14_steps_per_epoch_and_is_recorded():
    p = FizzBuzzMLP(drop_last=True)
    assert p.n_samples == 900 and p.spec()["drop_last"] is True
    assert FizzBuzzMLP.from_spec(p.spec()).drop_last is True
    r = optcmp.run(p, optcmp.sgd(learning_rate=2.56, batch_size=64), max_iter=42,
                       max_time=None, threads=1)
    assert r.problem_spec["drop_last"] is True
    assert list(r.trace.iteration) == [0, 14, 28, 42]  # evaluated once per 14-step epoch
    full = optcmp.run(FizzBuzzMLP(), optcmp.sgd(learning_rate=2.56, batch_size=64),
                          max_iter=45, max_time=None, threads=1)
    assert full.problem_spec["drop_last"] is False
    assert list(full.trace.iteration) == [0, 15, 30, 45]
    # the first 14 steps are the same batches, so the iterates part only at step 15 / epoch 1
    a = optcmp.run(p, optcmp.sgd(learning_rate=2.56, batch_size=64), max_iter=14,
                       max_time=None, threads=1)
    b = optcmp.run(FizzBuzzMLP(), optcmp.sgd(learning_rate=2.56, batch_size=64),
                       max_iter=14, max_time=None, threads=1)
    assert np.array_equal(a.x, b.x)
    with pytest.raises(ValueError, match="drop_last must be True or False"):
        FizzBuzzMLP(drop_last="yes")  # type: ignore[arg-type]


def test_init_std_gives_the_storys_scales():
    x1 = FizzBuzzMLP(init="normal", init_std=1.0).init_params(0)
    x001 = FizzBuzzMLP(init="normal", init_std=0.01).init_params(0)
    # same draws, scaled: the well-known TensorFlow FizzBuzz's tf.random_normal(stddev=0.01)
    np.testing.assert_allclose(x001, 0.01 * x1, rtol=0, atol=0)
    assert FizzBuzzMLP(init="truncated_normal").init_std == 0.01
    assert FizzBuzzMLP(init="truncated_normal", init_std=1.0).init_std == 1.0
    assert FizzBuzzMLP().init_std == 1.0


@pytest.mark.parametrize("loss", ["mse", "mse_sum", "cross_entropy"])
@pytest.mark.parametrize("x_dtype, x_data, y_data", [
    ("float64", "float64", "float64"), ("float32", "float32", "float32"),
    ("float32", "float32", "float64"), ("float64", "float32", "float64")])
def test_reused_work_arrays_give_the_plain_evaluation_bit_for_bit(loss, x_dtype, x_data, y_data,
                                                                  monkeypatch):
    """The whole-data evaluation reuses per-thread work arrays; every mix of dtypes gives the
    bits of the evaluation that allocates its arrays (a float32 work array once rounded a
    float64 product)."""
    from optcmp.problems import _scratch

    p = FizzBuzzMLP(loss=loss)
    d = p.train_data
    x = (np.random.default_rng(0).normal(size=p.n_params) * 0.3).astype(x_dtype)
    batch = {"X": d["X"].astype(x_data), "Y": d["Y"].astype(y_data)}
    f_work, g_work = p.value_and_grad(x, batch)
    f_work2, g_work2 = p.value_and_grad(x, batch)  # the same arrays again
    monkeypatch.setattr(_scratch, "MIN_ELEMENTS", 1 << 60)
    f_plain, g_plain = p.value_and_grad(x, batch)
    assert f_work == f_plain == f_work2
    assert g_work.dtype == g_plain.dtype
    np.testing.assert_array_equal(g_work, g_plain)
    np.testing.assert_array_equal(g_work2, g_plain)


@pytest.mark.parametrize("loss", ["mse", "mse_sum", "cross_entropy"])
def test_own_data_evaluated_with_the_bias_as_a_row_of_weights_is_the_plain_evaluation(loss):
    """The problem's own training inputs are evaluated as ``[X, 1] @ [W1; b1]``; value and
    gradient agree with those of a copy of the same arrays (``X @ W1 + b1``) to rounding, and
    the judge ``fun64`` gives ``value_and_grad``'s value to the bit."""
    p = FizzBuzzMLP(loss=loss)
    x = np.random.default_rng(1).normal(size=p.n_params) * 0.3
    data = p.train_data
    f_own, g_own = p.value_and_grad(x, data)
    f_copy, g_copy = p.value_and_grad(x, {k: v.copy() for k, v in data.items()})
    assert f_own == pytest.approx(f_copy, rel=1e-14)
    np.testing.assert_allclose(g_own, g_copy, rtol=1e-12, atol=1e-15 * np.max(np.abs(g_copy)))
    assert p._ones.shape == (p.n_samples, p.n_bits + 1)
    assert p.fun64(x) == p.value_and_grad(x, p.train_data)[0]
