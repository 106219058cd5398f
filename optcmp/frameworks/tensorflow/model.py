"""A user's Keras 3 model evaluated off the clock, on the TensorFlow backend.

:class:`KerasModel` keeps the model's ``trainable_variables`` (names are their ``path``,
shapes, dtype), the loss (Keras' convention ``loss(y_true, y_pred)``), and evaluations at a
flat float64 vector ``x`` through ``model.stateless_call`` (the model's variables are never
changed) with ``tf.GradientTape``, in the model's dtype. Keras 3 has one backend per process:
a Keras model runs here only where Keras runs on TensorFlow. The timed steps are
:mod:`optcmp.frameworks.tensorflow.model_stepper`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import tensorflow as tf


def keras_module() -> Any:
    """``keras``, imported for TensorFlow (a ValueError where Keras runs on another backend)."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    if keras.backend.backend() != "tensorflow":
        raise ValueError(f"Keras runs on backend {keras.backend.backend()!r} in this process "
                         "(Keras 3 has one backend per process); a Keras model runs on "
                         "TensorFlow here: set KERAS_BACKEND=tensorflow before Keras is "
                         "imported")
    return keras


def keras_loss(keras: Any, loss: Any, dtype: str | None = None) -> Any:
    """A Keras loss of a name (``"cross_entropy"``: sparse, from logits; ``"mse"``) or the
    callable itself; a Keras loss object computing in ``dtype`` where given."""
    names = {"cross_entropy": lambda: keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, dtype=dtype), "mse": lambda: keras.losses.MeanSquaredError(
            dtype=dtype)}
    if isinstance(loss, str):
        if loss not in names:
            raise ValueError(f"loss {loss!r} is not a loss name; give one of {sorted(names)}, "
                             "a Keras loss or a function loss(y_true, y_pred)")
        return names[loss]()
    if dtype is not None and isinstance(loss, keras.losses.Loss):
        return type(loss).from_config({**loss.get_config(), "dtype": dtype})
    if not callable(loss):
        raise TypeError(f"loss must be a name of {sorted(names)}, a Keras loss or a function "
                        f"loss(y_true, y_pred), got {type(loss).__name__}")
    return loss


def mlp(layers: list[tuple[np.ndarray, np.ndarray]], dtype: str) -> Any:
    """A ``keras.Sequential`` of ``Dense`` layers (ReLU between) with the given kernels and
    biases, in ``dtype``."""
    keras = keras_module()
    n = len(layers)
    net = keras.Sequential([keras.Input((layers[0][0].shape[0],), dtype=dtype)] + [
        keras.layers.Dense(W.shape[1], activation="relu" if i < n - 1 else None, dtype=dtype)
        for i, (W, _) in enumerate(layers)])
    net.set_weights([a for W, b in layers for a in (W, b)])
    return net


def cnn(layers: list[tuple[np.ndarray, np.ndarray]], dtype: str) -> Any:
    """8 x 8 images: ``Reshape``, ``Conv2D`` 3 x 3 (ReLU), ``Flatten``, ``Dense``, with the
    given kernels and biases, in ``dtype``."""
    keras = keras_module()
    (K, c), (W, b) = layers
    net = keras.Sequential([
        keras.Input((64,), dtype=dtype), keras.layers.Reshape((8, 8, 1), dtype=dtype),
        keras.layers.Conv2D(K.shape[3], 3, activation="relu", dtype=dtype),
        keras.layers.Flatten(dtype=dtype), keras.layers.Dense(W.shape[1], dtype=dtype)])
    net.set_weights([K, c, W, b])
    return net


