"""The numpy ops namespace: the functions problems and reference update rules are written against.

Array API names with numpy's semantics (:data:`optcmp.frameworks.ops.OPS`). scipy's special
functions are imported on the first call of the ops that use them, so ``import optcmp`` does not
load ``scipy.special``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from optcmp._scipy import special
from optcmp.frameworks.ops import ELEMENTWISE, two_numbers


def norm2(a: np.ndarray) -> float:
    """2-norm of a vector that does not overflow while the entries are finite (``sqrt(vdot)``
    past ~1e154 would flag a finite gradient non-finite; then rescaled)."""
    s = float(np.vdot(a, a))
    if math.isfinite(s):
        return math.sqrt(s)
    m = float(np.max(np.abs(a))) if a.size else 0.0
    if not math.isfinite(m) or m == 0.0:
        return m
    b = a / m
    return m * math.sqrt(float(np.vdot(b, b)))


def sigmoid(a: Any, out: np.ndarray | None = None) -> np.ndarray:
    """``1 / (1 + exp(-a))`` with numpy's vectorized ``exp`` (faster than
    ``scipy.special.expit``'s scalar loop, equal to it to rounding; 0 and 1 at the extremes);
    integers and booleans computed as float64."""
    if isinstance(a, np.ndarray) and a.dtype.kind == "f" and (out is None or out.dtype == a.dtype):
        r = np.negative(a, out=out)  # the steps' case: a float array
    else:
        a = np.asarray(a)
        r = np.negative(a, out=out, dtype=np.result_type(a.dtype, 1.0))  # checked, then written
    if not isinstance(r, np.ndarray):  # a scalar
        with np.errstate(over="ignore", under="ignore"):
            return 1.0 / (1.0 + np.exp(r))
    return sigmoid_of_negated(r)


def sigmoid_of_negated(n: np.ndarray) -> np.ndarray:
    """``sigmoid(-n) = 1 / (1 + exp(n))``, written into the float array ``n``."""
    with np.errstate(over="ignore", under="ignore"):
        np.exp(n, out=n)
        n += 1.0
        return np.reciprocal(n, out=n)


def _where(cond: Any, a: Any, b: Any) -> Any:
    if np.ndim(a) == 0 and np.ndim(b) == 0 and not isinstance(a, np.ndarray) \
            and not isinstance(b, np.ndarray):
        raise two_numbers("where", a)
    return np.where(cond, a, b)


def _clip(a: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - array API names
    return a if min is None and max is None else np.clip(a, min, max)


#: The ops namespace (the same names on every backend, :data:`optcmp.frameworks.ops.OPS`).
ops = SimpleNamespace(
    name="numpy",
    **{n: getattr(np, n) for n in (*ELEMENTWISE, "matmul", "reshape", "sign", "maximum",
                                   "minimum", "logaddexp", "ones_like", "zeros_like",
                                   "full_like")},
    mean=lambda a, axis=None: np.mean(a, axis=axis),
    sum=lambda a, axis=None, out=None: np.sum(a, axis=axis, out=out),
    max=lambda a, axis=None: np.max(a, axis=axis),
    min=lambda a, axis=None: np.min(a, axis=axis),
    pow=np.power,
    power=np.power,
    clip=_clip,
    where=_where,
    atan=np.arctan,  # the helical valley (MGH 7)
    sigmoid=sigmoid,
    softplus=lambda a: np.logaddexp(0.0, a),
    logsumexp=lambda a, axis=None: special().logsumexp(a, axis=axis),
    softmax=lambda a, axis=-1: special().softmax(a, axis=axis),
    permute_dims=np.transpose,
    transpose=np.transpose,
    concat=lambda arrays, axis=0: np.concatenate(arrays, axis=axis),
    stack=lambda arrays, axis=0: np.stack(arrays, axis=axis),
    norm=norm2,
    size=lambda a: int(np.size(a)),  # element count (gradients by hand)
    vecdot=lambda a, b, axis=-1: np.sum(a * b, axis=axis),
)


__all__ = ["norm2", "ops"]
