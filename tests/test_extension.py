"""A user's optimizer, declared once at run time, runs everywhere optcmp's own ones run."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from conftest import HAS_TF, HAS_TORCH, lr_a

import optcmp
from optcmp.optimizers import (
    HyperParam,
    OptimizerInfo,
    TorchOptimizer,
    UpdateRule,
    get_optimizer,
    optimizer_names,
    positive_float,
    register_optimizer,
)
from optcmp.optimizers.base import unregister_optimizer


class HeavyBallRule(UpdateRule):
    """Polyak's heavy ball in PyTorch's buffer form: ``b = mu b + g; x -= lr b``."""

    def init_state(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x),)

    def update(self, ops, x, g, state, hp, curvature):
        (b,) = state
        b = hp["momentum"] * b + g
        return x - hp["learning_rate"] * b, (b,)


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    return {"lr": h["learning_rate"], "momentum": h["momentum"], "dampening": 0.0,
            "weight_decay": 0.0, "nesterov": False, "maximize": False}


def heavy_ball(learning_rate: float = 0.1, momentum: float = 0.5, *, impl: str = "auto",
               label: str = ""):
    return get_optimizer("heavy_ball", impl=impl, label=label, learning_rate=learning_rate,
                         momentum=momentum)


def _info(**changes: Any) -> OptimizerInfo:
    kw: dict[str, Any] = dict(
        name="heavy_ball", aliases=("polyak",),
        params={"learning_rate": HyperParam("learning_rate", 0.1,
                                            positive_float("learning_rate")),
                "momentum": HyperParam("momentum", 0.5,
                                       positive_float("momentum", upper=1.0))},
        summary="heavy ball, full batch", reference="Polyak (1964)", rule=HeavyBallRule(),
        natives=(TorchOptimizer("SGD", _torch_options),))
    kw.update(changes)
    return OptimizerInfo(**kw)


@pytest.fixture
def registered():
    register_optimizer(_info(), heavy_ball)
    yield
    unregister_optimizer("heavy_ball")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:TensorFlow's thread pools were already started")
def test_a_registered_optimizer_is_public_everywhere(registered) -> None:
    assert "heavy_ball" in optimizer_names() and "heavy_ball" in dir(optcmp)
    assert optcmp.heavy_ball is heavy_ball and optcmp.optimizers.heavy_ball is heavy_ball
    assert optcmp.get_optimizer("Polyak").name == "heavy_ball"
    comp = optcmp.compare(lr_a(), [optcmp.heavy_ball,
                                   optcmp.get_optimizer("polyak", label="polyak")],
                          backends="all", tol=1e-8,
                          threads=1, progress=False)
    assert all(r.status == "converged" for r in comp), [r.message for r in comp]
    counts = {(r.backend, r.impl): r.nit_to_target for r in comp}
    assert len(set(counts.values())) == 1, counts  # one algorithm: one count everywhere
    if HAS_TORCH:
        assert counts[("torch", "native")] is not None  # "auto" prefers torch.optim.SGD


@pytest.mark.skipif(not (HAS_TORCH or HAS_TF), reason="one backend only")
def test_a_registered_optimizer_agrees_across_backends(registered) -> None:
    res = optcmp.check_equivalence(lr_a(), optcmp.heavy_ball(0.1, 0.9), steps=30)
    assert res.verdict == "equivalent" and res.max_rel_diff < 1e-13, str(res)


def test_registering_again_replaces_with_a_warning(registered) -> None:
    with pytest.warns(UserWarning, match="'heavy_ball' was already registered; the new"):
        register_optimizer(_info(summary="second"), heavy_ball)
    assert optcmp.optimizers.optimizer_info("heavy_ball").summary == "second"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info = optcmp.optimizers.optimizer_info("heavy_ball")
        register_optimizer(info, heavy_ball)  # the same declaration again: silent


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(ValueError, match="the name or alias 'gd' already means 'gd'"):
        register_optimizer(_info(aliases=("GD",)))
    with pytest.raises(ValueError, match="'lbfgs' already means 'lbfgs'"):
        register_optimizer(_info(name="L-BFGS"))
    with pytest.raises(ValueError, match="declares no implementation"):
        register_optimizer(_info(rule=None, natives=()))
    with pytest.raises(ValueError, match="stochastic and needs a 'batch_size'"):
        register_optimizer(_info(stochastic=True))
    assert "heavy_ball" not in optimizer_names()
    with pytest.raises(AttributeError, match="module 'optcmp' has no attribute 'heavy_ball'"):
        optcmp.heavy_ball  # noqa: B018


def test_numpy_only_install_records_missing_frameworks_as_skipped(monkeypatch) -> None:
    """Checking the impls of every backend imports no framework adapter."""
    import optcmp.frameworks as backends
    import optcmp.frameworks.adapters as adapters

    monkeypatch.setattr(backends, "is_available", lambda name: name == "numpy")
    monkeypatch.setattr(adapters, "ADAPTERS", {**adapters.ADAPTERS,
                                               "torch": "no_such_module:X",
                                               "keras": "no_such_module:X"})
    with pytest.warns(UserWarning, match="not installed"):
        comp = optcmp.compare(lr_a(), [optcmp.adadelta, optcmp.sgd(0.05), optcmp.lbfgs],
                              backends=["numpy", "torch", "tensorflow"], max_iter=50,
                              progress=False)
    skipped = [r for r in comp if r.status == "skipped"]
    assert len(skipped) == 6 and {r.backend for r in skipped} == {"torch", "tensorflow"}
    assert np.all([r.backend == "numpy" for r in comp if r.status != "skipped"])
