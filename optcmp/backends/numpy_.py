"""The numpy backend: the problems' analytic gradients, no compiler, no device.

scipy's special functions (``expit``, ``logsumexp``, ``softmax``) are imported on the first call
of the ops that use them, so ``import optcmp`` does not load ``scipy.special``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp._scipy import special
from optcmp.backends.base import Backend, ValueGradFn, blas_threads, check_layout, gradient_kind

if TYPE_CHECKING:
    from optcmp.problems.base import Problem


def norm2(a: np.ndarray) -> float:
    """2-norm of a vector that does not overflow while the entries are finite.

    ``sqrt(vdot(a, a))`` overflows once the entries pass ~1e154 (float64), which would flag a
    finite gradient as non-finite; the rescaled form is used only in that case.

    Parameters
    ----------
    a : ndarray, shape (n,)

    Returns
    -------
    float
        ``inf``/``nan`` only when ``a`` holds ``inf``/``nan``.
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
#: the same names on every backend, :data:`optcmp.backends.base.OPS`).
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
    atan=np.arctan,  # issue 13: the helical valley (MGH 7)
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
    size=lambda a: int(np.size(a)),  # issue 11b: element count (gradients by hand)
    vecdot=_vecdot,
)


class NumpyBackend(Backend):
    """NumPy on the CPU: the reference backend, with the problems' analytic gradients.

    Parameters
    ----------
    device : {"cpu"}, optional
    dtype : {"float64", "float32"}, default "float64"

    Raises
    ------
    ValueError
        A device other than ``"cpu"``.
    """

    name = "numpy"
    ops = ops
    capabilities = frozenset()

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
        if np.issubdtype(a.dtype, np.floating):
            return np.ascontiguousarray(a, dtype=self._np_dtype)
        return np.ascontiguousarray(a)

    def to_numpy(self, t: Any) -> np.ndarray:
        return np.array(t, copy=True)

    def place(self, data: dict[str, np.ndarray], layout: str = "row-major") -> dict[str, Any]:
        """The arrays in ``dtype``; 2-D ones column-major (Fortran order) when asked.

        Column-major data let BLAS stream each feature column once in both products of a
        full-batch step (``A @ x`` and ``A.T @ r``); minibatch row gathers want rows
        contiguous (:meth:`best_layout`).
        """
        check_layout(layout)
        out = {k: self.asarray(v) for k, v in data.items()}
        if layout == "column-major":
            out = {k: np.asfortranarray(v) if v.ndim == 2 else v for k, v in out.items()}
        return out

    def best_layout(self, minibatch: bool) -> str:
        """``"column-major"`` for full-batch steps (BLAS streams columns), else ``"row-major"``."""
        return "row-major" if minibatch else "column-major"

    @property
    def compiler(self) -> str:
        """``"numpy"``: no compiler, numpy's kernels called from Python."""
        return "numpy"

    def index_array(self, idx: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(idx, dtype=np.int64)

    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        return {k: v[idx] for k, v in data.items()}

    def copy(self, t: Any) -> Any:
        return np.array(t, copy=True)

    def value_and_grad(self, problem: Problem, gradient: str = "auto") -> ValueGradFn:
        why = problem.unsupported_backend("numpy")  # issue 13: no gradient without autodiff
        if why is not None:
            raise ValueError(why)
        gradient_kind(self, problem, gradient)  # validates; numpy's gradient is analytic
        return problem.value_and_grad

    def make_value_and_grad(self, problem: Problem, gradient: str = "auto") -> ValueGradFn:
        return self.value_and_grad(problem, gradient)

    @classmethod
    def get_threads(cls) -> int | None:
        """Threads of numpy's BLAS pool (:func:`~optcmp.backends.base.blas_threads`)."""
        return blas_threads()
