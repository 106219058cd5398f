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


#: Rows shorter than this are summed one column after another by numpy's ``add.reduce``
#: (longer ones pairwise, 8 at a time): :func:`row_sum` adds the columns in that order.
SHORT_ROW = 8


def _plain_float(a: Any) -> bool:
    """A plain ndarray of native float32 or float64 (numpy sums float16 in float32, complex
    rows pairwise; subclasses and masks have their own sums)."""
    return type(a) is np.ndarray and a.dtype.char in "fd" and a.dtype.isnative


def row_sum(a: np.ndarray) -> np.ndarray:
    """``np.sum(a, axis=1)`` of a 2-D array, to the bit: a short row's columns added in
    order, one vectorized pass per column (numpy's reduction along a row of a few elements
    costs 10-20 us per 1,000 rows)."""
    k = a.shape[1]
    if not 0 < k < SHORT_ROW or not _plain_float(a):
        return np.sum(a, axis=1)
    s = a[:, 0] + 0.0  # numpy's sum starts from +0.0: -0.0 alone sums to +0.0
    for j in range(1, k):
        s += a[:, j]
    return s


def row_logsumexp(a: np.ndarray) -> np.ndarray:
    """``scipy.special.logsumexp(a, axis=1, keepdims=True)`` of a 2-D float array, to the bit
    (scipy's algorithm: each row's largest terms taken out of the sum, ``log1p`` of the rest's
    sum over their count, plus the log of the count and the maximum), computed on the
    transposed columns of a short row (:func:`row_sum`'s order): a fifth of scipy's time on
    900 x 4, and the same answer whatever scipy's version."""
    if a.ndim != 2 or not _plain_float(a) or not 0 < a.shape[1] < SHORT_ROW:
        return special().logsumexp(a, axis=1, keepdims=True)
    cols = np.ascontiguousarray(a.T)  # one row per column: long inner loops
    top = np.max(cols, axis=0)  # NaN propagates
    is_top = cols == top
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        rest = np.where(is_top, -np.inf, cols)
        rest -= top
        np.exp(rest, out=rest)
    s = rest[0].copy()  # the columns in order, as numpy sums a short row
    for r in rest[1:]:
        s += r
    counts = np.count_nonzero(is_top, axis=0)
    if np.all(counts == 1):  # one largest term per row: log(m) = 0, s / m = s
        out = np.log1p(s)
        out += top
    else:
        m = counts.astype(a.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(s == 0, s, s / m)
            negative = np.sign(s + 1) * np.sign(m) < 0
            s = np.where(s < -1, -s - 2, s)
            out = np.log1p(s) + np.log(np.abs(m)) + top
        out[negative] = np.nan
    bad = ~np.isfinite(out)
    if bad.any():  # as scipy: a row with no finite answer is log(sum(exp(row)))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out[bad] = np.log(np.sum(np.exp(a[bad]), axis=1))
    return out[:, None]


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
    logsumexp=lambda a, axis=None: (
        row_logsumexp(a)[:, 0] if axis in (1, -1) and isinstance(a, np.ndarray) and a.ndim == 2
        else special().logsumexp(a, axis=axis)),
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
