"""The TensorFlow ops namespace: :data:`optcmp.frameworks.ops.OPS` with TensorFlow's functions.

Semantics follow numpy where the two differ. Importing it imports TensorFlow (torch first when
installed: the reverse order has been seen to crash the process), with ``KERAS_BACKEND`` and
``TF_CPP_MIN_LOG_LEVEL`` defaults and without :data:`IMPORT_NOISE`; ``XLA_FLAGS`` is left alone.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from optcmp.frameworks.ops import ELEMENTWISE, clip_by, exact_logaddexp, two_numbers

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
    """``import tensorflow`` with :data:`IMPORT_NOISE` dropped from file descriptor 2 (a
    temporary file during the import; the other lines written back afterwards)."""
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
    raise two_numbers(op, a)


_logaddexp = exact_logaddexp(_tensors, tf.where, tf.nn.softplus)


def _as_dtype(value: Any, dtype: Any) -> Any:
    """``value`` in ``dtype``; a Python float goes straight to float64 (``tf.cast`` of a Python
    float goes through float32 first: 0.1 -> 0.10000000149)."""
    if tf.is_tensor(value):
        return tf.cast(value, dtype)
    return tf.constant(value, dtype=dtype)


def _size(a: Any) -> Any:
    """Element count: a Python int when the shape is static, else a scalar of ``a``'s dtype."""
    n = a.shape.num_elements()
    return int(n) if n is not None else tf.cast(tf.size(a), a.dtype)


#: The ops namespace, with the same names as :data:`optcmp.frameworks.numpy.ops.ops`.
ops = SimpleNamespace(
    name="tensorflow",
    **{n: getattr(tf.math, n) for n in (*ELEMENTWISE, "sign", "maximum", "minimum", "sigmoid")},
    ones_like=tf.ones_like,
    zeros_like=tf.zeros_like,
    matmul=_matmul,
    mean=lambda a, axis=None: tf.reduce_mean(a, axis=axis),
    sum=lambda a, axis=None: tf.reduce_sum(a, axis=axis),
    max=lambda a, axis=None: tf.reduce_max(a, axis=axis),
    min=lambda a, axis=None: tf.reduce_min(a, axis=axis),
    reshape=tf.reshape,
    pow=tf.pow,
    power=tf.pow,
    clip=clip_by(tf.maximum, tf.minimum),
    where=lambda cond, a, b: tf.where(cond, *_tensors(a, b, "where")),
    atan=tf.math.atan,  # the helical valley (MGH 7)
    softplus=lambda a: _logaddexp(0.0, a),
    logaddexp=_logaddexp,
    logsumexp=lambda a, axis=None: tf.reduce_logsumexp(a, axis=axis),
    softmax=lambda a, axis=-1: tf.nn.softmax(a, axis=axis),
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
    """:func:`optcmp.frameworks.host.host_value_and_grad` by a gradient tape on the CPU;
    ``cached`` keeps converted batches."""
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
