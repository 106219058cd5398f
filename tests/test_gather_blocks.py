"""Compiled minibatch blocks that gather many steps' rows in one go and slice them per step.

A block's steps gather their rows one by one where they are few (an observation every step)
and in one gather of :func:`~optcmp.frameworks.base.gather_steps` steps' rows otherwise; the
two must make the same iterates to the bit, across an epoch's end and its shorter last
minibatch (1000 rows in batches of 64: 15 of 64 and one of 40).
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import HAS_JAX, HAS_TF, lr_a

import optcmp
from optcmp.batching import BatchOrder
from optcmp.frameworks.base import GATHER_ROWS, gather_steps

XLA = (["tensorflow"] if HAS_TF else []) + (["jax"] if HAS_JAX else [])


def _block(name: str, p=None):
    """An SGD-with-momentum block on ``p`` (LR-A) in float64, its data and three epochs' row
    orders."""
    p = lr_a() if p is None else p
    b = optcmp.get_backend(name, dtype="float64")
    o, grad = b.ops, p.gradient_ops

    def step(x, state, batch):
        g = grad(o, x, batch, value=False)[1]
        v = 0.9 * state[0] + g
        return 0.0, 0.0, x - 0.05 * v, (v,)

    order = BatchOrder(p.n_samples, 64, True, 7)
    data = b.place(p.train_data)
    x0 = b.asarray(np.zeros(p.n_params))
    state = (b.asarray(np.zeros(p.n_params)),)
    idx = b.index_array(np.concatenate([order.epoch_indices(e) for e in range(3)]))
    block = b.compile_block(step, (x0, state, data), batch_size=64, n_rows=p.n_samples,
                            steps_per_epoch=order.steps_per_epoch, snapshots=40)
    return b, block, (x0, state, data, idx)


@pytest.mark.parametrize("backend", XLA)
def test_rows_gathered_in_one_go_make_the_iterates_of_rows_gathered_per_step(backend):
    """34 steps from minibatch 13: two epochs' ends (their 40-row minibatches) inside; one
    observation after every step (rows gathered per step) and one at the end (in one go)."""
    assert gather_steps(64, 16) == 16 and gather_steps(64, 10**6) == GATHER_ROWS // 64
    b, block, (x0, state, data, idx) = _block(backend)
    n = 34
    x_each, _, kept, _ = block(n, x0, state, data, idx, 13, 1, 1)
    x_once, _, _, _ = block(n, x0, state, data, idx, 13, n, n)
    assert np.array_equal(b.to_numpy(x_once), b.to_numpy(x_each))
    kept = b.to_numpy(kept)
    x_part, _, _, _ = block(20, x0, state, data, idx, 13, 20, 20)  # 16 and 4 in one go
    assert np.array_equal(b.to_numpy(x_part), kept[19])
    assert not np.array_equal(kept[18], kept[19])


@pytest.mark.parametrize("backend", XLA)
def test_whole_chunks_of_an_epoch_without_a_shorter_minibatch_make_the_same_iterates(backend):
    """1024 rows in batches of 64 (16 a chunk, none shorter): 40 steps from minibatch 5 in
    one go (two whole chunks, then 8 steps) reach the iterate of rows gathered per step."""
    from optcmp.problems import LinearRegression

    b, block, (x0, state, data, idx) = _block(backend, LinearRegression(n_samples=1024,
                                                                        n_features=4))
    x_each, _, kept, _ = block(40, x0, state, data, idx, 5, 1, 1)
    x_once, _, _, _ = block(40, x0, state, data, idx, 5, 40, 40)
    assert np.array_equal(b.to_numpy(x_once), b.to_numpy(x_each))
    assert np.array_equal(b.to_numpy(x_once), b.to_numpy(kept)[39])


@pytest.mark.parametrize("backend", ["numpy", *XLA])
def test_the_gather_policy_is_recorded_per_backend_and_execution(backend):
    p = lr_a()
    sgd = optcmp.sgd(0.05, batch_size=64)
    runs = {ex: optcmp.run(p, sgd, backend=backend, execution=ex, threads=1, max_iter=20)
            for ex in ("step", "fused")}
    gd = optcmp.run(p, optcmp.gd(0.1), backend=backend, threads=1, max_iter=3)
    chunk = "once per chunk of 16384 rows"  # steps one by one slice a gathered chunk
    assert gd.conditions.gather == "" and runs["step"].conditions.gather == chunk
    fused = chunk if backend == "numpy" else "once per block"
    assert runs["fused"].conditions.gather == fused
    assert optcmp.RunResult.from_dict(runs["fused"].to_dict()).conditions.gather == fused


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("backend", XLA)
def test_a_large_placed_array_holds_the_values_at_placement(backend, dtype):
    """1,000,000 x 2 float64 rows placed from an offset view (not 64-byte aligned) and a
    reversed index vector: the device arrays equal numpy's cast of them, and writing the host
    arrays afterwards changes nothing."""
    b = optcmp.get_backend(backend, dtype=dtype)
    host = np.random.default_rng(0).standard_normal(2_000_001)[1:].reshape(-1, 2)
    rows = np.arange(300_000)[::-1].copy()
    want = host.astype(dtype)
    placed, idx = b.asarray(host), b.index_array(rows)
    host[:], rows[:] = 0.0, 0
    assert np.array_equal(b.to_numpy(placed), want) and b.to_numpy(placed).dtype == dtype
    assert np.array_equal(b.to_numpy(idx), np.arange(300_000)[::-1])


@pytest.mark.parametrize("backend", XLA)
@pytest.mark.parametrize("rows", [20_000, 20_480])
def test_steps_run_one_call_each_compile_every_chunk_shape_in_the_warm_up(backend, rows):
    """An epoch of 20,000 (or 20,480) rows is a chunk of 16,384 rows and one of 3,616 (4,096)
    sliced into full minibatches: the warm-up compiles both, none compiles on the clock."""
    p = optcmp.problems.LinearRegression(rows)
    r = optcmp.run(p, optcmp.sgd(3e-4, batch_size=64), backend=backend, execution="step",
                   threads=1, max_iter=2 * -(-rows // 64))
    assert r.conditions.gather == "once per chunk of 16384 rows"
    assert r.conditions.compiles_in_timed == 0
