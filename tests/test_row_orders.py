"""Minibatch row orders: drawn once per epoch, the same on every backend, kept for the next run
with the same rows and seed."""

from __future__ import annotations

import warnings
from collections import Counter, OrderedDict

import numpy as np
import pytest
from conftest import HAS_JAX, HAS_TF, HAS_TORCH

import optcmp
from optcmp import batching
from optcmp.batching import BatchOrder
from optcmp.problems import FizzBuzzMLP

BACKENDS = ["numpy", *(["torch"] if HAS_TORCH else []), *(["tensorflow"] if HAS_TF else []),
            *(["jax"] if HAS_JAX else [])]


def test_an_epoch_order_is_numpys_permutation_and_read_only():
    order = BatchOrder(1000, 64, True, seed=3)
    idx = order.epoch_indices(2)
    np.testing.assert_array_equal(idx, np.random.default_rng([3, 2]).permutation(1000))
    assert idx.dtype == np.int64 and not idx.flags.writeable
    assert BatchOrder(1000, 10, True, seed=3).epoch_indices(2) is idx  # kept: drawn once
    unshuffled = BatchOrder(5, 2, False, seed=0).epoch_indices(7)
    np.testing.assert_array_equal(unshuffled, np.arange(5))
    assert not unshuffled.flags.writeable


def test_orders_larger_than_the_kept_bytes_are_not_kept(monkeypatch):
    monkeypatch.setattr(batching, "_kept", OrderedDict())
    monkeypatch.setattr(batching, "KEPT_ORDER_BYTES", 8 * 1500)
    BatchOrder(1000, 64, True, seed=1).epoch_indices(0)
    BatchOrder(1000, 64, True, seed=1).epoch_indices(1)  # the oldest goes
    assert list(batching._kept) == [(1000, 1, 1)]
    BatchOrder(2000, 64, True, seed=1).epoch_indices(0)  # too large to keep
    assert list(batching._kept) == [(1000, 1, 1)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_draws_each_epoch_order_once_and_a_repetition_none(backend, monkeypatch):
    """A spanning block used to draw every epoch its index vector could hold, and epoch 0
    twice; each epoch a run reaches is drawn once, and the next run with the same rows and
    seed draws none."""
    monkeypatch.setattr(batching, "_kept", OrderedDict())
    drawn: Counter[int] = Counter()
    real = batching._drawn_order

    def counting(n, seed, epoch):
        if (n, seed, epoch) not in batching._kept:
            drawn[epoch] += 1
        return real(n, seed, epoch)

    monkeypatch.setattr(batching, "_drawn_order", counting)
    p = FizzBuzzMLP()
    spec = optcmp.sgd(0.05, batch_size=64)
    runs = []
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a budget-only rule has no target
            runs.append(optcmp.run(p, spec, backend=backend, threads=1,
                                       stopping=optcmp.MaxIter(5 * 15 + 3)))
    assert dict(drawn) == {e: 1 for e in range(6)}  # 5 epochs and 3 steps of the sixth
    np.testing.assert_array_equal(runs[1].x, runs[0].x)


def test_a_minibatch_larger_than_the_rows_is_refused_before_any_run(tmp_path, capsys):
    """sgd(batch_size=256) on 250 rows was capped at 250 silently (full-batch steps under a
    minibatch label); it is refused up front, naming both numbers, and 250 runs."""
    from optcmp.cli import main

    p = optcmp.problems.LinearRegression(n_samples=250)
    said = ("sgd(learning_rate='auto', batch_size=256, momentum=0.0, nesterov=False, "
            "shuffle=True, convention='lr_outside', schedule='constant', clip_norm=None): "
            "batch_size=256 is larger than problem 'linear_regression''s 250 training rows; "
            "give batch_size <= 250 (a minibatch is a part of the rows, not all of them)")
    with pytest.raises(ValueError) as info:
        optcmp.run(p, optcmp.sgd(batch_size=256), max_iter=3)
    assert str(info.value) == said
    seen: list = []
    store = tmp_path / "runs.jsonl"
    with pytest.raises(ValueError, match="batch_size=256 is larger than problem"):
        optcmp.compare(p, [optcmp.gd, optcmp.adam(batch_size=256)], max_iter=3,
                       progress=seen.append, store=store)
    assert seen == [] and not store.exists()  # gd did not run first
    r = optcmp.run(p, optcmp.sgd(batch_size=250), max_iter=3)
    assert r.nit == 3 and r.status == "max_iter"
    assert main(["run", "--rows", "50", "--optimizers", "sgd", "--backends", "numpy",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "batch_size=64 is larger than problem" in err
    assert "50 training rows; give batch_size <= 50" in err
