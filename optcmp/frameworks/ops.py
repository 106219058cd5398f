"""The ops namespaces: array functions problems and reference update rules are written against.

One namespace per framework (``<framework>/ops.py``) with the same names (:data:`OPS`, after the
Python array API standard); the ops modules are leaves (docs/architecture.md). XLA reads
``XLA_FLAGS`` once, when JAX starts, so :func:`pin_xla_threads` adds its flags where a run is set
up, never on import (docs/backends.md, "The framework backends").
"""

import math
import os
import sys
from collections.abc import Callable
from typing import Any

#: The names every ops namespace defines (checked by the tests).
OPS = ("name", "matmul", "mean", "sum", "max", "min", "reshape", "sqrt", "exp", "expm1", "log",
       "log1p", "square", "pow", "power", "abs", "sign", "maximum", "minimum", "clip", "where",
       "tanh", "sin", "cos", "atan", "sigmoid", "softplus", "logaddexp", "logsumexp", "softmax",
       "ones_like", "zeros_like", "full_like", "permute_dims", "transpose", "concat", "stack",
       "norm", "vecdot", "size")

#: The names of :data:`OPS` that are the framework's own function of that name on every framework
#: (``tf.math``'s on TensorFlow).
ELEMENTWISE = ("sqrt", "exp", "expm1", "log", "log1p", "square", "abs", "tanh", "sin", "cos")


def two_numbers(op: str, a: object) -> TypeError:
    """The error of a binary op given two Python numbers (the result's dtype is unknown)."""
    return TypeError(f"ops.{op}: give at least one of the two values as an array (e.g. "
                     f"ops.zeros_like(x) + {a!r}); got two Python numbers")


def clip_by(maximum: Callable[..., Any], minimum: Callable[..., Any]) -> Callable[..., Any]:
    """``clip(a, min=None, max=None)`` from a framework's ``maximum`` and ``minimum``."""
    def clip(a: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - array API names
        if min is not None:
            a = maximum(a, min)
        if max is not None:
            a = minimum(a, max)
        return a
    return clip


def exact_logaddexp(pair: Callable[..., tuple[Any, Any]], where: Callable[..., Any],
                    softplus: Callable[..., Any]) -> Callable[[Any, Any], Any]:
    """numpy's ``logaddexp`` with exact gradients (1/2 each at a tie), from a framework's
    ``where`` and ``softplus``; ``pair(a, b, op)`` makes both arguments arrays."""
    def logaddexp(a: Any, b: Any) -> Any:
        a, b = pair(a, b, "logaddexp")
        hi = where(a > b, a + softplus(b - a), b + softplus(a - b))
        return where(a == b, 0.5 * a + 0.5 * b + math.log(2.0), hi)
    return logaddexp

#: XLA CPU flags that make every JAX computation run on one thread (Eigen's thread pool off, one
#: intra-op thread); added to ``XLA_FLAGS`` by :func:`pin_xla_threads` before JAX starts.
XLA_CPU_FLAGS = ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1")

#: Set when :func:`pin_xla_threads` found JAX started without :data:`XLA_CPU_FLAGS`.
_STARTED_UNPINNED: list[bool] = []


def jax_started() -> bool:
    """Whether JAX's runtime has started in this process (its backends are initialized)."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):  # another JAX: imported counts as started
        return True


def pin_xla_threads() -> bool:
    """Add :data:`XLA_CPU_FLAGS` to ``XLA_FLAGS`` when JAX has not started yet (they stay)."""
    flags = os.environ.get("XLA_FLAGS", "")
    missing = [f for f in XLA_CPU_FLAGS if f.split("=")[0] not in flags]
    if not missing:
        return not _STARTED_UNPINNED
    if jax_started():
        _STARTED_UNPINNED[:] = [True]
        return False
    os.environ["XLA_FLAGS"] = " ".join([flags, *missing]).strip()
    return True


def xla_cpu_threads() -> int | None:
    """Threads of XLA's CPU compute: 1 when :data:`XLA_CPU_FLAGS` were in force at JAX's start."""
    flags = os.environ.get("XLA_FLAGS", "")
    pinned = not _STARTED_UNPINNED and "--xla_cpu_multi_thread_eigen=false" in flags
    return 1 if pinned else None


__all__ = ["ELEMENTWISE", "OPS", "XLA_CPU_FLAGS", "clip_by", "exact_logaddexp", "jax_started",
           "pin_xla_threads", "two_numbers", "xla_cpu_threads"]
