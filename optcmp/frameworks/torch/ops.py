"""The PyTorch ops namespace: :data:`optcmp.frameworks.ops.OPS` with PyTorch's functions.

Semantics follow numpy where the two differ (``sign(nan)`` is nan, ``logaddexp`` has exact
gradients at a tie, a Python number beside a tensor takes the tensor's dtype and device).
Importing this module imports torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from optcmp.frameworks.ops import ELEMENTWISE, exact_logaddexp, two_numbers


def _reduce(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """``fn(a)`` over every element, or ``fn(a, dim=axis)``: numpy's ``axis`` (and ``out``)."""
    def reduce(a: torch.Tensor, axis: int | Sequence[int] | None = None,
               out: torch.Tensor | None = None) -> torch.Tensor:
        if axis is None and out is None:
            return fn(a)
        dim = (tuple(range(a.ndim)) if axis is None else axis if isinstance(axis, int)
               else tuple(axis))
        return fn(a, dim=dim) if out is None else fn(a, dim=dim, out=out)
    return reduce


def _elementwise(both: Callable[..., torch.Tensor], clamp: Callable[..., torch.Tensor]
                 ) -> Callable[[Any, Any], torch.Tensor]:
    """``maximum`` or ``minimum``: ``clamp`` against a Python number, else ``both``."""
    def op(a: Any, b: Any) -> torch.Tensor:
        if not isinstance(a, torch.Tensor):
            a, b = b, a
        if not isinstance(b, torch.Tensor):
            return clamp(a, b)
        return both(a, b)
    return op


def _tensors(a: Any, b: Any, op: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``a`` and ``b`` as tensors; a Python number takes the other's dtype and device."""
    if isinstance(a, torch.Tensor):
        return a, b if isinstance(b, torch.Tensor) else torch.as_tensor(
            b, dtype=a.dtype, device=a.device)
    if isinstance(b, torch.Tensor):
        return torch.as_tensor(a, dtype=b.dtype, device=b.device), b
    raise two_numbers(op, a)


def _logsumexp(a: torch.Tensor, axis: int | Sequence[int] | None = None) -> torch.Tensor:
    if axis is None:
        a, axis = torch.reshape(a, (-1,)), 0
    return torch.logsumexp(a, dim=axis if isinstance(axis, int) else tuple(axis))


def _clip(a: torch.Tensor, min: Any = None, max: Any = None) -> torch.Tensor:  # noqa: A002
    return a if min is None and max is None else torch.clamp(a, min, max)


def _transpose(a: torch.Tensor, axes: Sequence[int] | None = None) -> torch.Tensor:
    if axes is None:
        axes = tuple(range(a.ndim - 1, -1, -1))
    return a.permute(*axes)


def _norm(a: torch.Tensor) -> torch.Tensor:
    a = torch.reshape(a, (-1,))
    return torch.sqrt(torch.dot(a, a))


_logaddexp = exact_logaddexp(_tensors, torch.where, F.softplus)


#: The ops namespace, with the same names as :data:`optcmp.frameworks.numpy.ops.ops`.
ops = SimpleNamespace(
    name="torch",
    **{n: getattr(torch, n) for n in (*ELEMENTWISE, "matmul", "reshape", "sigmoid", "ones_like",
                                      "zeros_like", "full_like")},
    mean=_reduce(torch.mean),
    sum=_reduce(torch.sum),
    max=_reduce(torch.amax),
    min=_reduce(torch.amin),
    pow=torch.pow,
    power=torch.pow,
    sign=lambda a: torch.where(torch.isnan(a), a, torch.sign(a)),  # sign(nan) is nan (numpy)
    maximum=_elementwise(torch.maximum, torch.clamp_min),
    minimum=_elementwise(torch.minimum, torch.clamp_max),
    clip=_clip,
    where=lambda cond, a, b: torch.where(cond, *_tensors(a, b, "where")),
    atan=torch.atan,  # the helical valley (MGH 7)
    softplus=lambda a: _logaddexp(0.0, a),
    logaddexp=_logaddexp,
    logsumexp=_logsumexp,
    softmax=lambda a, axis=-1: torch.softmax(a, dim=axis),
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
    """:func:`optcmp.frameworks.host.host_value_and_grad` by autograd on the CPU; ``cached``
    keeps converted batches."""
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
