"""The TensorFlow ops namespace: the names of :data:`optcmp.frameworks.ops.OPS` with TensorFlow's functions.

Semantics follow numpy where the two differ (``matmul`` of a vector, ``logaddexp`` with exact
gradients at a tie, a Python float fill exact in float64). Importing this module imports
TensorFlow, and torch first when it is installed: importing TensorFlow before torch in one
process has been seen to crash it. ``KERAS_BACKEND`` defaults to ``tensorflow`` and TensorFlow's
C++ log level to 2 (warnings and errors) unless the environment sets them. The lines TensorFlow's
C++ side writes to the process's stderr while it is imported are read back and replayed, less
the start-up notices that are not about the user's work (:data:`IMPORT_NOISE`: absl's
pre-initialization line, the oneDNN notice, CPU-instruction and duplicate-factory lines).
``XLA_FLAGS`` is left as it is: the TensorFlow backend adds the XLA CPU thread flags where a run
or a backend is set up (:func:`optcmp.frameworks.ops.pin_xla_threads`).
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

if importlib.util.find_spec("torch") is not None:  # torch before tensorflow, always
    import torch  # noqa: F401

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

#: Start-up lines of TensorFlow's C++ side that say nothing about a run (dropped at import).
IMPORT_NOISE = ("All log messages before absl::InitializeLog()", "oneDNN custom operations are on",
                "This TensorFlow binary is optimized to use available CPU instructions",
                "To enable the following instructions", "Unable to register cuDNN factory",
                "Unable to register cuFFT factory", "Unable to register cuBLAS factory",
                "computation placer already registered", "TF-TRT Warning",
                "rebuild TensorFlow with the appropriate compiler flags")


def _import_tensorflow() -> Any:
    """``import tensorflow`` with its C++ start-up notices (:data:`IMPORT_NOISE`) dropped.

    The process's stderr (file descriptor 2) goes to a temporary file during the import; every
    other line is written back to stderr afterwards, so no warning or error is lost. Where
    descriptor 2 cannot be redirected (no such descriptor), TensorFlow is imported as is.
    """
    import sys
    import tempfile

    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        import tensorflow

        return tensorflow
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            import tensorflow
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode(errors="replace")
    kept = [ln for ln in text.splitlines(keepends=True)
            if not any(n in ln for n in IMPORT_NOISE)]
    if kept:
        sys.stderr.write("".join(kept))
    return tensorflow


tf = _import_tensorflow()


def _matmul(a: Any, b: Any) -> Any:
    ra, rb = a.shape.rank, b.shape.rank
    if rb == 1 and ra == 2:
        return tf.linalg.matvec(a, b)
    if ra == 1 and rb == 2:
        return tf.linalg.matvec(b, a, transpose_a=True)
    if ra == 1 and rb == 1:
        return tf.tensordot(a, b, 1)
    return tf.linalg.matmul(a, b)


def _mean(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    return tf.reduce_mean(a, axis=axis)


def _sum(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    return tf.reduce_sum(a, axis=axis)


def _norm(a: Any) -> Any:
    a = tf.reshape(a, (-1,))
    return tf.sqrt(tf.tensordot(a, a, 1))


def _tensors(a: Any, b: Any, op: str) -> tuple[Any, Any]:
    """``a`` and ``b`` as tensors; a Python number takes the other's dtype."""
    tensor = (tf.Tensor, tf.Variable)
    if isinstance(a, tensor):
        return a, b if isinstance(b, tensor) else tf.constant(b, dtype=a.dtype)
    if isinstance(b, tensor):
        return tf.constant(a, dtype=b.dtype), b
    raise TypeError(f"ops.{op}: give at least one of the two values as an array (e.g. "
                    f"ops.zeros_like(x) + {a!r}); got two Python numbers")


def _logaddexp(a: Any, b: Any) -> Any:
    """``log(exp(a) + exp(b))``: numpy's formula, exact gradients (1/2 each at a tie)."""
    a, b = _tensors(a, b, "logaddexp")
    hi = tf.where(a > b, a + tf.nn.softplus(b - a), b + tf.nn.softplus(a - b))
    return tf.where(a == b, 0.5 * a + 0.5 * b + math.log(2.0), hi)


