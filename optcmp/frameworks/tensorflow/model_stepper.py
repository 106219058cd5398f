"""A user's Keras model trained by ``keras.optimizers.<name>`` on its ``trainable_variables``.

Each run trains its own clone of the model (``keras.models.clone_model``, weights copied, set
to the run's initial point; a subclassed model that cannot be cloned is trained itself, reset
at every run's start). A step is what Keras' own ``train_step`` does: the forward pass and the
loss under ``tf.GradientTape``, the gradient and ``optimizer.apply_gradients``, in one
``tf.function`` of the backend (XLA where the backend compiles with it), traced for every
minibatch shape a run sees in the warm-up, off the clock.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from optcmp.frameworks.models import ModelStepper, options_text
from optcmp.frameworks.tensorflow.backend import TensorFlowBackend
from optcmp.optimizers import KerasOptimizer
from optcmp.optimizers.base import NotApplicable


class KerasModelStepper(ModelStepper):
    """``keras.optimizers.<name>(**options)`` on a clone of the problem's Keras model."""

    framework = "keras"
    describes = "keras.optimizers.{name}"
    decl: KerasOptimizer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not isinstance(self.backend, TensorFlowBackend):
            raise NotApplicable(f"a Keras model runs on the TensorFlow backend, not "
                                f"{self.backend.name!r}")

    def build(self) -> None:
        model, b = self.native, self.backend
        assert isinstance(b, TensorFlowBackend)
        keras = model.keras
        self.model, self.vars = clone_at(model, self.x0)
        if self.hyper.get("schedule", "constant") != "constant":
            raise NotApplicable("a learning-rate schedule on a native Keras model is not "
                                "supported; give a constant learning rate")
        opts = {k: float(v) if isinstance(v, np.floating) else v
                for k, v in self._options().items()}
        self.opt = getattr(keras.optimizers, self.decl.name)(**opts)
        self.opt.build(self.vars)
        net, loss, variables, opt, full = self.model, model.loss, self.vars, self.opt, \
            not self.stochastic

        def step(X: Any, y: Any) -> Any:
            with tf.GradientTape() as tape:
                f = loss(y, net(X, training=True))
            g = tape.gradient(f, variables)
            opt.apply_gradients(zip(g, variables))
            return f, tf.linalg.global_norm(g) if full else tf.zeros((), f.dtype)

        if model.dtype != b.dtype:  # bfloat16, float16: the data cast once
            self.data = {k: tf.cast(v, model.dtype) if v.dtype.is_floating else v
                         for k, v in self.data.items()}
        self._step = b.function(step, batch_signature(self.data), rows=(0, 1))
        self.implementation = (f"keras.optimizers.{self.decl.name}({options_text(opts)}) on the model's "
                               f"{model.dtype} variables (Keras {keras.__version__})")

    @property
    def compiled(self) -> str:
        return self.backend.compiler

    def step_on(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        f, gnorm = self._step(batch["X"], batch["y"])
        return f, (None if self.stochastic else gnorm)

    def save(self) -> Any:
        return ([v.numpy() for v in self.vars], [v.numpy() for v in self.opt.variables],
                self._k)

    def load(self, saved: Any) -> None:
        values, state, self._k = saved
        for v, a in zip(self.vars, values):
            v.assign(a)
        for v, a in zip(self.opt.variables, state):
            v.assign(a)

    def x_numpy(self) -> np.ndarray:
        return np.concatenate([np.asarray(v.numpy(), dtype=np.float64).reshape(-1)
                               for v in self.vars])


def clone_at(model: Any, x0: np.ndarray) -> tuple[Any, list[Any]]:
    """A clone of a ``KerasModel``'s model at flat ``x0`` (a subclassed model that cannot be
    cloned: the model itself) and its trainable variables."""
    try:
        net = model.keras.models.clone_model(model.model)
        net.set_weights(model.model.get_weights())
    except Exception:  # noqa: BLE001 - a subclassed model: trained itself
        net = model.model
    variables = list(net.trainable_variables)
    for v, a in zip(variables, model.values(x0)):
        v.assign(a)
    return net, variables


def batch_signature(data: dict[str, Any]) -> list[Any]:
    """The ``tf.function`` signature of a minibatch ``(X, y)`` of any row count."""
    X, y = data["X"], data["y"]
    return [tf.TensorSpec((None, *X.shape[1:]), X.dtype),
            tf.TensorSpec((None, *y.shape[1:]), y.dtype)]


__all__ = ["KerasModelStepper", "batch_signature", "clone_at"]
