"""The PyTorch backend: autograd gradients, eager execution without host round trips, CUDA sync.

Why the iterate is a copy and the training arrays are shared: see docs/backends.md, "The
framework backends".
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from optcmp.frameworks.base import (
    Backend,
    ValueGradFn,
    analytic_value_and_grad,
    check_layout,
    kept_host,
    layout_arrays,
)
from optcmp.frameworks.torch.ops import ops
from optcmp.problems._scratch import work_arrays

if TYPE_CHECKING:
    from optcmp.frameworks.reuse import ReuseKey
    from optcmp.problems.base import Problem

_DTYPES = {"float64": torch.float64, "float32": torch.float32}


def torch_device(device: str | None) -> torch.device:
    """The :class:`torch.device` for an optcmp device name."""
    name = "cpu" if device is None else str(device).strip().lower()
    if name == "cpu":
        return torch.device("cpu")
    kind, colon, num = name.partition(":")
    if kind not in ("cuda", "gpu"):
        raise ValueError(f"unknown torch device {device!r}; use 'cpu', 'cuda', 'cuda:N' or 'gpu'")
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    available = ["cpu"] + [f"cuda:{i}" for i in range(n)]
    try:
        index = int(num) if colon else 0
    except ValueError:
        raise ValueError(f"device {device!r} is not a valid CUDA device name; "
                         f"available devices: {available}") from None
    if index >= n or index < 0:
        cuda = "built" if torch.version.cuda else "not built"
        raise ValueError(f"torch device {device!r} is not available (torch "
                         f"{torch.__version__}, CUDA {cuda}); available devices: {available}")
    return torch.device("cuda", index)


def _kept_like(y: Any) -> Any:
    """A residual array like the CPU float64 ``y``: the host evaluation's own work array of that
    shape (each call writes it whole before reading it), so a run holds one; else a new one."""
    host = y.device.type == "cpu" and y.dtype == torch.float64
    kept = work_arrays(tuple(y.shape), np.float64, 1) if host else None
    return torch.zeros_like(y) if kept is None else torch.from_numpy(kept[0])


def residual_work() -> dict[str, Any]:
    """The work dict of a problem's ``gradient_into``: its residual made by :func:`_kept_like`."""
    return {"like": _kept_like}