class KerasModel:
    """A built Keras model and its loss ``loss(y_true, y_pred) -> scalar``."""

    framework = "keras"
    backend = "tensorflow"

    def __init__(self, model: Any, loss: Any, loss_dtype: str | None = None) -> None:
        keras = keras_module()
        if not isinstance(model, keras.Model):
            raise TypeError(f"model must be a keras.Model, got {type(model).__name__}")
        if not model.built or not model.trainable_variables:
            raise ValueError("the Keras model is not built (no trainable variables yet): give "
                             "it a keras.Input or call it once on a batch")
        self.model, self.keras = model, keras
        tv = model.trainable_variables
        self.names = tuple(str(v.path) for v in tv)
        self.shapes = tuple(tuple(int(d) for d in v.shape) for v in tv)
        dtypes = {str(v.dtype) for v in tv}
        if len(dtypes) > 1:
            raise ValueError(f"the model's variables must share one dtype, got {sorted(dtypes)}")
        self.dtype = dtypes.pop()
        self.loss_arg = loss
        self.loss_name = loss if isinstance(loss, str) else getattr(
            loss, "name", getattr(loss, "__name__", "loss"))
        # a named loss computes in the model's dtype (Keras' default is floatx, float32)
        self.loss = keras_loss(keras, loss, loss_dtype or (
            self.dtype if isinstance(loss, str) else None))

    def __getstate__(self) -> dict[str, Any]:
        """The state to pickle (the model pickles as Keras saves it; the module is not kept)."""
        return {k: v for k, v in self.__dict__.items() if k != "keras"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, keras=keras_module())

    def describe(self) -> str:
        """The model's configuration (its layers), as JSON."""
        try:
            return str(self.model.to_json())
        except Exception:  # noqa: BLE001 - a subclassed model without get_config
            return f"{type(self.model).__qualname__}{self.shapes}"

    def x0(self) -> np.ndarray:
        return np.concatenate([np.asarray(v.numpy(), dtype=np.float64).reshape(-1)
                               for v in self.model.trainable_variables])

    def values(self, x: np.ndarray) -> list[Any]:
        """The trainable variables' values of flat ``x``, as tensors in the model's dtype."""
        out, a = [], 0
        for shape in self.shapes:
            b = a + int(np.prod(shape, dtype=np.int64))
            out.append(tf.constant(np.asarray(x[a:b]).reshape(shape), dtype=self.dtype))
            a = b
        return out

    def tensor(self, a: Any) -> Any:
        """A data array as a tensor (floats in the model's dtype)."""
        t = tf.constant(a)
        return tf.cast(t, self.dtype) if t.dtype.is_floating else t

    def _call(self, tv: list[Any], X: Any) -> Any:
        nt = [v.value for v in self.model.non_trainable_variables]
        out, _ = self.model.stateless_call(tv, nt, self.tensor(X))
        return out

    def outputs(self, x: np.ndarray, X: Any) -> np.ndarray:
        return np.asarray(self._call(self.values(x), X).numpy(), dtype=np.float64)

    def loss_value(self, x: np.ndarray, X: Any, y: Any) -> Any:
        out = self._call(self.values(x), X)
        return np.asarray(self.loss(self.tensor(y), out), dtype=np.float64)

    def value_and_grad(self, x: np.ndarray, X: Any, y: Any) -> tuple[float, np.ndarray]:
        tv = self.values(x)
        with tf.GradientTape() as tape:
            tape.watch(tv)
            f = self.loss(self.tensor(y), self._call(tv, X))
        gs = tape.gradient(f, tv)
        g = [np.zeros(s) if gi is None else np.asarray(gi, dtype=np.float64)
             for s, gi in zip(self.shapes, gs)]
        return float(f), np.concatenate([gi.reshape(-1) for gi in g])

    def canonical(self, i: int, a: np.ndarray) -> np.ndarray:
        """Parameter ``i`` in the (in, out) layout: Keras' own."""
        return a

    def from_canonical(self, i: int, a: np.ndarray) -> np.ndarray:
        return a

    def float64(self) -> KerasModel:
        """The same model with float64 layers (a clone with the weights copied)."""
        k = self.keras

        def clone(layer: Any) -> Any:
            return type(layer).from_config({**layer.get_config(), "dtype": "float64"})

        m = k.models.clone_model(self.model, clone_function=clone)
        m.set_weights([np.asarray(w, dtype=np.float64) for w in self.model.get_weights()])
        return KerasModel(m, self.loss_arg, "float64")


__all__ = ["KerasModel", "cnn", "keras_loss", "keras_module", "mlp"]
