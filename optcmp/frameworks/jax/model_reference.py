"""optcmp's reference rule on a user's JAX model, one leaf of its parameter pytree at a time.

A step is one ``jax.jit`` of the loss's gradient (``jax.value_and_grad``) and the rule through
JAX's ops on each leaf (flat) with its own state, as :mod:`optcmp.frameworks.jax.model_stepper`
compiles optax's update; the parameters and the states stay on the device between steps
(values: saving a state keeps references), compiled in the warm-up for every minibatch shape.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from optcmp.frameworks.jax.backend import JaxBackend
from optcmp.frameworks.model_reference import ModelReference
from optcmp.optimizers.base import NotApplicable


class JaxModelReference(ModelReference):
    """The spec's reference rule on the problem's parameter pytree, one jitted step."""

    container = "parameter pytree"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not isinstance(self.backend, JaxBackend):
            raise NotApplicable(f"a JAX model runs on the JAX backend, not "
                                f"{self.backend.name!r}")

    def build(self) -> None:
        model, b = self.native, self.backend
        ops, objective, full = b.ops, model.objective, not self.stochastic
        self.ops = ops
        self.params = b.place_state(model.tree(self.x0))
        leaves = jax.tree_util.tree_leaves(self.params)
        self.states = b.place_state(self.init_states(ops, [jnp.reshape(a, (-1,))
                                                           for a in leaves]))

        def step(params: Any, states: Any, X: Any, y: Any) -> Any:
            f, g = jax.value_and_grad(objective)(params, X, y)
            leaves, tree = jax.tree_util.tree_flatten(params)
            gs = [jnp.reshape(a, (-1,)) for a in jax.tree_util.tree_leaves(g)]
            xs, new = self.update(ops, [jnp.reshape(a, (-1,)) for a in leaves], gs, states)
            params = jax.tree_util.tree_unflatten(
                tree, [jnp.reshape(x, a.shape) for x, a in zip(xs, leaves)])
            return params, new, f, self.grad_norm(ops, gs) if full else jnp.zeros(())

        self._step = b.compile(step, ())  # jax.jit; its outputs wait for the backend's sync

    def step_on(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        self.params, self.states, f, gnorm = self._step(self.params, self.states, batch["X"],
                                                        batch["y"])
        return f, (None if self.stochastic else gnorm)

    def save(self) -> Any:
        return self.params, self.states, self._k

    def load(self, saved: Any) -> None:
        self.params, self.states, self._k = saved

    def x_numpy(self) -> np.ndarray:
        leaves = [jnp.reshape(a, (-1,)) for a in jax.tree_util.tree_leaves(self.params)]
        return self.flat([np.asarray(x) for x in self.evaluated(self.ops, leaves,
                                                                self.states)])


__all__ = ["JaxModelReference"]