class TorchBackend(Backend):
    """PyTorch on the CPU or a CUDA device."""

    name = "torch"
    ops = ops
    capabilities = frozenset({"autodiff", "gpu"})
    slices_are_views = True
    host_work = True

    def __init__(self, device: str | None = None, dtype: str = "float64") -> None:
        super().__init__(device, dtype)
        self.torch_device = torch_device(device)
        self.device = str(self.torch_device)
        self.torch_dtype = _DTYPES[self.dtype]
        self.np_dtype = np.dtype(self.dtype)
        self._cuda = self.torch_device.type == "cuda"

    @property
    def version(self) -> str:
        return str(torch.__version__)

    # ------------------------------------------------------------------ arrays
    def asarray(self, a: Any) -> torch.Tensor:
        if isinstance(a, torch.Tensor):
            t = a.detach()
            dtype = self.torch_dtype if t.is_floating_point() else None
            return t.to(device=self.torch_device, dtype=dtype)
        arr = np.asarray(a)
        dtype = self.torch_dtype if np.issubdtype(arr.dtype, np.floating) else None
        return torch.tensor(arr, dtype=dtype, device=self.torch_device)

    def _place_sharing(self, data: dict[str, np.ndarray], layout: str,
                       transposed: Sequence[str], keep: ReuseKey | None
                       ) -> tuple[dict[str, Any], bool]:
        """The training arrays as tensors; on the CPU they share host memory the problem
        holds (``torch.from_numpy``: no copy per run): its arrays in the run's dtype, those
        held transposed or column-major too (views of a problem's column-major matrix), else
        the row-major copy it keeps under ``keep`` (:func:`~optcmp.frameworks.base.kept_host`)."""
        fortran = check_layout(layout) == "column-major"
        out, shared = {}, True
        for k, v in layout_arrays(data, layout, transposed).items():
            out[k], own = self._shared(v, fortran, keep, k)
            shared = shared and own
        return out, shared

    def _shared(self, a: Any, fortran: bool = False, keep: ReuseKey | None = None,
                name: str = "") -> tuple[torch.Tensor, bool]:
        """The tensor of ``a`` and whether it shares ``a``'s memory or the problem's kept copy."""
        arr = a if isinstance(a, np.ndarray) else None
        if arr is None:
            return self.asarray(a), False
        if fortran and arr.ndim == 2 and arr.flags.f_contiguous and not arr.flags.c_contiguous:
            t, shared = self._shared(arr.T, False, keep, name)  # the transpose of a row-major tensor
            return t.T, shared
        if self._cuda:  # copied to the device row-major (torch.tensor would keep the strides)
            return self.asarray(np.ascontiguousarray(arr)), False
        dt = self.np_dtype if np.issubdtype(arr.dtype, np.floating) else \
            arr.dtype.newbyteorder("=")
        arr = kept_host(arr, dt, keep, name, align=False)
        shared = arr.dtype == dt and arr.flags.c_contiguous
        if not shared:  # a private row-major copy (torch.tensor would keep the strides)
            arr = np.ascontiguousarray(arr, dtype=dt)
        with warnings.catch_warnings():  # a problem's read-only data: runs never write to it
            warnings.filterwarnings("ignore", "The given NumPy array is not writable")
            return torch.from_numpy(arr), shared

    def to_numpy(self, t: Any) -> np.ndarray:
        return np.array(t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t, copy=True)

    def index_array(self, idx: np.ndarray) -> torch.Tensor:
        return torch.tensor(np.asarray(idx, dtype=np.int64), dtype=torch.int64,
                            device=self.torch_device)

    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        if isinstance(idx, slice):  # a column-major array's rows copied row-major, as gathers are
            return {k: v[idx].contiguous() for k, v in data.items()}
        return {k: torch.index_select(v, 0, idx) for k, v in data.items()}

    def copy(self, t: Any) -> torch.Tensor:
        return t.detach().clone()

    def sync(self) -> None:
        if self._cuda:
            torch.cuda.synchronize(self.torch_device)

    def timing_contract(self) -> dict[str, Any]:
        """The barrier, compute dtype and matmul precision (``"tf32"`` where float32 products on
        CUDA may use TF32)."""
        precision = str(torch.get_float32_matmul_precision())
        if self.dtype == "float32" and self._cuda and torch.backends.cuda.matmul.allow_tf32:
            precision = "tf32"
        if self.dtype == "float64":
            precision = "highest"  # float64 products never use reduced-precision passes
        return {"barrier": "torch.cuda.synchronize" if self._cuda else "none (synchronous)",
                "compute_dtype": self.dtype, "matmul_precision": precision}

    # ------------------------------------------------------------------ functions
    def compilations(self) -> int:
        """Graphs a user's ``torch.compile`` compiled in this process so far (optcmp's steps are
        eager); ``torch._dynamo`` is never imported here."""
        dynamo_utils = sys.modules.get("torch._dynamo.utils")
        if dynamo_utils is None:
            return 0
        counters = getattr(dynamo_utils, "counters", {})
        return int(counters.get("stats", {}).get("unique_graphs", 0))

    def value_and_grad(self, problem: Problem, gradient: str = "auto") -> ValueGradFn:
        analytic = analytic_value_and_grad(self, problem, gradient)  # gradient_ops, no tape
        into = getattr(problem, "gradient_into", None)
        if analytic is not None and into is not None:  # the same, on a reused residual
            work = residual_work()
            o = self.ops
            return lambda x, batch: into(o, x, batch, work)
        if analytic is not None:
            return analytic
        objective = problem.objective
        o = self.ops

        def value_and_grad(x: Any, batch: dict[str, Any]) -> tuple[Any, Any]:
            xg = x.detach().requires_grad_(True)
            with torch.enable_grad():
                f = objective(o, xg, batch)
                (g,) = torch.autograd.grad(f, xg)
            return f.detach(), g

        return value_and_grad

    def hessian_vector_product(self, problem: Problem, data: dict[str, Any]
                               ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """Double backward through ``torch.autograd.grad``, eager."""
        objective, o = problem.objective, self.ops

        def hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
            xt = self.asarray(x).detach().clone().requires_grad_(True)
            f = objective(o, xt, data)
            (g,) = torch.autograd.grad(f, xt, create_graph=True)
            (hv,) = torch.autograd.grad(g, xt, grad_outputs=self.asarray(v))
            return np.asarray(self.to_numpy(hv), dtype=np.float64).reshape(-1)

        return hvp

    # ------------------------------------------------------------------ threads
    @classmethod
    def get_threads(cls) -> int | None:
        """``torch.get_num_threads()``: threads of the intra-op pool."""
        return int(torch.get_num_threads())

    @classmethod
    def set_threads(cls, n: int) -> Callable[[], None] | None:
        """``torch.set_num_threads(n)``; returns the call restoring the previous count."""
        old = torch.get_num_threads()
        torch.set_num_threads(int(n))
        return lambda: torch.set_num_threads(old)
