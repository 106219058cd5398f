"""The same two-layer MLP (64 -> hidden -> 10 on the digits) as a torch module, a Keras model and
a JAX apply function with a params dict, each initialised by its own framework."""

from __future__ import annotations

from typing import Any

import pytest
import torch


def torch_mlp(seed: int = 0, dtype: torch.dtype = torch.float32,
              hidden: int = 32) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, 10)).to(dtype)


def keras_mlp(seed: int = 0, hidden: int = 32) -> Any:
    keras = pytest.importorskip("keras")
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((64,)), keras.layers.Dense(hidden, activation="relu"),
                             keras.layers.Dense(10)])


def jax_mlp(seed: int = 0, hidden: int = 32, transposed: bool = False) -> tuple[Any, Any]:
    """Flax's convention: ``apply(params, X)``, kernels (in, out); ``transposed``: the first
    kernel used transposed (a bug a square kernel hides)."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    k1, k2 = jax.random.split(jax.random.PRNGKey(seed))
    f32 = jnp.float32  # explicit: a JAX run earlier in the process may have enabled x64
    params = {"dense1": {"kernel": jax.random.normal(k1, (64, hidden), f32) / 8,
                         "bias": jnp.zeros(hidden, f32)},
              "dense2": {"kernel": jax.random.normal(k2, (hidden, 10), f32) / hidden ** 0.5,
                         "bias": jnp.zeros(10, f32)}}

    def apply(p: Any, X: Any) -> Any:
        k = p["dense1"]["kernel"]
        h = jax.nn.relu(X @ (k.T if transposed else k) + p["dense1"]["bias"])
        return h @ p["dense2"]["kernel"] + p["dense2"]["bias"]

    return apply, params
