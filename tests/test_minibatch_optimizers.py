"""Minibatches for every first-order optimizer: ``batch_size=None`` is full batch; a size steps
on optcmp's minibatch sequence, the same rows on every backend and for the natives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import HAS_TF, HAS_TORCH, lr_a, lr_s

import optcmp
from optcmp.batching import BatchOrder
from optcmp.frameworks.adapters import resolve_adapter
from optcmp.optimizers import optimizer_info
from optcmp.optimizers.schedule import parse
from optcmp.problems import FizzBuzzMLP

FIRST_ORDER = ("adam", "adamw", "rmsprop", "adagrad", "momentum", "nesterov", "adadelta")


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # framework deprecation chatter
        return fn(*a, **k)


@pytest.mark.parametrize("name", FIRST_ORDER)
def test_batch_size_defaults_to_full_batch_and_is_validated(name) -> None:
    factory = getattr(optcmp, name)
    spec = factory()
    assert spec.hyperparameters["batch_size"] is None and spec.hyperparameters["shuffle"] is True
    info = optimizer_info(name)
    assert info.stochastic and not info.minibatch(spec.hyperparameters)
    assert info.minibatch(factory(batch_size=64).hyperparameters)
    with pytest.raises(ValueError, match=r"batch_size must be None or a positive integer, "
                                         r"got 0"):
        factory(batch_size=0)
    with pytest.raises(ValueError, match="batch_size must be None or a positive integer"):
        factory(batch_size=6.5)
    with pytest.raises(ValueError, match="shuffle must be True or False"):
        factory(batch_size=8, shuffle="yes")


def test_full_batch_adam_is_unchanged_by_the_new_settings() -> None:
    p = lr_a()
    a = optcmp.run(p, optcmp.adam(0.01), max_iter=5, max_time=None)
    b = optcmp.run(p, optcmp.adam(0.01, batch_size=None, shuffle=False), max_iter=5,
                       max_time=None)
    np.testing.assert_array_equal(a.x, b.x)
    assert a.outcome.epochs is None  # full batch: iterations, no epochs


def test_minibatch_adam_steps_on_the_seeds_minibatches() -> None:
    p = lr_s(1000)
    spec = optcmp.adam(0.01, batch_size=32)
    r = optcmp.run(p, spec, max_iter=40, max_time=None, seed=3)
    assert r.status == "max_iter" and r.nit == 40
    order = BatchOrder(1000, 32, True, 3)  # 32 steps per epoch: 40 steps cross an epoch
    x, m, v = np.zeros(4), np.zeros(4), np.zeros(4)
    for t in range(1, 41):  # torch.optim.Adam's formula (paper Algorithm 1)
        rows = order.batch_indices(t - 1)
        g = p.value_and_grad(x, {k: a[rows] for k, a in p.train_data.items()})[1]
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        x = x - 0.01 / (1 - 0.9 ** t) * m / (np.sqrt(v) / np.sqrt(1 - 0.999 ** t) + 1e-8)
    np.testing.assert_allclose(r.x, x, rtol=1e-12, atol=1e-15)
    assert r.outcome.epochs == pytest.approx(40 / 32)


def test_per_epoch_schedule_converts_per_minibatch_step() -> None:
    spec = optcmp.adam(0.01, batch_size=100, schedule="step(step_size=2, gamma=0.5, unit='epoch')")
    r = _quiet(optcmp.run, lr_a(), spec, backend="numpy", max_iter=3, max_time=None)
    # 1000 rows in minibatches of 100: an epoch is 10 steps
    assert r.hyperparameters["schedule"] == "step(step_size=2, gamma=0.5, every=10)"
    assert parse(r.hyperparameters["schedule"]).factor(20.0) == 0.5
    # what was written is kept next to the per-step form
    assert r.hyperparameters["schedule_as_given"] == "step(step_size=2, gamma=0.5, unit='epoch')"


@pytest.mark.parametrize("name", FIRST_ORDER)
def test_a_batch_size_makes_the_adapter_step_on_minibatches(name) -> None:
    p = lr_a()
    for batch_size, expected in ((None, False), (64, True)):
        spec = getattr(optcmp, name)(batch_size=batch_size, impl="reference")
        cls, _ = resolve_adapter(spec, "numpy")
        ad = cls(spec, p, optcmp.get_backend("numpy"), np.zeros(p.n_params), seed=0)
        assert ad.stochastic is expected


def _fizzbuzz_equivalence(spec, impl):
    return _quiet(optcmp.check_equivalence, FizzBuzzMLP(), spec, steps=40, impl=impl,
                  tolerance=1e-10)


@pytest.mark.skipif(not (HAS_TORCH and HAS_TF), reason="needs torch and TensorFlow")
@pytest.mark.parametrize("impl", ["reference", "native"])
def test_minibatch_adam_on_fizzbuzz_is_the_same_trajectory_on_every_backend(impl) -> None:
    """adam(batch_size=64) on FizzBuzz (900 rows: 15 minibatches per epoch, 40 steps cross two
    epochs): numpy, torch and TensorFlow agree to 1e-10 in float64, reference rule and
    torch.optim.Adam alike."""
    res = _fizzbuzz_equivalence(optcmp.adam(batch_size=64), impl)
    assert res.verdict == "equivalent", str(res)
    assert res.max_rel_diff <= 1e-10
    if impl == "native":  # Keras implements the other epsilon convention (next test)
        assert set(res.backends) == {"numpy", "torch"} and len(res.skipped) == 1
    else:
        assert set(res.backends) == {"numpy", "torch", "tensorflow"}


@pytest.mark.skipif(not HAS_TF, reason="needs TensorFlow")
def test_minibatch_keras_adam_on_fizzbuzz_follows_the_reference() -> None:
    res = _fizzbuzz_equivalence(optcmp.adam(batch_size=64, convention="eps_hat", eps=1e-7),
                                "native")
    assert res.verdict == "equivalent", str(res)
    assert "tensorflow" in res.backends and res.max_rel_diff <= 1e-10


def test_cli_sets_a_batch_size_and_prints_every_column(capsys) -> None:
    from optcmp import cli

    rc = _quiet(cli.main, ["run", "--rows", "500", "--backends", "numpy", "--optimizers", "adam",
                           "--set", "adam.batch_size=50", "--max-iter", "30", "--no-progress",
                           "--wide", "--per-run"])
    assert rc == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    lines = lines[next(i for i, ln in enumerate(lines) if ln.startswith("optimizer ")):]
    head = lines[0].split()
    assert head[:5] == ["optimizer", "backend", "impl", "dtype", "status"] and "nfev" in head
    row = lines[2].split()
    assert row[0] == "adam" and row[4] == "max_iter"  # 30 minibatch steps: 3 epochs
