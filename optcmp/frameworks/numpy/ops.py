"""The numpy ops namespace: the functions problems and reference update rules are written against.

Array API names (``matmul``, ``sum``, ``mean``, ``exp``, ...) with numpy's semantics; the torch and
TensorFlow namespaces (:mod:`optcmp.frameworks.torch.ops`, :mod:`optcmp.frameworks.tensorflow.ops`) define the same
names (:data:`optcmp.frameworks.ops.OPS`). scipy's special functions (``expit``, ``logsumexp``, ``softmax``)
are imported on the first call of the ops that use them, so ``import optcmp`` does not load
``scipy.special``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from optcmp._scipy import special


def norm2(a: np.ndarray) -> float:
    """2-norm of a vector that does not overflow while the entries are finite.

    ``sqrt(vdot(a, a))`` overflows once the entries pass ~1e154 (float64), which would flag a
    finite gradient as non-finite; the rescaled form is used only in that case.
    """
    s = float(np.vdot(a, a))
    if math.isfinite(s):
        return math.sqrt(s)
    m = float(np.max(np.abs(a))) if a.size else 0.0
    if not math.isfinite(m) or m == 0.0:
        return m
    b = a / m
    return m * math.sqrt(float(np.vdot(b, b)))


def _sum(a: np.ndarray, axis: int | None = None) -> Any:
    return np.sum(a, axis=axis)


def _mean(a: np.ndarray, axis: int | None = None) -> Any:
    return np.mean(a, axis=axis)


def _max(a: np.ndarray, axis: int | None = None) -> Any:
    return np.max(a, axis=axis)


def _min(a: np.ndarray, axis: int | None = None) -> Any:
    return np.min(a, axis=axis)


def _sigmoid(a: Any) -> Any:
    return special().expit(a)


def _logsumexp(a: Any, axis: int | None = None) -> Any:
    return special().logsumexp(a, axis=axis)


def _softmax(a: Any, axis: int = -1) -> Any:
    return special().softmax(a, axis=axis)


def _where(cond: Any, a: Any, b: Any) -> Any:
    if np.ndim(a) == 0 and np.ndim(b) == 0 and not isinstance(a, np.ndarray) \
            and not isinstance(b, np.ndarray):
        raise TypeError(f"ops.where: give at least one of the two values as an array (e.g. "
                        f"ops.zeros_like(x) + {a!r}); got two Python numbers")
    return np.where(cond, a, b)


def _clip(a: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - array API names
    return a if min is None and max is None else np.clip(a, min, max)


def _vecdot(a: Any, b: Any, axis: int = -1) -> Any:
    return np.sum(a * b, axis=axis)


#: The ops namespace problems and reference update rules are written against (array API names;
#: the same names on every backend, :data:`optcmp.frameworks.ops.OPS`).
ops = SimpleNamespace(
    name="numpy",
    matmul=np.matmul,
    mean=_mean,
    sum=_sum,
    max=_max,
    min=_min,
    reshape=np.reshape,
    sqrt=np.sqrt,
    exp=np.exp,
    expm1=np.expm1,
    log=np.log,
    log1p=np.log1p,
    square=np.square,
    pow=np.power,
    power=np.power,
    abs=np.abs,
    sign=np.sign,
    maximum=np.maximum,
    minimum=np.minimum,
    clip=_clip,
    where=_where,
    tanh=np.tanh,
    sin=np.sin,
    cos=np.cos,
    atan=np.arctan,  # the helical valley (MGH 7)
    sigmoid=_sigmoid,
    softplus=lambda a: np.logaddexp(0.0, a),
    logaddexp=np.logaddexp,
    logsumexp=_logsumexp,
    softmax=_softmax,
    ones_like=np.ones_like,
    zeros_like=np.zeros_like,
    full_like=np.full_like,
    permute_dims=np.transpose,
    transpose=np.transpose,
    concat=lambda arrays, axis=0: np.concatenate(arrays, axis=axis),
    stack=lambda arrays, axis=0: np.stack(arrays, axis=axis),
    norm=norm2,
    size=lambda a: int(np.size(a)),  # element count (gradients by hand)
    vecdot=_vecdot,
)


__all__ = ["norm2", "ops"]
