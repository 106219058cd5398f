"""The JAX ops namespace: the names of :data:`optcmp.frameworks.ops.OPS` with ``jax.numpy``'s functions.

Semantics follow numpy where the two differ (``logaddexp`` with exact gradients at a tie, a Python
float fill exact in float64). Importing this module imports JAX without starting its runtime and
changes neither ``XLA_FLAGS`` nor ``jax_enable_x64``: the JAX backend sets both where a run or a
backend is set up (:func:`optcmp.frameworks.ops.pin_xla_threads`,
:class:`optcmp.frameworks.jax.backend.JaxBackend`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp as _jlogsumexp


def _matmul(a: Any, b: Any) -> Any:
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)


def _arrays(a: Any, b: Any, op: str) -> tuple[Any, Any]:
    """``a`` and ``b`` as arrays; a Python number takes the other's dtype."""
    if isinstance(a, jax.Array):
        return a, b if isinstance(b, jax.Array) else jnp.asarray(b, dtype=a.dtype)
    if isinstance(b, jax.Array):
        return jnp.asarray(a, dtype=b.dtype), b
    raise TypeError(f"ops.{op}: give at least one of the two values as an array (e.g. "
                    f"ops.zeros_like(x) + {a!r}); got two Python numbers")


def _logaddexp(a: Any, b: Any) -> Any:
    """``log(exp(a) + exp(b))``: numpy's formula, exact gradients (1/2 each at a tie)."""
    a, b = _arrays(a, b, "logaddexp")
    hi = jnp.where(a > b, a + jax.nn.softplus(b - a), b + jax.nn.softplus(a - b))
    return jnp.where(a == b, 0.5 * a + 0.5 * b + math.log(2.0), hi)


def _where(cond: Any, a: Any, b: Any) -> Any:
    a, b = _arrays(a, b, "where")
    return jnp.where(cond, a, b)


def _clip(a: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - array API names
    if min is not None:
        a = jnp.maximum(a, min)
    if max is not None:
        a = jnp.minimum(a, max)
    return a


def _norm(a: Any) -> Any:
    a = jnp.reshape(a, (-1,))
    return jnp.sqrt(jnp.dot(a, a, precision=jax.lax.Precision.HIGHEST))


def _axis(axis: int | Sequence[int] | None) -> int | tuple[int, ...] | None:
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


#: The ops namespace, with the same names as :data:`optcmp.frameworks.numpy.ops.ops`. ``matmul`` and
#: ``norm`` ask XLA for full precision (no reduced-precision TF32/bf16 passes on a GPU).
ops = SimpleNamespace(
    name="jax",
    matmul=_matmul,
    mean=lambda a, axis=None: jnp.mean(a, axis=_axis(axis)),
    sum=lambda a, axis=None: jnp.sum(a, axis=_axis(axis)),
    max=lambda a, axis=None: jnp.max(a, axis=_axis(axis)),
    min=lambda a, axis=None: jnp.min(a, axis=_axis(axis)),
    reshape=jnp.reshape,
    sqrt=jnp.sqrt,
    exp=jnp.exp,
    expm1=jnp.expm1,
    log=jnp.log,
    log1p=jnp.log1p,
    square=jnp.square,
    pow=jnp.power,
    power=jnp.power,
    abs=jnp.abs,
    sign=jnp.sign,
    maximum=jnp.maximum,
    minimum=jnp.minimum,
    clip=_clip,
    where=_where,
    tanh=jnp.tanh,
    sin=jnp.sin,
    cos=jnp.cos,
    atan=jnp.arctan,  # the helical valley (MGH 7)
    sigmoid=jax.nn.sigmoid,
    softplus=lambda a: _logaddexp(0.0, a),
    logaddexp=_logaddexp,
    logsumexp=lambda a, axis=None: _jlogsumexp(a, axis=_axis(axis)),
    softmax=lambda a, axis=-1: jax.nn.softmax(a, axis=axis),
    ones_like=jnp.ones_like,
    zeros_like=jnp.zeros_like,
    full_like=lambda a, fill: jnp.full_like(a, fill),
    permute_dims=lambda a, axes=None: jnp.transpose(a, axes),
    transpose=lambda a, axes=None: jnp.transpose(a, axes),
    concat=lambda arrays, axis=0: jnp.concatenate(list(arrays), axis=axis),
    stack=lambda arrays, axis=0: jnp.stack(list(arrays), axis=axis),
    norm=_norm,
    size=lambda a: int(a.size),  # element count (gradients by hand)
    vecdot=lambda a, b, axis=-1: jnp.sum(a * b, axis=axis),
)


__all__ = ["ops"]