def _as_dtype(value: Any, dtype: Any) -> Any:
    """``value`` in ``dtype``; a Python float goes straight to float64 (``tf.cast`` of a Python
    float goes through float32 first: 0.1 -> 0.10000000149)."""
    if tf.is_tensor(value):
        return tf.cast(value, dtype)
    return tf.constant(value, dtype=dtype)


def _clip(a: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - array API names
    if min is not None:
        a = tf.maximum(a, min)
    if max is not None:
        a = tf.minimum(a, max)
    return a


def _where(cond: Any, a: Any, b: Any) -> Any:
    a, b = _tensors(a, b, "where")
    return tf.where(cond, a, b)


def _size(a: Any) -> Any:
    """Element count: a Python int when the shape is static, else a scalar of ``a``'s dtype."""
    n = a.shape.num_elements()
    return int(n) if n is not None else tf.cast(tf.size(a), a.dtype)


#: The ops namespace, with the same names as :data:`optcmp.frameworks.numpy.ops.ops`.
ops = SimpleNamespace(
    name="tensorflow",
    matmul=_matmul,
    mean=_mean,
    sum=_sum,
    max=lambda a, axis=None: tf.reduce_max(a, axis=axis),
    min=lambda a, axis=None: tf.reduce_min(a, axis=axis),
    reshape=tf.reshape,
    sqrt=tf.sqrt,
    exp=tf.exp,
    expm1=tf.math.expm1,
    log=tf.math.log,
    log1p=tf.math.log1p,
    square=tf.square,
    pow=tf.pow,
    power=tf.pow,
    abs=tf.abs,
    sign=tf.sign,
    maximum=tf.maximum,
    minimum=tf.minimum,
    clip=_clip,
    where=_where,
    tanh=tf.tanh,
    sin=tf.sin,
    cos=tf.cos,
    atan=tf.math.atan,  # the helical valley (MGH 7)
    sigmoid=tf.sigmoid,
    softplus=lambda a: _logaddexp(0.0, a),
    logaddexp=_logaddexp,
    logsumexp=lambda a, axis=None: tf.reduce_logsumexp(a, axis=axis),
    softmax=lambda a, axis=-1: tf.nn.softmax(a, axis=axis),
    ones_like=tf.ones_like,
    zeros_like=tf.zeros_like,
    full_like=lambda a, fill: tf.fill(tf.shape(a), _as_dtype(fill, a.dtype)),
    permute_dims=lambda a, axes=None: tf.transpose(a, perm=axes),
    transpose=lambda a, axes=None: tf.transpose(a, perm=axes),
    concat=lambda arrays, axis=0: tf.concat(list(arrays), axis=axis),
    stack=lambda arrays, axis=0: tf.stack(list(arrays), axis=axis),
    norm=_norm,
    size=_size,  # element count (gradients by hand)
    vecdot=lambda a, b, axis=-1: tf.reduce_sum(a * b, axis=axis),
)


def host_value_and_grad(objective: Callable[..., Any], cached: Callable[..., Any]
                        ) -> Callable[[np.ndarray, dict[str, Any]], tuple[float, np.ndarray]]:
    """``(x, batch) -> (fun, grad)`` of ``objective(ops, x, batch)`` in float64 by a gradient tape
    on the CPU (:func:`optcmp.frameworks.host.host_value_and_grad`); ``cached`` keeps converted
    batches."""
    def tensor(a: Any) -> Any:
        arr = np.asarray(a)
        with tf.device("/CPU:0"):
            if np.issubdtype(arr.dtype, np.floating):
                return tf.constant(arr, dtype=tf.float64)
            return tf.constant(arr)

    data = cached(lambda batch: {k: tensor(v) for k, v in batch.items()})

    def value_and_grad(x: np.ndarray, batch: dict[str, Any]) -> tuple[float, np.ndarray]:
        xt = tensor(np.asarray(x, dtype=np.float64))
        with tf.GradientTape() as tape:
            tape.watch(xt)
            f = objective(ops, xt, data(batch))
        g = tape.gradient(f, xt)
        return float(np.asarray(f.numpy())), np.array(g.numpy(), dtype=np.float64, copy=True)

    return value_and_grad


__all__ = ["host_value_and_grad", "ops", "tf"]
