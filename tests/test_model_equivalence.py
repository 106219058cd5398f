"""check_equivalence([p_torch, p_keras, p_jax]): implementations of one model compared at one
point in float64, and the diagnosis when they differ."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp.problems import from_jax, from_keras, from_torch
from optcmp.problems.digits import load_digits

torch = pytest.importorskip("torch")
from _models import jax_mlp, keras_mlp, torch_mlp  # noqa: E402 - torch imported first

TRAIN, _ = load_digits()


def _three(hidden: int = 32, torch_loss: object = "cross_entropy", transposed: bool = False):
    apply, params = jax_mlp(hidden=hidden, transposed=transposed)
    return (from_torch(torch_mlp(hidden=hidden), torch_loss, TRAIN),
            from_keras(keras_mlp(hidden=hidden), "cross_entropy", TRAIN),
            from_jax(apply, params, "cross_entropy", TRAIN))


def test_the_same_mlp_in_torch_keras_and_jax_agrees_in_float64():
    """Each framework's own initialisation differs; at torch's point the three float64 losses
    and gradients agree to rounding (torch's Linear weights mapped by transposing)."""
    res = optcmp.check_equivalence(list(_three()))
    assert res.passed, res.diagnosis
    assert res.dtype == "float64" and res.batch == 64
    assert max(res.grad_rel_diff.values()) < 1e-13
    assert res.loss["keras"] == pytest.approx(res.loss["torch"], rel=1e-14)
    assert res.mapping["jax"] == ["dense1/kernel", "dense1/bias", "dense2/kernel", "dense2/bias"]
    assert "jax's own initial point differs from torch's" in res.diagnosis


def test_a_summed_torch_loss_is_named_with_its_ratio():
    """reduction="sum" on a 64-row batch: the loss and gradient are exactly 64x the mean's."""
    def summed(out, y):
        return torch.nn.functional.cross_entropy(out, y, reduction="sum")

    res = optcmp.check_equivalence(list(_three(torch_loss=summed)))
    assert not res.passed
    assert ("the torch loss is 64.0x the keras loss on a 64-row batch: one sums over the batch, "
            "the other averages") in res.diagnosis
    assert "the torch loss is 64.0x the jax loss" in res.diagnosis
    assert res.loss["torch"] == pytest.approx(64 * res.loss["keras"], rel=1e-12)


def test_a_square_kernel_used_transposed_is_named():
    """64 -> 64 -> 10: JAX's first kernel used as W.T has the right shape and a wrong value."""
    res = optcmp.check_equivalence(list(_three(hidden=64, transposed=True)))
    assert not res.passed
    assert "jax's 'dense1/kernel' is used transposed" in res.diagnosis
    assert res.loss_rel_diff["keras"] < 1e-13 and res.grad_rel_diff["keras"] < 1e-13


def test_a_missing_parameter_and_a_different_activation_are_named():
    pt, _, pj = _three()
    no_bias = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(),
                                  torch.nn.Linear(32, 10, bias=False))
    res = optcmp.check_equivalence([from_torch(no_bias, "cross_entropy", TRAIN), pj])
    assert not res.passed and np.isnan(res.grad_rel_diff["jax"])
    assert "jax has parameter(s) 'dense2/bias' (10,) that torch lacks" in res.diagnosis
    jax = pytest.importorskip("jax")
    apply, params = jax_mlp()

    def tanh_apply(p, X):
        h = jax.nn.tanh(X @ p["dense1"]["kernel"] + p["dense1"]["bias"])
        return h @ p["dense2"]["kernel"] + p["dense2"]["bias"]

    res = optcmp.check_equivalence([pt, from_jax(tanh_apply, params, "cross_entropy", TRAIN)])
    assert "a different activation, layer or output" in res.diagnosis and not res


def test_model_equivalence_refuses_an_optimizer_and_a_single_model():
    pt, _, _ = _three()
    with pytest.raises(TypeError, match="takes no optimizer"):
        optcmp.check_equivalence([pt, pt], optcmp.sgd(0.1))
    with pytest.raises(ValueError, match="two or more"):
        optcmp.check_equivalence([pt])
