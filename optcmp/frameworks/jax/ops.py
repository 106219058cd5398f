"""The JAX ops namespace: :data:`optcmp.frameworks.ops.OPS` with ``jax.numpy``'s functions.

Semantics follow numpy where the two differ (``logaddexp`` with exact gradients at a tie, a Python
float fill exact in float64). Importing this module starts no JAX runtime and changes neither
``XLA_FLAGS`` nor ``jax_enable_x64`` (the JAX backend sets both where a run is set up).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp as _jlogsumexp

from optcmp.frameworks.ops import ELEMENTWISE, clip_by, exact_logaddexp, two_numbers


def _arrays(a: Any, b: Any, op: str) -> tuple[Any, Any]:
    """``a`` and ``b`` as arrays; a Python number takes the other's dtype."""
    if isinstance(a, jax.Array):
        return a, b if isinstance(b, jax.Array) else jnp.asarray(b, dtype=a.dtype)
    if isinstance(b, jax.Array):
        return jnp.asarray(a, dtype=b.dtype), b
    raise two_numbers(op, a)


_logaddexp = exact_logaddexp(_arrays, jnp.where, jax.nn.softplus)


def _norm(a: Any) -> Any:
    a = jnp.reshape(a, (-1,))
    return jnp.sqrt(jnp.dot(a, a, precision=jax.lax.Precision.HIGHEST))


def _axis(axis: int | Sequence[int] | None) -> int | tuple[int, ...] | None:
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


#: The ops namespace, with the same names as :data:`optcmp.frameworks.numpy.ops.ops`. ``matmul`` and
#: ``norm`` ask XLA for full precision (no reduced-precision TF32/bf16 passes on a GPU).
ops = SimpleNamespace(
    name="jax",
    **{n: getattr(jnp, n) for n in (*ELEMENTWISE, "reshape", "sign", "maximum", "minimum",
                                    "ones_like", "zeros_like")},
    matmul=lambda a, b: jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST),
    mean=lambda a, axis=None: jnp.mean(a, axis=_axis(axis)),
    sum=lambda a, axis=None: jnp.sum(a, axis=_axis(axis)),
    max=lambda a, axis=None: jnp.max(a, axis=_axis(axis)),
    min=lambda a, axis=None: jnp.min(a, axis=_axis(axis)),
    pow=jnp.power,
    power=jnp.power,
    clip=clip_by(jnp.maximum, jnp.minimum),
    where=lambda cond, a, b: jnp.where(cond, *_arrays(a, b, "where")),
    atan=jnp.arctan,  # the helical valley (MGH 7)
    sigmoid=jax.nn.sigmoid,
    softplus=lambda a: _logaddexp(0.0, a),
    logaddexp=_logaddexp,
    logsumexp=lambda a, axis=None: _jlogsumexp(a, axis=_axis(axis)),
    softmax=lambda a, axis=-1: jax.nn.softmax(a, axis=axis),
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
