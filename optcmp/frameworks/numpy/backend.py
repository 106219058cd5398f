"""The numpy backend: the problems' analytic gradients, no compiler, no device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from optcmp.frameworks.base import (
    Backend,
    ValueGradFn,
    check_layout,
    gradient_kind,
    kept_host,
)
from optcmp.frameworks.numpy.ops import ops

if TYPE_CHECKING:
    from optcmp.frameworks.reuse import ReuseKey
    from optcmp.problems.base import Problem


class NumpyBackend(Backend):
    """NumPy on the CPU: the reference backend, with the problems' analytic gradients."""

    name = "numpy"
    fortran = True
    ops = ops
    capabilities = frozenset()
    slices_are_views = True
    host_work = True

    def __init__(self, device: str | None = None, dtype: str = "float64") -> None:
        super().__init__(device, dtype)
        if self.device != "cpu":
            raise ValueError(f"the numpy backend runs on 'cpu' only, got device={device!r}")
        self._np_dtype = np.dtype(self.dtype)

    @property
    def version(self) -> str:
        return np.__version__

    def asarray(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        floating = np.issubdtype(a.dtype, np.floating)
        return np.ascontiguousarray(a, dtype=self._np_dtype if floating else None)

    def to_numpy(self, t: Any) -> np.ndarray:
        return np.array(t, copy=True)

    def _place_sharing(self, data: dict[str, np.ndarray], layout: str,
                       transposed: Sequence[str], keep: ReuseKey | None
                       ) -> tuple[dict[str, Any], bool]:
        """The arrays in ``dtype``; 2-D ones column-major (Fortran order) when asked (none is
        held transposed: numpy is :attr:`fortran`); arrays in that order and dtype already
        are the problem's own, shared, and a row-major one the problem holds otherwise is the
        copy it keeps under ``keep`` (:func:`~optcmp.frameworks.base.kept_host`)."""
        order: Literal["C", "F"] = "F" if check_layout(layout) == "column-major" else "C"
        out, shared = {}, True
        for k, v in data.items():
            a = np.asarray(v)
            dt = self._np_dtype if np.issubdtype(a.dtype, np.floating) else a.dtype
            if order == "C" or a.ndim != 2:
                a = kept_host(a, dt, keep, k, align=False)
            out[k] = np.asarray(a, dtype=dt, order=order if a.ndim == 2 else "C")
            shared = shared and out[k] is a
        return out, shared

    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        """Rows ``idx``; a slice of a column-major array copied row-major, as a gather of rows
        is: a batch's products are the same whichever layout holds the data."""
        rows = {k: v[idx] for k, v in data.items()}
        return {k: np.ascontiguousarray(v) for k, v in rows.items()} if isinstance(
            idx, slice) else rows

    @property
    def compiler(self) -> str:
        """``"numpy"``: no compiler, numpy's kernels called from Python."""
        return "numpy"

    def index_array(self, idx: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(idx, dtype=np.int64)

    def copy(self, t: Any) -> Any:
        return np.array(t, copy=True)

    def value_and_grad(self, problem: Problem, gradient: str = "auto") -> ValueGradFn:
        why = problem.unsupported_backend("numpy")  # no gradient without autodiff
        if why is not None:
            raise ValueError(why)
        gradient_kind(self, problem, gradient)  # validates; numpy's gradient is analytic
        return problem.value_and_grad

    def make_value_and_grad(self, problem: Problem, gradient: str = "auto",
                            data: dict[str, Any] | None = None) -> ValueGradFn:
        return self.value_and_grad(problem, gradient)


__all__ = ["NumpyBackend"]
