r"""The Moré-Garbow-Hillstrom unconstrained test set (the table: :mod:`.mgh_functions`).

The constants of each problem travel as one-row training arrays, placed on the device once like
any data. Numpy's gradient is the complex-step derivative (see docs/problems.md, "A problem
set"), except for the helical valley, whose ``arctan`` branch is not complex-analytic.

References
----------
J. J. Moré, B. S. Garbow and K. E. Hillstrom, "Testing unconstrained optimization software",
ACM Trans. Math. Softw. 7(1), 17-41, 1981.
J. R. R. A. Martins, P. Sturdza and J. J. Alonso, "The complex-step derivative approximation",
ACM Trans. Math. Softw. 29(3), 245-262, 2003.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optcmp.frameworks.numpy.ops import ops as numpy_ops
from optcmp.problems.base import Array, Optimum, ParamLayout, StoredProblem, read_only
from optcmp.problems.mgh_functions import M_OF_N, MGHInfo, helical_value_and_grad, mgh_info

#: Step of the complex-step derivative.
COMPLEX_STEP = 1e-200


class MGHProblem(StoredProblem):
    r"""One Moré-Garbow-Hillstrom problem: :math:`\min_x \sum_{i=1}^m f_i(x)^2`.

    Its start and :meth:`optimum` (or ``None``) are the paper's, for every seed.

    Parameters
    ----------
    problem : int or str, default 1
        Its number in the paper (1..35) or its name (:data:`MGH_NAMES`).
    n : int, optional
        Number of variables, where the paper lets it vary.
    m : int, optional
        Number of residuals, where the paper lets it vary (with only ``n``, it follows ``n``).
    """

    reduction = "sum"

    def __init__(self, problem: int | str = 1, n: int | None = None,
                 m: int | None = None) -> None:
        info = mgh_info(problem)
        n_, m_ = self._sizes(info, n, m)
        why = info.check(n_, m_)
        if why:
            raise ValueError(f"MGH problem {info.number} ({info.title}): {why}")
        self.info, self.n, self.m = info, n_, m_
        self.name = f"mgh{info.number:02d}_{info.name}"
        consts = info.constants(n_, m_)
        # constants travel as one-row arrays: placed on the device once, like data
        self._data = read_only({k: np.array(v, dtype=np.float64)[None, ...]
                                for k, v in consts.items()})
        self._layout = ParamLayout(("x",), ((n_,),))
        self._x0 = np.asarray(info.x0(n_), dtype=np.float64)

    @staticmethod
    def _sizes(info: MGHInfo, n: int | None, m: int | None) -> tuple[int, int]:
        """``(n, m)`` from the arguments and the table's defaults, checked."""
        for what, v in (("n", n), ("m", m)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                                  or v < 1):
                raise ValueError(f"{what} must be a positive integer, got {v!r}")
        if n is not None and n != info.n and not info.variable_n:
            raise ValueError(f"MGH problem {info.number} ({info.title}) has n = {info.n} only, "
                             f"got n={n}")
        n_ = info.n if n is None else int(n)
        if info.number in M_OF_N:
            m_ = M_OF_N[info.number](n_)
            if m is not None and m != m_:
                raise ValueError(f"MGH problem {info.number} ({info.title}) has m = {m_} for "
                                 f"n = {n_}, got m={m}")
            return n_, m_
        if m is not None and m != info.m and not info.variable_m:
            raise ValueError(f"MGH problem {info.number} ({info.title}) has m = {info.m} only, "
                             f"got m={m}")
        if m is None and n is not None and info.variable_m and info.variable_n:
            # m follows a given n (Chebyquad with n = 10 needs m >= 10, not the default 8)
            return n_, (n_ if info.m == info.n else max(info.m, n_))
        return n_, (info.m if m is None else int(m))

    def init_params(self, seed: int = 0) -> Array:
        return self._x0.copy()

    def residuals(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        """The ``m`` residuals :math:`f_i(x)` on ``ops`` (``batch``: the constants)."""
        return self.info.residuals(ops, x, {k: v[0] for k, v in batch.items()})

    def objective(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        r = self.residuals(ops, x, batch)
        return ops.sum(r * r)

    def value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> tuple[float, np.ndarray]:
        # the complex-step derivative; the helical valley's analytic gradient (module docstring)
        ops = numpy_ops
        xf = np.asarray(x, dtype=np.float64)
        if self.info.number == 7:
            f, g = helical_value_and_grad(xf)
            return f, g.astype(x.dtype, copy=False)
        f = float(self.objective(ops, xf, batch))
        g = np.empty(self.n)
        for k in range(self.n):
            xc = xf.astype(np.complex128)
            xc[k] += 1j * COMPLEX_STEP
            g[k] = float(np.imag(self.objective(ops, xc, batch))) / COMPLEX_STEP
        return f, g.astype(x.dtype, copy=False)

    def fun64(self, x: np.ndarray) -> float:
        return float(self.objective(numpy_ops, np.asarray(x, dtype=np.float64), self._data))

    def lipschitz(self) -> float:
        r"""A local estimate, :math:`\|\nabla^2 f(x_0)\|_2` by central differences: no bound.

        The same on every backend, so ``gd`` runs one algorithm on all of them.
        """
        cached = getattr(self, "_lipschitz", None)
        if cached is not None:
            return float(cached)
        x0 = self._x0
        H = np.empty((self.n, self.n))
        for k in range(self.n):
            h = 1e-5 * max(1.0, abs(float(x0[k])))
            e = np.zeros(self.n)
            e[k] = h
            H[:, k] = (self.value_and_grad(x0 + e, self._data)[1]
                       - self.value_and_grad(x0 - e, self._data)[1]) / (2.0 * h)
        eig = np.linalg.eigvalsh(0.5 * (H + H.T)) if np.all(np.isfinite(H)) else np.array([0.0])
        L = float(np.max(np.abs(eig)))
        if not (np.isfinite(L) and L > 0.0):
            raise NotImplementedError(
                f"problem {self.name!r}: the Hessian at the starting point gives no Lipschitz "
                "estimate; give learning_rate as a positive float")
        self._lipschitz = L
        return L

    def optimum(self) -> Optimum | None:
        fstar = self.info.fstar(self.n, self.m)
        if fstar is None:
            return None
        note = f"; also {self.info.note}" if self.info.note else ""
        return Optimum(fun=float(fstar), x=None, time=None, kind="given",
                       method=f"More, Garbow and Hillstrom (1981), problem {self.info.number} "
                              f"(n={self.n}, m={self.m}){note}")

    def spec(self) -> dict[str, Any]:
        return {"problem": "mgh", "source": "generated", "problem_number": self.info.number,
                "n": self.n, "m": self.m}

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> MGHProblem:
        return cls(int(spec["problem_number"]), n=int(spec["n"]), m=int(spec["m"]))


__all__ = ["COMPLEX_STEP", "MGHProblem"]
