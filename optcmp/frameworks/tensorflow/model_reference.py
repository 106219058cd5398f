"""optcmp's reference rule on a user's Keras model, one trainable variable at a time.

The run's clone of the model is :mod:`optcmp.frameworks.tensorflow.model_stepper`'s; a step is
the loss's gradient under ``tf.GradientTape``, then the rule through TensorFlow's ops on each
variable (flat) with its own state, assigned back, in one ``tf.function`` of the backend (XLA
where the backend compiles with it) that takes the rule's state and returns the new one,
traced for every minibatch shape a run sees in the warm-up, off the clock.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from optcmp.frameworks.model_reference import ModelReference
from optcmp.frameworks.tensorflow.backend import TensorFlowBackend
from optcmp.frameworks.tensorflow.model_stepper import batch_signature, clone_at
from optcmp.optimizers.base import NotApplicable


class KerasModelReference(ModelReference):
    """The spec's reference rule on a clone of the problem's Keras model."""

    container = "variables"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not isinstance(self.backend, TensorFlowBackend):
            raise NotApplicable(f"a Keras model runs on the TensorFlow backend, not "
                                f"{self.backend.name!r}")

    @property
    def compiled(self) -> str:
        return self.backend.compiler

    def build(self) -> None:
        model, b = self.native, self.backend
        assert isinstance(b, TensorFlowBackend)
        self.model, self.vars = clone_at(model, self.x0)
        ops, net, loss, variables = b.ops, self.model, model.loss, self.vars
        self.ops = ops
        self.states = self.init_states(ops, [tf.reshape(v, [-1]) for v in variables])
        full = not self.stochastic

        def step(X: Any, y: Any, states: Any) -> Any:
            with tf.GradientTape() as tape:
                f = loss(y, net(X, training=True))
            g = tape.gradient(f, variables)
            gs = [tf.reshape(tf.zeros_like(v) if gi is None else gi, [-1])
                  for v, gi in zip(variables, g)]
            xs, new = self.update(ops, [tf.reshape(v, [-1]) for v in variables], gs,
                                  [tuple(s) for s in states])
            for v, x in zip(variables, xs):
                v.assign(tf.reshape(x, v.shape))
            return f, self.grad_norm(ops, gs) if full else tf.zeros((), f.dtype), new

        spec = tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), self.states)
        self._step = b.function(step, [*batch_signature(self.data), spec], rows=(0, 1))

    def step_on(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        f, gnorm, new = self._step(batch["X"], batch["y"], self.states)
        self.states = [tuple(s) for s in new]
        return f, (None if self.stochastic else gnorm)

    def save(self) -> Any:
        return [v.numpy() for v in self.vars], self.states, self._k

    def load(self, saved: Any) -> None:
        values, self.states, self._k = saved
        for v, a in zip(self.vars, values):
            v.assign(a)

    def x_numpy(self) -> np.ndarray:
        xs = self.evaluated(self.ops, [tf.reshape(v, [-1]) for v in self.vars], self.states)
        return self.flat([np.asarray(x) for x in xs])


__all__ = ["KerasModelReference"]
