"""Least-squares linear regression with an intercept: the first story behind optcmp."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from optcmp._io import check_memory
from optcmp._scipy import linalg
from optcmp.problems import tabular
from optcmp.problems._lstsq import blocked_lstsq, mean_squared_residual, use_blocked
from optcmp.problems._scratch import MIN_ELEMENTS, work_arrays
from optcmp.problems.base import Array, Optimum, ParamLayout, same_as_value, transposed_key

#: Poisson means of the default count-valued features (different scales, like the story's data).
DEFAULT_FEATURE_MEANS = (30.0, 5.0, 2.0, 1.0)


def _check_shapes(X: np.ndarray, y: np.ndarray, fit_intercept: bool) -> None:
    """``X`` 2-D with rows, ``y`` 1-D or 2-D with as many rows, and something to fit."""
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D with shape (n_samples, n_features); got shape "
                         f"{X.shape}. For one feature use X.reshape(-1, 1).")
    if y.ndim not in (1, 2):
        raise ValueError(f"y must have shape (n_samples,) or (n_samples, k); got shape {y.shape}")
    if X.shape[0] == 0:
        raise ValueError("X has zero rows; a regression needs at least one sample")
    if X.shape[1] == 0 and not fit_intercept:
        raise ValueError("X has zero columns and fit_intercept=False: there is nothing to fit")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}; they must match")
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError("y has zero target columns")


def _check_values(X: np.ndarray, y: np.ndarray, feature_names: Sequence[str] | None,
                  target_names: Sequence[str] | None) -> None:
    """One name per column, finite values, and squares float64 can hold."""
    tabular.check_names("feature_names", feature_names, X.shape[1], "X")
    tabular.check_names("target_names", target_names, 1 if y.ndim == 1 else y.shape[1], "y")
    for check in (tabular.check_finite, tabular.check_scale):
        check("X", X, feature_names)
        check("y", y, target_names)


_AT = transposed_key("A")

#: Largest ``noise`` of a generated problem: its squared residuals stay far below overflow.
MAX_NOISE = 1e150


#: Rows per block of the float64 sum of squared residuals (:func:`sum_of_squares`).
SUM_ROWS = 1 << 16


def sum_of_squares(r: np.ndarray) -> float:
    """``sum(r * r)`` as the sum, in order, of each block of :data:`SUM_ROWS` rows' own
    ``vdot``: what :meth:`LinearRegression.fun64` computes block by block."""
    n = r.shape[0]
    if n <= SUM_ROWS:
        return float(np.vdot(r, r))
    total = 0.0
    for i in range(0, n, SUM_ROWS):
        b = r[i:i + SUM_ROWS]
        total += float(np.vdot(b, b))
    return total


class LinearRegression(tabular.TabularProblem):
    """Linear least squares with an intercept, mean squared error over samples and outputs.

    The objective and the default data: see docs/problems.md, "Linear regression". The iterate
    packs ``coef`` (shape ``(d,)``, or ``(d, k)`` for ``k`` targets) then ``intercept`` (shape
    ``()`` or ``(k,)``). The optimum: :func:`numpy.linalg.lstsq`, or a Householder QR by row
    chunks where its copy would exceed 64 MiB (:mod:`optcmp.problems._lstsq`). The design
    matrix ``A = [X, 1]`` is held once, read-only and column-major (Fortran order, as
    scikit-learn's linear models keep ``X``): the layout of full-batch products; a gather of
    minibatch rows from it is row-major.

    Parameters
    ----------
    n_samples : int, default 1_000_000
    n_features : int, default 4
        Number of features ``d``: Poisson means (30, 5, 2, 1), or log-spaced from 30 to 1.
    noise : float, default 1.0
        Standard deviation of the Gaussian noise added to the target.
    seed : int, default 0
    fit_intercept : bool, default True
    init : {"zeros", "normal"}, default "zeros"
        Initial point: zeros, or standard normal draws from the run's seed.
    drop_last : bool, default False
        Minibatch runs drop the short last minibatch of every epoch.
    """

    name = "linear_regression"
    hess_diag_is_constant = True

    def __init__(self, n_samples: int = 1_000_000, n_features: int = 4, noise: float = 1.0,
                 seed: int = 0, *, fit_intercept: bool = True, init: str = "zeros",
                 drop_last: bool = False) -> None:
        tabular.check_count("n_samples", n_samples)
        tabular.check_count("n_features", n_features)
        try:
            noise_ok = not isinstance(noise, bool) and bool(np.isfinite(noise)) and noise >= 0
        except TypeError:
            noise_ok = False
        if not noise_ok:
            raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
        tabular.check_count("seed", seed, 0)
        fit_intercept = tabular.check_flag("fit_intercept", fit_intercept)
        if noise > MAX_NOISE:  # the squared residuals would overflow float64
            raise ValueError(f"noise must be at most {MAX_NOISE:g} (the loss squares the "
                             f"residuals, and float64 overflows beyond ~1.8e308), got {noise!r}")
        d = int(n_features)
        # peak of the generation below: Poisson counts (int64), X, A = [X, 1], y and temporaries
        check_memory(int(n_samples) * 8 * (3 * d + 4),
                     f"generating {int(n_samples):,} rows x {d} feature(s)")
        rng = np.random.default_rng(seed)
        means = (np.asarray(DEFAULT_FEATURE_MEANS) if d == len(DEFAULT_FEATURE_MEANS)
                 else np.geomspace(30.0, 1.0, d))
        X = rng.poisson(means, size=(int(n_samples), d)).astype(np.float64)
        coef = np.round(rng.uniform(-3.0, 3.0, size=d), 3)
        intercept = 4.0
        y = X @ coef + intercept + noise * rng.standard_normal(int(n_samples))
        self._spec = {"problem": self.name, "source": "generated", "n_samples": int(n_samples),
                      "n_features": d, "noise": float(noise), "seed": int(seed),
                      "fit_intercept": bool(fit_intercept), "init": init}
        self._drop(drop_last)
        self.true_coef: np.ndarray | None = coef
        self.true_intercept: float | None = intercept
        self._setup(X, y, fit_intercept=fit_intercept, init=init, feature_names=None,
                    target_names=None)

    @classmethod
    def from_arrays(cls, X: Any, y: Any, *, fit_intercept: bool = True, init: str = "zeros",
                    feature_names: Sequence[str] | None = None,
                    target_names: Sequence[str] | None = None, name: str = "linear_regression",
                    drop_last: bool = False, **unknown: Any) -> LinearRegression:
        """Build the problem from your own ``X`` (n, d) and ``y`` (n,) or (n, k).

        The flags as for the constructor; ``feature_names`` and ``target_names``: one distinct
        name per column of ``X`` and of ``y``; any other keyword is refused, naming these.
        """
        tabular.refuse_unknown(cls.from_arrays, unknown)
        self = cls.__new__(cls)
        self.name = tabular.check_label("name", name)
        fit_intercept = tabular.check_flag("fit_intercept", fit_intercept)
        Xa = tabular.as_float_matrix("X", X, feature_names)
        ya = tabular.as_float_matrix("y", y, target_names)
        _check_shapes(Xa, ya, fit_intercept)
        _check_values(Xa, ya, feature_names, target_names)
        self._spec = {"problem": "linear_regression", "source": "arrays", "name": name,
                      "n_samples": int(Xa.shape[0]), "n_features": int(Xa.shape[1]),
                      "n_targets": 1 if ya.ndim == 1 else int(ya.shape[1]),
                      "fit_intercept": bool(fit_intercept), "init": init,
                      "data_fingerprint": tabular.fingerprint(Xa, ya)}
        self._drop(drop_last)
        self.true_coef = None
        self.true_intercept = None
        self._setup(Xa, ya, fit_intercept=fit_intercept, init=init,
                    feature_names=feature_names, target_names=target_names)
        return self

    @classmethod
    def from_frame(cls, df: Any, features: Sequence[str], targets: Sequence[str] | str,
                   **kwargs: Any) -> LinearRegression:
        """Build the problem from columns of a DataFrame (``**kwargs``: :meth:`from_arrays`).

        One name in ``targets`` gives ``y`` of shape (n,).
        """
        features, target_list = tabular.check_columns(list(map(str, df.columns)), features, targets)
        for c in features + target_list:
            tabular.check_frame_column(c, df[c])
        X = df[features].to_numpy(dtype=np.float64)
        y = df[target_list].to_numpy(dtype=np.float64)
        if isinstance(targets, str):
            y = y[:, 0]
        kwargs.setdefault("feature_names", features)
        kwargs.setdefault("target_names", target_list)
        return cls.from_arrays(X, y, **kwargs)

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], features: Sequence[str] | None = None,
                 targets: Sequence[str] | str | None = None, *, delimiter: str = ",",
                 **kwargs: Any) -> LinearRegression:
        """Build the problem from a CSV file with a header row (``**kwargs``: :meth:`from_arrays`).

        ``targets`` default to the last column, ``features`` to all the others.
        """
        return cls._from_csv(path, features, targets, delimiter, kwargs)

    def with_seed(self, seed: int) -> LinearRegression:
        sp = self._spec
        if sp.get("source") != "generated":
            raise NotImplementedError(
                f"problem {self.name!r} was built from your own data (source "
                f"{sp.get('source')!r}); it cannot redraw its data from a seed. Use "
                "redraw_data=False, or build one problem per data set and concatenate the "
                "comparisons (Comparison.concat)")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        return LinearRegression(n_samples=sp["n_samples"], n_features=sp["n_features"],
                                noise=sp["noise"], seed=int(seed),
                                fit_intercept=sp["fit_intercept"], init=sp["init"],
                                drop_last=self.drop_last)

    def _drop(self, drop_last: Any) -> None:
        """Set the minibatch drop policy (in the spec only when it drops: old specs match)."""
        self.drop_last = tabular.check_flag("drop_last", drop_last)
        if self.drop_last:
            self._spec["drop_last"] = True

    def _setup(self, X: np.ndarray, y: np.ndarray, *, fit_intercept: bool, init: str,
               feature_names: Sequence[str] | None, target_names: Sequence[str] | None) -> None:
        """The design matrix, names, layout and caches of the data ``X``, ``y``."""
        if init not in ("zeros", "normal"):
            raise ValueError(f"init must be 'zeros' or 'normal', got {init!r}")
        d = X.shape[1]
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]  # (n, 1) and (n,) are the same single-target problem
        k = self.n_targets = 1 if y.ndim == 1 else int(y.shape[1])
        self.init = init
        self.target_names = list(target_names) if target_names is not None else (
            ["y"] if k == 1 else [f"y{o}" for o in range(k)])
        self._set_data(X, y, fit_intercept, feature_names, order="F")
        shapes: list[tuple[int, ...]] = [(d,) if k == 1 else (d, k)]
        names = ["coef"]
        if fit_intercept:
            shapes.append(() if k == 1 else (k,))
            names.append("intercept")
        self._layout = ParamLayout(tuple(names), tuple(shapes))
        self._gram: np.ndarray | None = None

    def _w_shape(self) -> tuple[int, ...]:
        """Shape of ``W`` (a matrix for several targets)."""
        p = self._data["A"].shape[1]
        return (p,) if self.n_targets == 1 else (p, self.n_targets)

    def init_params(self, seed: int = 0) -> Array:
        if self.init == "zeros":
            return np.zeros(self.n_params)
        return np.random.default_rng(seed).standard_normal(self.n_params)

    #: ``A`` enters only ``A @ W`` and ``A.T @ r``: a full-batch run may hold it transposed.
    products_only = ("A",)

    def objective(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        W = x if self.n_targets == 1 else ops.reshape(x, self._w_shape())
        r = self._AW(ops, W, batch) - batch["y"]
        return ops.mean(r * r)

    def _AW(self, ops: Any, W: Any, batch: dict[str, Any]) -> Any:
        """``A @ W``, from ``A`` or from ``A.T`` held contiguous (``W @ A.T``)."""
        AT = batch.get(_AT)
        if AT is None:
            return ops.matmul(batch["A"], W)
        return ops.matmul(W, AT) if self.n_targets == 1 else ops.transpose(
            ops.matmul(ops.transpose(W), AT))

    def _ATr(self, ops: Any, r: Any, batch: dict[str, Any]) -> Any:
        """``A.T @ r``: ``r^T A`` (no transposed copy of ``A``: XLA would materialise one), or
        ``A.T @ r`` where ``A.T`` is held contiguous."""
        AT = batch.get(_AT)
        if AT is not None:
            return ops.matmul(AT, r)
        A = batch["A"]
        return ops.matmul(r, A) if self.n_targets == 1 else ops.transpose(
            ops.matmul(ops.transpose(r), A))

    has_gradient_ops = True  # gradient_ops below: framework backends use it, not autodiff
    has_numpy_grad = True

    def gradient_ops(self, ops: Any, x: Any, batch: dict[str, Any], *,
                     value: bool = True) -> tuple[Any, Any]:
        """``mean(r * r)`` and its gradient ``A^T r (2 / m)``, ``r = A W - y``."""
        W = x if self.n_targets == 1 else ops.reshape(x, self._w_shape())
        r = self._AW(ops, W, batch) - batch["y"]
        m = ops.size(r)
        g = ops.reshape(self._ATr(ops, r, batch) * (2.0 / m), (-1,))
        return (ops.sum(r * r) / m if value else None), g

    def gradient_into(self, ops: Any, x: Any, batch: dict[str, Any], work: dict[str, Any], *,
                      value: bool = True) -> tuple[Any, Any]:
        """:meth:`gradient_ops`'s operations, the residual written into ``work["r"]`` (kept by
        the caller across calls, made by ``work["like"]`` if given; ops whose ``matmul`` takes
        ``out=``, numpy's and torch's): the same values without a new array the size of the
        data per call; its square and sum are taken in that array."""
        y, AT = batch["y"], batch.get(_AT)
        r = work.get("r")
        if self.n_targets != 1 or (r is not None and r.shape != y.shape):
            return self.gradient_ops(ops, x, batch, value=value)
        if r is None:
            r = work["r"] = work.get("like", ops.zeros_like)(y)
        if AT is None:
            ops.matmul(batch["A"], x, out=r)
        else:
            ops.matmul(ops.transpose(AT), x, out=r)
        r -= y
        m = ops.size(r)
        g = self._ATr(ops, r, batch)
        g *= 2.0 / m
        if not value:
            return None, g
        r *= r  # the same products and sum as ``sum(r * r)``, in the kept array
        return ops.sum(r) / m, g

    def value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> tuple[float, np.ndarray]:
        return self._numpy_value_and_grad(x, batch, True)

    def grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> np.ndarray:
        return self._numpy_value_and_grad(x, batch, False)[1]

    @same_as_value
    def fun64(self, x: np.ndarray) -> float:
        """The float64 objective of the whole data, without the gradient (the value
        :meth:`value_and_grad` gives, to the bit), the residual computed in blocks of
        :data:`SUM_ROWS` rows: no array of the data's size."""
        x = np.asarray(x, dtype=np.float64)
        A, y = self._data["A"], self._data["y"]
        n = y.shape[0]
        if n <= SUM_ROWS or not A.dtype == y.dtype == np.float64:
            return self._numpy_value_and_grad(x, self._data, True, grad=False)[0]
        W = x if self.n_targets == 1 else x.reshape(self._w_shape())
        work = work_arrays((SUM_ROWS, *y.shape[1:]), y.dtype, 1)
        total = 0.0
        for i in range(0, n, SUM_ROWS):
            j = min(i + SUM_ROWS, n)
            r = np.matmul(A[i:j], W, out=None if work is None else work[0][:j - i])
            r -= y[i:j]
            total += float(np.vdot(r, r))
        return total / y.size

    def _numpy_value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray],
                              value: bool, grad: bool = True) -> tuple[float, Any]:
        """Value (NaN unless ``value``) and gradient (None unless ``grad``) in numpy."""
        A, y = batch["A"], batch["y"]
        one = self.n_targets == 1
        W = x if one else x.reshape(self._w_shape())
        work = (work_arrays(y.shape, y.dtype, 1)  # the data's size: reused, not faulted in
                if y.size >= MIN_ELEMENTS and A.dtype == W.dtype == y.dtype else None)
        r = A @ W if work is None else np.matmul(A, W, out=work[0])
        r -= y
        m = r.size
        fun = sum_of_squares(r) / m if value else float("nan")
        if not grad:
            return fun, None
        g = A.T @ r
        g *= 2.0 / m
        return fun, (g if one else g.reshape(-1))

    def describe_param(self, j: int) -> str:
        base = super().describe_param(j)
        row = j // self.n_targets
        if row < len(self.feature_names):
            return f"{base} (column {row}, {self.feature_names[row]!r})"
        return base

    def _gram_matrix(self) -> np.ndarray:
        """``A^T A``, computed once."""
        if self._gram is None:
            A = self._data["A"]
            p = A.shape[1]
            check_memory(8 * p * p, f"the {p:,} x {p:,} Gram matrix A^T A of {p:,} columns")
            self._gram = A.T @ A
        return self._gram

    def hess_diag(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        AT = batch.get(_AT)
        A = batch["A"] if AT is None else AT
        col = ops.sum(A * A, axis=0 if AT is None else 1) * (
            2.0 / (A.shape[0 if AT is None else 1] * self.n_targets))
        if self.n_targets == 1:
            return col
        return ops.reshape(ops.matmul(ops.reshape(col, (-1, 1)), ops.ones_like(batch["y"][:1])), (-1,))

    def hess_diag_numpy(self) -> np.ndarray:
        """Exact Hessian diagonal in float64, shape (n_params,)."""
        A = self._data["A"]
        n, p = A.shape
        # more columns than rows: the column sums of squares, without the p x p Gram matrix
        sq = np.einsum("ij,ij->j", A, A) if n < p else np.diag(self._gram_matrix())
        col = sq * (2.0 / (n * self.n_targets))
        return np.repeat(col, self.n_targets)

    def lipschitz(self) -> float:
        if self._lipschitz is None:
            A = self._data["A"]
            n, p = A.shape
            # the largest eigenvalue of A^T A is that of A A^T: the exact value from the
            # smaller side (200 rows x 12,000 features: a 200 x 200 matrix, not 12,001^2)
            small = A @ A.T if n < p else self._gram_matrix()
            lam = np.linalg.eigvalsh(small)[-1]
            self._lipschitz = float(lam * 2.0 / (n * self.n_targets))
        return self._lipschitz

    def optimum(self) -> Optimum:
        if self._optimum is None:
            A, y = self._data["A"], self._data["y"]
            if use_blocked(A, y):  # no copy of the data: QR by row chunks
                linalg()  # scipy.linalg imported off the clock
                t0 = time.perf_counter()
                W, method = blocked_lstsq(A, y)
                elapsed = time.perf_counter() - t0
                fun = mean_squared_residual(A, W, y)
            else:
                t0 = time.perf_counter()
                W, *_ = np.linalg.lstsq(A, y, rcond=None)
                elapsed = time.perf_counter() - t0
                r = np.ascontiguousarray(A) @ W - y  # lstsq's copy's size: row by row as ever
                fun, method = float(np.vdot(r, r)) / r.size, "numpy.linalg.lstsq"
            self._optimum = Optimum(fun=fun, x=np.asarray(W, dtype=np.float64).reshape(-1),
                                    method=method, time=elapsed)
        return self._optimum
