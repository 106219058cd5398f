"""Binary L2-regularized logistic regression (mean log-loss), written once against the ops."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from optcmp.problems import tabular
from optcmp.problems.base import Array, Optimum, ParamLayout, one_blas_thread, same_as_value

#: Newton solve of the optimum: stop when the largest gradient entry is below this (float64).
NEWTON_GTOL = 1e-13
#: Newton solve: at most this many iterations.
NEWTON_MAXITER = 100


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-z))`` without overflow for large ``|z|``."""
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def _labels(y: Any) -> np.ndarray:
    """Binary labels as float64 0/1; anything but {0, 1} (or booleans) is refused, named."""
    ya = np.asarray(y)
    if ya.ndim == 2 and ya.shape[1] == 1:
        ya = ya[:, 0]
    if ya.ndim != 1:
        raise ValueError(f"y must have shape (n_samples,) with labels 0/1, got shape {ya.shape}")
    yf = tabular.as_float_matrix("y", ya)
    tabular.check_finite("y", yf)
    bad = ~np.isin(yf, (0.0, 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"y must hold binary labels 0 and 1 (or booleans); row {i} holds "
                         f"{float(yf[i])!r} ({int(bad.sum())} such value(s)); map your classes to 0/1 "
                         "first")
    return yf


def _check_two_classes(y: np.ndarray, fit_intercept: bool, l2: float) -> None:
    """Refuse one class where the loss has no minimizer: an unpenalized parameter runs off."""
    classes = np.unique(y)
    if classes.size == 1 and (fit_intercept or not (isinstance(l2, (int, float)) and l2 > 0)):
        which = "an unpenalized intercept" if fit_intercept else "l2=0"
        raise ValueError(
            f"y holds only label {int(classes[0])} ({y.size} rows): with {which} the log-loss "
            "has no minimizer (its infimum 0 is approached as the parameters run off to "
            "infinity), so f* and every suboptimality would be meaningless; a classifier needs "
            "both classes")


def check_l2(l2: Any) -> float:
    """``l2`` as a finite float >= 0."""
    try:
        ok = not isinstance(l2, (bool, str, bytes)) and math.isfinite(float(l2)) and float(l2) >= 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"l2 must be a finite number >= 0, got {type(l2).__name__} {l2!r:.80}")
    return float(l2)


