"""The numpy backend: analytic gradients, in-place updates, no device."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import special

from optcmp.backends.base import Backend, StepFn, ValueGradFn

if TYPE_CHECKING:
    from optcmp.optimizers.base import UpdateRule
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


#: The ops namespace problems and reference update rules are written against.
ops = SimpleNamespace(
    name="numpy",
    matmul=np.matmul,
    mean=_mean,
    sum=_sum,
    reshape=np.reshape,
    sqrt=np.sqrt,
    exp=np.exp,
    log=np.log,
    square=np.square,
    abs=np.abs,
    maximum=np.maximum,
    sigmoid=special.expit,
    logsumexp=lambda a, axis=None: special.logsumexp(a, axis=axis),
    softmax=lambda a, axis=-1: special.softmax(a, axis=axis),
    ones_like=np.ones_like,
    zeros_like=np.zeros_like,
    transpose=np.transpose,
    concat=lambda arrays, axis=0: np.concatenate(arrays, axis=axis),
    norm=norm2,
    where=np.where,
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

    def index_array(self, idx: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(idx, dtype=np.int64)

    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        return {k: v[idx] for k, v in data.items()}

    def copy(self, t: Any) -> Any:
        return np.array(t, copy=True)

    def make_value_and_grad(self, problem: Problem) -> ValueGradFn:
        return problem.value_and_grad

    def make_step(self, problem: Problem, rule: UpdateRule, hyper: dict[str, float], *,
                  grad_norm: bool = True) -> StepFn:
        vg = problem.value_and_grad
        update = rule.update
        o = self.ops

        def step(x: Any, state: tuple[Any, ...], batch: dict[str, Any], curv: Any) -> Any:
            fun, g = vg(x, batch)
            gnorm = norm2(g) if grad_norm else None
            x, state = update(o, x, g, state, hyper, curv)
            return fun, gnorm, x, state

        return step
