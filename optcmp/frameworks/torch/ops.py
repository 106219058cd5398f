"""The PyTorch ops namespace: the names of :data:`optcmp.frameworks.ops.OPS` with PyTorch's functions.

Semantics follow numpy where the two differ (``sign(nan)`` is nan, ``logaddexp`` has exact
gradients at a tie, a Python number beside a tensor takes the tensor's dtype and device).
Importing this module imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F


def _dims(axis: int | Sequence[int]) -> int | tuple[int, ...]:
    return axis if isinstance(axis, int) else tuple(axis)


def _mean(a: torch.Tensor, axis: int | Sequence[int] | None = None) -> torch.Tensor:
    return torch.mean(a) if axis is None else torch.mean(a, dim=_dims(axis))


def _sum(a: torch.Tensor, axis: int | Sequence[int] | None = None) -> torch.Tensor:
    return torch.sum(a) if axis is None else torch.sum(a, dim=_dims(axis))


def _logsumexp(a: torch.Tensor, axis: int | Sequence[int] | None = None) -> torch.Tensor:
    if axis is None:
        return torch.logsumexp(torch.reshape(a, (-1,)), dim=0)
    return torch.logsumexp(a, dim=_dims(axis))


def _maximum(a: Any, b: Any) -> torch.Tensor:
    if not isinstance(a, torch.Tensor):
        a, b = b, a
    if not isinstance(b, torch.Tensor):
        return torch.clamp_min(a, b)
    return torch.maximum(a, b)


def _minimum(a: Any, b: Any) -> torch.Tensor:
    if not isinstance(a, torch.Tensor):
        a, b = b, a
    if not isinstance(b, torch.Tensor):
        return torch.clamp_max(a, b)
    return torch.minimum(a, b)


def _max(a: torch.Tensor, axis: int | Sequence[int] | None = None) -> torch.Tensor:
    return torch.amax(a) if axis is None else torch.amax(a, dim=_dims(axis))


def _min(a: torch.Tensor, axis: int | Sequence[int] | None = None) -> torch.Tensor:
    return torch.amin(a) if axis is None else torch.amin(a, dim=_dims(axis))


def _tensors(a: Any, b: Any, op: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``a`` and ``b`` as tensors; a Python number takes the other's dtype and device."""
    if isinstance(a, torch.Tensor):
        return a, b if isinstance(b, torch.Tensor) else torch.as_tensor(
            b, dtype=a.dtype, device=a.device)
    if isinstance(b, torch.Tensor):
        return torch.as_tensor(a, dtype=b.dtype, device=b.device), b
    raise TypeError(f"ops.{op}: give at least one of the two values as an array (e.g. "
                    f"ops.zeros_like(x) + {a!r}); got two Python numbers")


def _logaddexp(a: Any, b: Any) -> torch.Tensor:
    """``log(exp(a) + exp(b))``: numpy's formula, exact gradients (1/2 each at a tie)."""
    a, b = _tensors(a, b, "logaddexp")
    hi = torch.where(a > b, a + F.softplus(b - a), b + F.softplus(a - b))
    return torch.where(a == b, 0.5 * a + 0.5 * b + math.log(2.0), hi)


def _where(cond: Any, a: Any, b: Any) -> torch.Tensor:
    a, b = _tensors(a, b, "where")
    return torch.where(cond, a, b)


def _clip(a: torch.Tensor, min: Any = None, max: Any = None) -> torch.Tensor:  # noqa: A002
    return a if min is None and max is None else torch.clamp(a, min, max)


def _sign(a: torch.Tensor) -> torch.Tensor:
    return torch.where(torch.isnan(a), a, torch.sign(a))  # sign(nan) is nan, as in numpy


def _pow(a: Any, b: Any) -> torch.Tensor:
    return torch.pow(a, b)


def _transpose(a: torch.Tensor, axes: Sequence[int] | None = None) -> torch.Tensor:
    if axes is None:
        axes = tuple(range(a.ndim - 1, -1, -1))
    return a.permute(*axes)


def _norm(a: torch.Tensor) -> torch.Tensor:
    a = torch.reshape(a, (-1,))
    return torch.sqrt(torch.dot(a, a))


#: The ops namespace, with the same names as :data:`optcmp.frameworks.numpy.ops.ops`.
ops = SimpleNamespace(
    name="torch",
    matmul=torch.matmul,
    mean=_mean,
    sum=_sum,
    max=_max,
    min=_min,
    reshape=torch.reshape,
    sqrt=torch.sqrt,
    exp=torch.exp,
    expm1=torch.expm1,
    log=torch.log,
    log1p=torch.log1p,
    square=torch.square,
    pow=_pow,
    power=_pow,
    abs=torch.abs,
    sign=_sign,
    maximum=_maximum,
    minimum=_minimum,
    clip=_clip,
    where=_where,
    tanh=torch.tanh,
    sin=torch.sin,
    cos=torch.cos,
    atan=torch.atan,  # the helical valley (MGH 7)
    sigmoid=torch.sigmoid,
    softplus=lambda a: _logaddexp(0.0, a),
    logaddexp=_logaddexp,
    logsumexp=_logsumexp,
    softmax=lambda a, axis=-1: torch.softmax(a, dim=axis),
    ones_like=torch.ones_like,
    zeros_like=torch.zeros_like,
    full_like=torch.full_like,
    permute_dims=_transpose,
    transpose=_transpose,
    concat=lambda arrays, axis=0: torch.cat(tuple(arrays), dim=axis),
    stack=lambda arrays, axis=0: torch.stack(tuple(arrays), dim=axis),
    norm=_norm,
    size=lambda a: int(a.numel()),  # element count (gradients by hand)
    vecdot=lambda a, b, axis=-1: torch.sum(a * b, dim=axis),
)


def host_value_and_grad(objective: Callable[..., Any], cached: Callable[..., Any]
                        ) -> Callable[[np.ndarray, dict[str, Any]], tuple[float, np.ndarray]]:
    """``(x, batch) -> (fun, grad)`` of ``objective(ops, x, batch)`` in float64 by autograd on the
    CPU (:func:`optcmp.frameworks.host.host_value_and_grad`); ``cached`` keeps converted batches."""
    def tensor(a: Any) -> Any:
        arr = np.asarray(a)
        if np.issubdtype(arr.dtype, np.floating):
            return torch.tensor(arr, dtype=torch.float64)
        return torch.tensor(arr)

    data = cached(lambda batch: {k: tensor(v) for k, v in batch.items()})

    def value_and_grad(x: np.ndarray, batch: dict[str, Any]) -> tuple[float, np.ndarray]:
        xg = tensor(np.asarray(x, dtype=np.float64)).requires_grad_(True)
        with torch.enable_grad():
            f = objective(ops, xg, data(batch))
            (g,) = torch.autograd.grad(f, xg)
        fun = float(np.array(f.detach().cpu().numpy(), copy=True))
        return fun, np.array(g.detach().cpu().numpy(), dtype=np.float64, copy=True)

    return value_and_grad


__all__ = ["host_value_and_grad", "ops"]
