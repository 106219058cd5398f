"""A user's JAX model trained by ``optax.<name>`` on its parameter pytree.

A step is one ``jax.jit`` of the loss's gradient (``jax.value_and_grad``), optax's ``update``
and ``optax.apply_updates``, as a hand-written JAX training loop compiles it; the parameters
and the optimizer state stay pytrees on the device between steps (values: saving a state keeps
references). The warm-up compiles it for every minibatch shape a run sees, off the clock.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from optcmp.frameworks.jax.backend import JaxBackend
from optcmp.frameworks.jax.native import OptaxNativeAdapter, optax_function
from optcmp.frameworks.models import ModelStepper, options_text
from optcmp.optimizers import OptaxOptimizer
from optcmp.optimizers.base import NotApplicable


class JaxModelStepper(ModelStepper):
    """``optax.<name>(**options)`` on the problem's parameter pytree, one jitted step."""

    framework = "optax"
    describes = "optax.{name}"
    decl: OptaxOptimizer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not isinstance(self.backend, JaxBackend):
            raise NotApplicable(f"a JAX model runs on the JAX backend, not "
                                f"{self.backend.name!r}")

    def build(self) -> None:
        model, b = self.native, self.backend
        tx, opts = OptaxNativeAdapter.transform(self)  # type: ignore[arg-type]
        self.params = b.place_state(model.tree(self.x0))
        if model.dtype != b.dtype:  # bfloat16, float16: the data cast once
            self.data = {k: model.array(v) for k, v in self.data.items()}
        self.state = b.place_state(tx.init(self.params))
        objective, full = model.objective, not self.stochastic

        def step(params: Any, state: Any, X: Any, y: Any) -> Any:
            f, g = jax.value_and_grad(objective)(params, X, y)
            updates, state = tx.update(g, state, params)
            gnorm = optax.global_norm(g) if full else jnp.zeros(())
            return optax.apply_updates(params, updates), state, f, gnorm

        self._step = b.compile(step, ())  # jax.jit; its outputs wait for the backend's sync
        self._judged = (jax.jit(optax_function(self.decl.eval_params))
                        if self.evaluates_apart and self.decl.eval_params else None)
        self.implementation = (f"optax.{self.decl.name}({options_text(opts)}) on the model's {model.dtype} "
                               f"parameter pytree (optax {optax.__version__})")

    def step_on(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        self.params, self.state, f, gnorm = self._step(self.params, self.state, batch["X"],
                                                       batch["y"])
        return f, (None if self.stochastic else gnorm)

    def save(self) -> Any:
        return self.params, self.state, self._k

    def load(self, saved: Any) -> None:
        self.params, self.state, self._k = saved

    def x_numpy(self) -> np.ndarray:
        """The judged parameters on the host: optax's ``eval_params`` of them where the spec
        judges another iterate than the stepped one (Schedule-Free's ``eval_at="x"``)."""
        params = self.params
        if self._judged is not None:  # one jitted call, compiled in the warm-up
            params = self._judged(self.state, params)
        return np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1)
                               for v in jax.tree_util.tree_leaves(params)])


__all__ = ["JaxModelStepper"]