class LogisticRegression(tabular.TabularProblem):
    r"""Binary logistic regression with L2 regularization: mean log-loss over samples.

    The objective, the default data and :meth:`optimum` (Newton's method to
    :data:`NEWTON_GTOL`): see docs/problems.md, "Logistic regression". The iterate packs
    ``coef`` ``(d,)`` then ``intercept`` (not regularized).

    Parameters
    ----------
    n_samples : int, default 100_000
    n_features : int, default 20
    l2 : float, default 1e-3
        Regularization strength :math:`\lambda` (>= 0).
    seed : int, default 0
    fit_intercept : bool, default True
    """

    name = "logistic_regression"

    def __init__(self, n_samples: int = 100_000, n_features: int = 20, l2: float = 1e-3,
                 seed: int = 0, *, fit_intercept: bool = True) -> None:
        tabular.check_count("n_samples", n_samples)
        tabular.check_count("n_features", n_features)
        tabular.check_count("seed", seed, 0)
        fit_intercept = tabular.check_flag("fit_intercept", fit_intercept)
        l2 = check_l2(l2)
        rng = np.random.default_rng(seed)
        d = int(n_features)
        X = rng.standard_normal((int(n_samples), d)) * np.geomspace(3.0, 0.3, d)
        coef = rng.uniform(-2.0, 2.0, size=d) / np.geomspace(3.0, 0.3, d) / math.sqrt(d)
        p = _sigmoid(X @ coef + 0.5)
        y = (rng.uniform(size=int(n_samples)) < p).astype(np.float64)
        self.true_coef: np.ndarray | None = coef
        self._spec: dict[str, Any] = {"problem": self.name, "source": "generated",
                                      "n_samples": int(n_samples), "n_features": d, "l2": float(l2),
                                      "seed": int(seed), "fit_intercept": bool(fit_intercept)}
        self._setup(X, y, l2=l2, fit_intercept=fit_intercept, feature_names=None)

    @classmethod
    def from_arrays(cls, X: Any, y: Any, *, l2: float = 1e-3, fit_intercept: bool = True,
                    feature_names: Sequence[str] | None = None,
                    name: str = "logistic_regression", **unknown: Any) -> LogisticRegression:
        """Build the problem from your own ``X`` (n, d) and labels ``y`` (n,), 0/1 or booleans.

        ``l2`` and ``fit_intercept`` as for the constructor; one name per column of ``X``; any
        other keyword is refused, naming these.
        """
        tabular.refuse_unknown(cls.from_arrays, unknown)
        self = cls.__new__(cls)
        self.name = tabular.check_label("name", name)
        fit_intercept = tabular.check_flag("fit_intercept", fit_intercept)
        Xa = tabular.as_float_matrix("X", X, feature_names)
        if Xa.ndim != 2:
            raise ValueError(f"X must be 2-D with shape (n_samples, n_features); got shape "
                             f"{Xa.shape}. For one feature use X.reshape(-1, 1).")
        if Xa.shape[0] == 0:
            raise ValueError("X has zero rows; a classifier needs at least one sample")
        tabular.check_finite("X", Xa, feature_names)
        ya = _labels(y)
        if ya.shape[0] != Xa.shape[0]:
            raise ValueError(f"X has {Xa.shape[0]} rows but y has {ya.shape[0]}; they must match")
        _check_two_classes(ya, fit_intercept, l2)
        self.true_coef = None
        self._spec = {"problem": "logistic_regression", "source": "arrays", "name": name,
                      "n_samples": int(Xa.shape[0]), "n_features": int(Xa.shape[1]),
                      "l2": float(l2), "fit_intercept": bool(fit_intercept),
                      "data_fingerprint": tabular.fingerprint(Xa, ya)}
        self._setup(Xa, ya, l2=l2, fit_intercept=fit_intercept, feature_names=feature_names)
        return self

    @classmethod
    def from_frame(cls, df: Any, features: Sequence[str], target: str,
                   **kwargs: Any) -> LogisticRegression:
        """Build the problem from columns of a DataFrame (``**kwargs``: :meth:`from_arrays`)."""
        features, tl = tabular.check_columns(list(map(str, df.columns)), features, target)
        for c in features + tl:
            tabular.check_frame_column(c, df[c])
        kwargs.setdefault("feature_names", features)
        return cls.from_arrays(df[features].to_numpy(dtype=np.float64),
                               df[tl[0]].to_numpy(dtype=np.float64), **kwargs)

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], features: Sequence[str] | None = None,
                 target: str | None = None, *, delimiter: str = ",",
                 **kwargs: Any) -> LogisticRegression:
        """Build the problem from a CSV file, as :meth:`LinearRegression.from_csv` does."""
        return cls._from_csv(path, features, target, delimiter, kwargs)

    def with_seed(self, seed: int) -> LogisticRegression:
        sp = self._spec
        if sp.get("source") != "generated":
            raise NotImplementedError(f"problem {self.name!r} was built from your own data; it "
                                      "cannot redraw its data from a seed (redraw_data=False)")
        return LogisticRegression(sp["n_samples"], sp["n_features"], sp["l2"], int(seed),
                                  fit_intercept=sp["fit_intercept"])

    def _setup(self, X: np.ndarray, y: np.ndarray, *, l2: float, fit_intercept: bool,
               feature_names: Sequence[str] | None) -> None:
        """The design matrix, names, layout and caches of the data ``X``, ``y``."""
        self.l2 = check_l2(l2)
        d = self._d = X.shape[1]
        self._set_data(X, y, fit_intercept, feature_names)
        self._mask = np.r_[np.ones(d), np.zeros(int(fit_intercept))]  # regularized entries
        self._layout = ParamLayout(("coef", "intercept") if fit_intercept else ("coef",),
                                   ((d,), ()) if fit_intercept else ((d,),))

    def init_params(self, seed: int = 0) -> Array:
        return np.zeros(self.n_params)

    def objective(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        z = ops.matmul(batch["A"], x)
        w = x[: self._d]
        return ops.mean(ops.softplus(z) - batch["y"] * z) + (0.5 * self.l2) * ops.sum(w * w)

    @same_as_value
    def fun64(self, x: np.ndarray) -> float:
        """The float64 objective of the whole data, without the gradient (the value
        :meth:`value_and_grad` gives, to the bit)."""
        x = np.asarray(x, dtype=np.float64)
        return self._value(x, self.train_data["A"] @ x, self.train_data["y"])

    def _value(self, x: np.ndarray, z: np.ndarray, y: np.ndarray) -> float:
        """The objective from the margins ``z = A x``."""
        w = x[: self._d]
        # log(1 + exp(z)) without overflow
        return float(np.mean(np.logaddexp(0.0, z) - y * z)) + 0.5 * self.l2 * float(np.vdot(w, w))

    def value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> tuple[float, np.ndarray]:
        A, y = batch["A"], batch["y"]
        z = A @ x
        n = z.shape[0]
        w = x[: self._d]
        fun = self._value(x, z, y)
        r = _sigmoid(z) - y
        g = A.T @ r
        g /= n
        g[: self._d] += self.l2 * w
        return fun, g

    def hess_diag(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        A = batch["A"]
        s = ops.sigmoid(ops.matmul(A, x))
        diag = ops.mean(A * A * ops.reshape(s * (1.0 - s), (-1, 1)), axis=0)
        return diag + self.l2 * self._mask_like(ops, x)

    def _mask_like(self, ops: Any, x: Any) -> Any:
        # the regularized entries (coef) as a backend vector, built from x: 1 for coef, 0 else
        ones = ops.ones_like(x)
        if not self.fit_intercept:
            return ones
        return ops.concat([ones[: self._d], ones[self._d:] * 0.0])

    def lipschitz(self) -> float:
        if self._lipschitz is None:
            A = self._data["A"]
            with one_blas_thread():
                smax = float(np.linalg.norm(A, 2))
            self._lipschitz = smax * smax / (4.0 * A.shape[0]) + self.l2
        return self._lipschitz

    def metrics(self, x: np.ndarray) -> dict[str, float]:
        z = self._data["A"] @ np.asarray(x, dtype=np.float64)
        return {"accuracy": float(np.mean((z > 0) == (self._data["y"] > 0.5)))}

    def optimum(self) -> Optimum:
        if self._optimum is None:
            with one_blas_thread():  # f* independent of the thread count (reduction order)
                self._optimum = self._newton()
        return self._optimum

    def _newton(self) -> Optimum:
        """The tight reference solve: exact Hessian, Armijo backtracking, float64."""
        A = self._data["A"]
        n = A.shape[0]
        t0 = time.perf_counter()
        x = np.zeros(A.shape[1])
        f, g = self.value_and_grad(x, self._data)
        nit = 0
        while nit < NEWTON_MAXITER and np.max(np.abs(g)) > NEWTON_GTOL:
            s = _sigmoid(A @ x)
            H = (A * (s * (1.0 - s))[:, None]).T @ A / n + np.diag(self.l2 * self._mask)
            step = np.linalg.lstsq(H, -g, rcond=None)[0]
            t = 1.0
            while True:  # backtracking (Armijo); a full step near the optimum
                fn, gn = self.value_and_grad(x + t * step, self._data)
                if fn <= f + 1e-4 * t * float(g @ step) or t < 1e-10:
                    break
                t *= 0.5
            nit += 1
            if fn >= f and t < 1e-10:
                break
            x, f, g = x + t * step, fn, gn
        method = (f"Newton (exact Hessian, backtracking, float64), nit={nit}, "
                  f"|g|_inf={float(np.max(np.abs(g))):.1e}")
        return Optimum(fun=float(f), x=x, method=method, time=time.perf_counter() - t0,
                       kind="estimated")

