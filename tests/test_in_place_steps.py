"""The in-place update paths and reused work arrays make the iterates of the functional ones,
bit for bit, and each run records the path it took."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import HAS_TORCH, lr_a

import optcmp
from optcmp.problems import FizzBuzzMLP, LinearRegression


@pytest.mark.parametrize(("spec", "path"), [
    (optcmp.sgd(0.05, batch_size=64), "in-place"),
    (optcmp.sgd(0.05, batch_size=100, shuffle=False), "in-place"),
    (optcmp.sgd(0.02, batch_size=64, momentum=0.9), "functional"),
    (optcmp.sgd(0.05, batch_size=64, schedule="cosine(total_steps=500)"), "functional"),
    (optcmp.adam(0.01, batch_size=64), "functional")],
    ids=["sgd", "sgd-unshuffled", "momentum", "schedule", "adam"])
def test_numpy_fused_minibatch_steps_in_place_are_the_functional_steps(spec, path):
    """numpy's fused blocks of SGD without momentum, schedule or clipping update the iterate in
    place (``x -= lr * g`` into reused arrays); 700 steps of lr_a (several epochs, the shorter
    last minibatch) end at the iterate and objectives of one functional step per call."""
    p = lr_a()
    runs = [optcmp.run(p, spec, backend="numpy", execution=ex, threads=1, max_iter=700,
                       tol=1e-12, max_time=None, eval_every=50) for ex in ("step", "fused")]
    a, b = runs
    assert a.nit == b.nit == 700 and b.conditions.execution == "fused"
    np.testing.assert_array_equal(b.x, a.x)
    np.testing.assert_array_equal(b.trace.fun, a.trace.fun)
    assert (a.conditions.update_path, b.conditions.update_path) == ("functional", path)
    assert b.conditions.gather == "once per chunk of 16384 rows"


def test_a_full_batch_run_records_no_gather():
    """Full-batch GD takes no rows: ``gather`` is empty and left out of the record."""
    r = optcmp.run(lr_a(), optcmp.gd("auto"), backend="numpy", threads=1, max_iter=3)
    assert r.conditions.gather == "" and "gather" not in r.to_dict()
    assert r.conditions.update_path == "functional"


def test_numpy_gradient_on_a_reused_residual_is_the_same_gradient():
    """The full-data gradient of 20,000 rows (its residual in a reused work array) equals, bit
    for bit, the same formula on new arrays, on C- and Fortran-ordered data, call after call."""
    p = LinearRegression(n_samples=20_000, seed=4)
    x = np.random.default_rng(0).standard_normal(p.n_params)
    for order in ("C", "F"):
        A, y = np.asarray(p.train_data["A"], order=order), p.train_data["y"]
        r = A @ x - y
        want_f, want_g = float(np.vdot(r, r)) / r.size, (A.T @ r) * (2.0 / r.size)
        for _ in range(2):
            f, g = p.value_and_grad(x, {"A": A, "y": y})
            assert f == want_f
            np.testing.assert_array_equal(g, want_g)


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_torch_gradient_into_a_reused_residual_is_gradient_ops():
    """``gradient_into`` (the residual written into a kept tensor) returns, bit for bit, what
    ``gradient_ops`` returns on 30,000 rows, for two iterates in a row."""
    import torch

    o = optcmp.get_backend("torch").ops
    p = LinearRegression(n_samples=30_000, seed=2)
    batch = {k: torch.tensor(v) for k, v in p.train_data.items()}
    work: dict = {}
    for seed in (0, 1):
        x = torch.tensor(np.random.default_rng(seed).standard_normal(p.n_params))
        f0, g0 = p.gradient_ops(o, x, batch)
        f1, g1 = p.gradient_into(o, x, batch, work)
        assert float(f0) == float(f1)
        assert torch.equal(g0, g1)
    assert work["r"].shape == batch["y"].shape


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_torch_residual_is_the_host_evaluations_work_array():
    """A torch GD run's residual on 30,000 rows is the host evaluation's work array (one array
    of the data's size, not two), and a host evaluation between two steps leaves the steps'
    values and gradients bit for bit those of ``gradient_ops``."""
    import torch

    from optcmp.frameworks.torch.backend import residual_work
    from optcmp.problems._scratch import work_arrays

    o = optcmp.get_backend("torch").ops
    p = LinearRegression(n_samples=30_000, seed=2)
    batch = {k: torch.tensor(v) for k, v in p.train_data.items()}
    work = residual_work()
    for seed in (0, 1):
        x = torch.tensor(np.random.default_rng(seed).standard_normal(p.n_params))
        f0, g0 = p.gradient_ops(o, x, batch)
        f1, g1 = p.gradient_into(o, x, batch, work)
        assert float(f0) == float(f1) and torch.equal(g0, g1)
        assert p.fun64(x.numpy() + 1.0) > 0.0  # the host evaluation writes the shared array
    assert np.shares_memory(work["r"].numpy(), work_arrays((30_000,), np.float64, 1)[0])


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
@pytest.mark.parametrize(("spec", "loss"), [(optcmp.adam(1e-3, batch_size=64), "mse"),
                                           (optcmp.sgd(0.05, batch_size=64), "mse"),
                                           (optcmp.sgd(0.05, batch_size=64), "cross_entropy")],
                         ids=["adam", "sgd", "sgd-cross-entropy"])
def test_torch_in_place_steps_on_the_mlp_are_optimizer_step(spec, loss):
    """torch.optim.Adam's and SGD's in-place fused steps on FizzBuzz's MLP (its declared
    backpropagation written into one kept gradient; Adam's step count carried from block to
    block) end, after 200 steps in blocks of 40, at the iterate of ``optimizer.step()`` per
    call."""
    p = FizzBuzzMLP(loss=loss)
    a, b = (optcmp.run(p, spec, backend="torch", execution=ex, threads=1, max_iter=200,
                       max_time=None, eval_every=40) for ex in ("step", "fused"))
    np.testing.assert_array_equal(b.x, a.x)
    assert b.conditions.update_path == "in-place"


@pytest.mark.parametrize("backend", ["numpy", pytest.param("torch", marks=pytest.mark.skipif(
    not HAS_TORCH, reason="torch is not installed"))])
@pytest.mark.parametrize("loss", ["mse", "mse_sum", "cross_entropy"])
def test_mlp_gradient_into_is_gradient_ops(backend, loss):
    """FizzBuzz's ``gradient_into`` (products and sigmoids written in place, the gradient into a
    new vector or a kept one) returns, bit for bit, ``gradient_ops``' value and gradient on
    minibatches of 64 and 4 rows and the whole data, for three iterates in a row."""
    b = optcmp.get_backend(backend)
    p, o = FizzBuzzMLP(loss=loss), b.ops
    data = b.place(p.train_data)
    work: dict = {}
    out = b.asarray(np.zeros(p.n_params))
    for seed, rows in zip((0, 1, 2), (64, 4, p.n_samples)):
        batch = {k: v[:rows] for k, v in data.items()}
        x = b.asarray(p.init_params(seed))
        f0, g0 = p.gradient_ops(o, x, batch)
        for kept in (None, out):
            f1, g1 = p.gradient_into(o, x, batch, work, out=kept)
            assert float(f1) == float(f0)
            np.testing.assert_array_equal(b.to_numpy(g1), b.to_numpy(g0))
            assert kept is None or loss == "cross_entropy" or g1 is kept


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
@pytest.mark.parametrize("loss", ["mse", "mse_sum", "cross_entropy"])
def test_mlp_objective_off_the_tape_is_the_objective_on_it(loss):
    """FizzBuzz's objective of a torch iterate without a gradient (products and sigmoids in
    place: the screen's evaluation) is, bit for bit, the one autograd records, at three
    iterates on all 900 rows."""
    b = optcmp.get_backend("torch")
    p = FizzBuzzMLP(loss=loss)
    data = b.place(p.train_data)
    for seed in range(3):
        x = b.asarray(p.init_params(seed))
        on_tape = p.objective(b.ops, x.clone().requires_grad_(True), data)
        assert float(p.objective(b.ops, x, data)) == float(on_tape.detach())
