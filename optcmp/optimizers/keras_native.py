"""Native Keras adapters: ``keras.optimizers.Adadelta`` and ``keras.optimizers.SGD`` on TF variables.

Imported only when a run needs them. The iterate is one flat ``tf.Variable`` on the backend's
device; a step is one ``tf.function`` (traced once, during warm-up): objective and gradient under
a ``tf.GradientTape`` (a fresh tape each step, so no gradient is ever carried over), then
``optimizer.apply_gradients``. Every hyperparameter is passed to the constructor explicitly
(Keras' own defaults are ``learning_rate=0.001, rho=0.95, epsilon=1e-7`` for Adadelta and
``learning_rate=0.01`` for SGD, CASES.md FC-01), and the optimizer is built with Keras'
``floatx`` set to the run's dtype, so that its learning-rate variable is float64 in float64
runs (with Keras' float32 default, 0.1 would become 0.10000000149).

Keras 3 follows one process-wide backend. When Keras was already imported with a backend other
than TensorFlow, its optimizers cannot update TensorFlow variables: these adapters then run
optcmp's reference update rule instead, and say so in :attr:`implementation` (recorded in every
result).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from optcmp.backends.tensorflow_ import TensorFlowBackend, tf
from optcmp.optimizers.adadelta import AdadeltaRule
from optcmp.optimizers.base import ReferenceAdapter, StepOutput
from optcmp.optimizers.sgd import SGDRule


def keras_backend_name() -> str:
    """Backend Keras runs on in this process (imports Keras with TensorFlow if not yet loaded).

    Returns
    -------
    str
        ``keras.backend.backend()``, e.g. ``"tensorflow"``.
    """
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    return str(keras.backend.backend())


class _KerasAdapter(ReferenceAdapter):
    """Keras optimizer on a ``tf.Variable``; reference rule when Keras is not on TensorFlow."""

    keras_name: str = ""

    def _options(self) -> dict[str, Any]:
        raise NotImplementedError

    def _native_options(self) -> dict[str, Any]:
        """The constructor arguments actually passed (default: :meth:`_options`)."""
        return self._options()

    def setup(self) -> None:
        kb = keras_backend_name()
        self.native = kb == "tensorflow" and isinstance(self.backend, TensorFlowBackend)
        if not self.native:
            super().setup()
            self.implementation = (
                f"optcmp reference update rule (fallback: Keras runs on backend {kb!r} in this "
                f"process, so keras.optimizers.{self.keras_name} cannot update TensorFlow "
                f"variables)"
            )
            return
        import keras

        self.data = self.backend.place(self.problem.train_data)
        self.resolve_learning_rate()
        b = self.backend
        assert isinstance(b, TensorFlowBackend)
        with tf.device(b.tf_device):
            self.var = tf.Variable(b.asarray(self.x0), name="x", trainable=True)
        old = keras.config.floatx()
        keras.config.set_floatx(b.dtype)
        try:
            self.opt = getattr(keras.optimizers, self.keras_name)(**self._native_options())
            with tf.device(b.tf_device):
                self.opt.build([self.var])
        finally:
            keras.config.set_floatx(old)
        objective, o, var, opt = self.problem.objective, b.ops, self.var, self.opt
        with_norm = not self.stochastic  # minibatch steps report no gradient norm

        def body(batch: dict[str, Any]) -> Any:
            with tf.GradientTape() as tape:
                f = objective(o, var, batch)
            g = tape.gradient(f, var)
            gnorm = tf.sqrt(tf.tensordot(g, g, 1)) if with_norm else None
            opt.apply_gradients([(g, var)])
            return f, gnorm

        self._fn = b.function(body, [b.data_signature(self.problem)])
        self._k = 0
        if self.stochastic:
            self._init_batches()
        opts = ", ".join(f"{k}={v!r}" for k, v in self._options().items())
        self.implementation = (f"keras.optimizers.{self.keras_name}({opts}) on a tf.Variable "
                               f"(Keras {keras.__version__})")

    def step(self) -> StepOutput:
        if not self.native:
            return super().step()
        batch = self._batch() if self.stochastic else self.data
        fun, gnorm = self._fn(batch)
        self._k += 1
        if self.stochastic:
            return StepOutput(None, None, 1, 1)
        return StepOutput(fun, gnorm, 1, 1)

    def warmup(self) -> float:
        """Trace the step (one call) and restore the variable and the optimizer state."""
        if not self.native:
            return super().warmup()
        saved = [v.numpy() for v in self.opt.variables]
        x = self.var.numpy()
        t0 = time.perf_counter()
        self.step()
        self.backend.sync()
        elapsed = time.perf_counter() - t0
        self._k = 0
        self.var.assign(x)
        for v, s in zip(self.opt.variables, saved):
            v.assign(s)
        return elapsed

    def x_numpy(self) -> np.ndarray:
        if not self.native:
            return super().x_numpy()
        return np.asarray(self.var.numpy(), dtype=np.float64).reshape(-1)


class KerasAdadelta(_KerasAdapter):
    """``keras.optimizers.Adadelta(learning_rate, rho, epsilon)``, full batch."""

    keras_name = "Adadelta"
    rule = AdadeltaRule()

    def _options(self) -> dict[str, Any]:
        h = self.hyper
        return {"learning_rate": float(h["learning_rate"]), "rho": float(h["rho"]),
                "epsilon": float(h["eps"]), "weight_decay": None, "clipnorm": None,
                "clipvalue": None, "global_clipnorm": None, "use_ema": False}


class KerasSGD(_KerasAdapter):
    """``keras.optimizers.SGD(learning_rate, momentum, nesterov)`` on optcmp's minibatches.

    Keras' velocity form (``v = mu v - lr g; x += v``) gives the same iterates as PyTorch's
    buffer form used by the reference rule for a constant learning rate.
    """

    keras_name = "SGD"
    rule = SGDRule()
    stochastic = True

    def _options(self) -> dict[str, Any]:
        h = self.hyper
        return {"learning_rate": float(h["learning_rate"]), "momentum": float(h["momentum"]),
                "nesterov": bool(h["nesterov"]), "weight_decay": None, "clipnorm": None,
                "clipvalue": None, "global_clipnorm": None, "use_ema": False}

    def _native_options(self) -> dict[str, Any]:
        """:meth:`_options` with ``momentum`` as a ``numpy.float64``.

        Keras SGD casts its Python float ``momentum`` with ``ops.cast(momentum,
        variable.dtype)``, which goes through a float32 tensor first: 0.9 became
        0.8999999761581421 in float64 runs (a 5e-7 relative drift from the reference rule after
        20 steps). ``numpy.float64`` is a ``float`` subclass that Keras accepts and converts
        without that detour. (Adadelta multiplies tensors by ``rho`` directly, where a Python
        float is exact and a numpy scalar would not work.)
        """
        opts = self._options()
        opts["momentum"] = np.float64(opts["momentum"])
        return opts
