"""The PyTorch backend: autograd gradients, eager steps without host round trips, CUDA sync.

Data and the iterate are converted once (``torch.tensor`` copies, so an in-place update never
writes into the problem's numpy arrays) and placed on the device before any timing. A step
computes the objective and its gradient with ``torch.autograd.grad`` on a detached leaf and
applies the :class:`~optcmp.optimizers.base.UpdateRule` under ``torch.no_grad()``; the
objective value and the gradient norm stay device scalars, read by the monitor off the clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from optcmp.backends.base import Backend, StepFn, ValueGradFn

if TYPE_CHECKING:
    from optcmp.optimizers.base import UpdateRule
    from optcmp.problems.base import Problem

_DTYPES = {"float64": torch.float64, "float32": torch.float32}


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


def _transpose(a: torch.Tensor, axes: Sequence[int] | None = None) -> torch.Tensor:
    if axes is None:
        axes = tuple(range(a.ndim - 1, -1, -1))
    return a.permute(*axes)


def _norm(a: torch.Tensor) -> torch.Tensor:
    a = torch.reshape(a, (-1,))
    return torch.sqrt(torch.dot(a, a))


#: The ops namespace, with the same names as :data:`optcmp.backends.numpy_.ops`.
ops = SimpleNamespace(
    name="torch",
    matmul=torch.matmul,
    mean=_mean,
    sum=_sum,
    reshape=torch.reshape,
    sqrt=torch.sqrt,
    exp=torch.exp,
    log=torch.log,
    square=torch.square,
    abs=torch.abs,
    maximum=_maximum,
    sigmoid=torch.sigmoid,
    logsumexp=_logsumexp,
    softmax=lambda a, axis=-1: torch.softmax(a, dim=axis),
    ones_like=torch.ones_like,
    zeros_like=torch.zeros_like,
    transpose=_transpose,
    concat=lambda arrays, axis=0: torch.cat(tuple(arrays), dim=axis),
    norm=_norm,
    where=torch.where,
)


def torch_device(device: str | None) -> torch.device:
    """The :class:`torch.device` for an optcmp device name.

    Parameters
    ----------
    device : str or None
        ``"cpu"`` (default), ``"cuda"``, ``"cuda:N"`` or ``"gpu"`` (= ``"cuda"``).

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        An unknown device name, or a CUDA device that is absent; the message lists the devices
        that are available.
    """
    name = "cpu" if device is None else str(device).strip().lower()
    if name == "gpu":
        name = "cuda"
    if name.startswith("gpu:"):
        name = "cuda:" + name[4:]
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        available = ["cpu"] + [f"cuda:{i}" for i in range(n)]
        index = 0
        if name.startswith("cuda:"):
            try:
                index = int(name[5:])
            except ValueError:
                raise ValueError(f"device {device!r} is not a valid CUDA device name; "
                                 f"available devices: {available}") from None
        if index >= n or index < 0:
            raise ValueError(f"torch device {device!r} is not available (torch "
                             f"{torch.__version__}, CUDA {'built' if torch.version.cuda else 'not built'}); "
                             f"available devices: {available}")
        return torch.device("cuda", index)
    raise ValueError(f"unknown torch device {device!r}; use 'cpu', 'cuda', 'cuda:N' or 'gpu'")


class TorchBackend(Backend):
    """PyTorch on the CPU or a CUDA device.

    Parameters
    ----------
    device : str, optional
        ``"cpu"`` (default), ``"cuda"``, ``"cuda:N"`` or ``"gpu"``.
    dtype : {"float64", "float32"}, default "float64"

    Raises
    ------
    ValueError
        A bad dtype, or a device that is unknown or absent (available devices listed).

    Notes
    -----
    :meth:`sync` calls ``torch.cuda.synchronize(device)`` on CUDA (kernels run asynchronously, so
    the clock would otherwise time only their enqueueing); it is a no-op on the CPU.
    """

    name = "torch"
    ops = ops

    def __init__(self, device: str | None = None, dtype: str = "float64") -> None:
        super().__init__(device, dtype)
        self.torch_device = torch_device(device)
        self.device = str(self.torch_device)
        self.torch_dtype = _DTYPES[self.dtype]
        self._cuda = self.torch_device.type == "cuda"

    @property
    def version(self) -> str:
        return str(torch.__version__)

    # ------------------------------------------------------------------ arrays
    def asarray(self, a: Any) -> torch.Tensor:
        if isinstance(a, torch.Tensor):
            t = a.detach()
            if t.is_floating_point():
                return t.to(device=self.torch_device, dtype=self.torch_dtype)
            return t.to(device=self.torch_device)
        arr = np.asarray(a)
        if np.issubdtype(arr.dtype, np.floating):
            return torch.tensor(arr, dtype=self.torch_dtype, device=self.torch_device)
        return torch.tensor(arr, device=self.torch_device)

    def to_numpy(self, t: Any) -> np.ndarray:
        if isinstance(t, torch.Tensor):
            return np.array(t.detach().cpu().numpy(), copy=True)
        return np.array(t, copy=True)

    def index_array(self, idx: np.ndarray) -> torch.Tensor:
        return torch.tensor(np.asarray(idx, dtype=np.int64), dtype=torch.int64,
                            device=self.torch_device)

    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        if isinstance(idx, slice):
            return {k: v[idx] for k, v in data.items()}
        return {k: torch.index_select(v, 0, idx) for k, v in data.items()}

    def copy(self, t: Any) -> torch.Tensor:
        return t.detach().clone()

    def sync(self) -> None:
        if self._cuda:
            torch.cuda.synchronize(self.torch_device)

    # ------------------------------------------------------------------ compiled functions
    def make_value_and_grad(self, problem: Problem) -> ValueGradFn:
        objective = problem.objective
        o = self.ops

        def value_and_grad(x: Any, batch: dict[str, Any]) -> tuple[Any, Any]:
            xg = x.detach().requires_grad_(True)
            with torch.enable_grad():
                f = objective(o, xg, batch)
                (g,) = torch.autograd.grad(f, xg)
            return f.detach(), g

        return value_and_grad

    def make_step(self, problem: Problem, rule: UpdateRule, hyper: dict[str, float], *,
                  grad_norm: bool = True) -> StepFn:
        vg = self.make_value_and_grad(problem)
        update = rule.update
        o = self.ops
        hp = dict(hyper)

        def step(x: Any, state: tuple[Any, ...], batch: dict[str, Any], curv: Any) -> Any:
            fun, g = vg(x, batch)
            with torch.no_grad():
                gnorm = torch.sqrt(torch.dot(g, g)) if grad_norm else None
                x, state = update(o, x, g, state, hp, curv)
            return fun, gnorm, x, state

        return step
