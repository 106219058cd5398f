r"""FizzBuzz with a one-hidden-layer MLP: the second story behind optcmp.

One loss with one reduction, one initial point drawn in numpy float64, one data split and one
minibatch order on every backend. Why: see docs/fizzbuzz-story.md, "The usual suspects".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optcmp._scipy import special
from optcmp.frameworks.numpy.ops import row_logsumexp, row_sum, sigmoid, sigmoid_of_negated
from optcmp.problems._scratch import MIN_ELEMENTS, work_arrays
from optcmp.problems.base import Array, ParamLayout, StoredProblem, read_only, same_as_value
from optcmp.problems.fizzbuzz_data import CLASSES, split_numbers

#: Loss names and the reduction each one uses over samples (and outputs).
LOSSES = {"mse": "mean", "mse_sum": "sum", "cross_entropy": "mean"}
#: Initializations of the weight matrices (biases start at zero).
INITS = ("normal", "truncated_normal", "glorot_uniform")
#: Default standard deviation of each initialization (``glorot_uniform`` has none).
DEFAULT_INIT_STD = {"normal": 1.0, "truncated_normal": 0.01, "glorot_uniform": None}


def _int_arg(name: str, v: Any, lo: int) -> int:
    """``v`` as an int, refused unless it is an integer >= ``lo``."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def _number_range(low: Any, high: Any, n_max: Any) -> tuple[int, int]:
    """``(low, high)`` from ``high`` or ``n_max`` (default 1000): a non-empty range."""
    if n_max is not None and high is not None:
        raise ValueError(f"give n_max or high, not both (got n_max={n_max!r}, high={high!r})")
    if n_max is not None:
        high = _int_arg("n_max", n_max, 0) + 1
    high = 1000 if high is None else _int_arg("high", high, 1)
    low = _int_arg("low", low, 0)
    if high <= low:
        raise ValueError(f"the range low..high-1 is empty (low={low}, high={high})")
    return low, high


def _check_scales(test_fraction: Any, init: str, init_std: Any, damping: Any,
                  target_loss: Any) -> None:
    """``test_fraction`` in [0, 1); ``init_std`` (not with glorot_uniform), ``damping`` and
    ``target_loss`` finite and > 0."""
    if isinstance(test_fraction, bool) or not 0.0 <= float(test_fraction) < 1.0:
        raise ValueError(f"test_fraction must be in [0, 1), got {test_fraction!r}")
    if init_std is not None and init == "glorot_uniform":
        raise ValueError("init_std applies to 'normal' and 'truncated_normal' only; "
                         "glorot_uniform's scale is fixed by the layer sizes")
    for name, v in (("init_std", init_std), ("damping", damping), ("target_loss", target_loss)):
        if (v is not None or name == "damping") and not (math.isfinite(float(v)) and float(v) > 0):
            raise ValueError(f"{name} must be a finite float > 0, got {v!r}")


class FizzBuzzMLP(StoredProblem):
    r"""FizzBuzz classification with a 1-hidden-layer sigmoid MLP (the second story).

    The data, the network and the losses: see docs/problems.md, "FizzBuzz MLP". The iterate
    packs ``W1`` ``(n_bits, hidden)``, ``b1``, ``W2`` ``(hidden, 4)``, ``b2``.

    Parameters
    ----------
    hidden : int, default 100
    loss : {"mse", "mse_sum", "cross_entropy"}, default "mse"
    init : {"normal", "truncated_normal", "glorot_uniform"}, default "normal"
        Weights: :math:`N(0, s^2)`, the same redrawn outside :math:`\pm 2s`, or Glorot uniform.
    init_std : float, optional
        :math:`s`; default 1 for ``"normal"``, 0.01 for ``"truncated_normal"``.
    low, high, n_max : int, default 0, 1000, None
        The numbers ``low .. high - 1``; ``n_max`` is shorthand for ``high = n_max + 1``.
    n_bits : int, default 10
    test_fraction : float, default 0.1
    seed : int, default 0
        Seed of the train/test split.
    damping : float, default 1e-3
        :math:`\mu` added to the Gauss-Newton diagonal of :meth:`hess_diag`.
    target_loss : float, optional
        Loss of :meth:`default_target`; default a tenth of :meth:`plateau_loss`.
    drop_last : bool, default False
        Minibatch runs leave out each epoch's last, shorter batch.
    """

    name = "fizzbuzz"

    def __init__(self, hidden: int = 100, loss: str = "mse", init: str = "normal", *,
                 init_std: float | None = None, low: int = 0, high: int | None = None,
                 n_max: int | None = None, n_bits: int = 10, test_fraction: float = 0.1,
                 seed: int = 0, damping: float = 1e-3, target_loss: float | None = None,
                 drop_last: bool = False) -> None:
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}")
        if init not in INITS:
            raise ValueError(f"init must be one of {list(INITS)}, got {init!r}")
        hidden = _int_arg("hidden", hidden, 1)
        n_bits = _int_arg("n_bits", n_bits, 1)
        low, high = _number_range(low, high, n_max)
        _check_scales(test_fraction, init, init_std, damping, target_loss)
        numbers, X, labels, train_idx, test_idx = split_numbers(
            low, high, n_bits, test_fraction, seed)
        eye = np.eye(len(CLASSES))

        self.hidden, self.loss, self.reduction, self.init = hidden, loss, LOSSES[loss], init
        self.init_std = (float(init_std) if init_std is not None else DEFAULT_INIT_STD[init])
        self.n_bits, self.low, self.high = n_bits, low, high
        self.test_fraction, self.seed = float(test_fraction), int(seed)
        self.damping = float(damping)
        if not isinstance(drop_last, (bool, np.bool_)):
            raise ValueError(f"drop_last must be True or False, got {drop_last!r}")
        self.drop_last = bool(drop_last)
        #: Integers of the training rows, in training-row order, shape (n_train,).
        self.train_numbers = numbers[train_idx]
        #: Integers of the test rows (sorted), shape (n_test,).
        self.test_numbers = numbers[test_idx]
        #: Class of each training row (int64), shape (n_train,).
        self.train_labels = labels[train_idx]
        #: Class of each test row (int64), shape (n_test,).
        self.test_labels = labels[test_idx]
        self._data = read_only({"X": X[train_idx], "Y": eye[labels[train_idx]]})
        #: Test arrays ``X`` (n_test, n_bits) and ``Y`` (n_test, 4), float64.
        self.test_data = {"X": X[test_idx], "Y": eye[labels[test_idx]]}
        self._layout = ParamLayout(("W1", "b1", "W2", "b2"),
                                   ((n_bits, hidden), (hidden,), (hidden, 4), (4,)))
        self.target_loss = (float(target_loss) if target_loss is not None
                            else 0.1 * self.plateau_loss())

    def class_counts(self, split: str = "train") -> np.ndarray:
        """Rows per class (int64, order of :data:`CLASSES`) in ``split``: train, test or all."""
        labels = {"train": self.train_labels, "test": self.test_labels,
                  "all": np.concatenate([self.train_labels, self.test_labels])}
        if split not in labels:
            raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
        return np.bincount(labels[split], minlength=len(CLASSES)).astype(np.int64)

    def init_params(self, seed: int = 0) -> Array:
        rng = np.random.default_rng(seed)
        return self._layout.flatten({"W1": self._draw(rng, (self.n_bits, self.hidden)),
                                     "b1": np.zeros(self.hidden),
                                     "W2": self._draw(rng, (self.hidden, 4)), "b2": np.zeros(4)})

    def _draw(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        """One weight matrix of the initial point."""
        if self.init == "glorot_uniform":
            limit = math.sqrt(6.0 / (shape[0] + shape[1]))
            return rng.uniform(-limit, limit, size=shape)
        z = rng.standard_normal(shape)
        if self.init == "truncated_normal":  # redraw beyond 2 std, like tf.random.truncated_normal
            bad = np.abs(z) > 2.0
            while bad.any():
                z[bad] = rng.standard_normal(int(bad.sum()))
                bad = np.abs(z) > 2.0
        assert self.init_std is not None
        return self.init_std * z

    def _forward(self, ops: Any, x: Any, X: Any) -> tuple[dict[str, Any], Any, Any]:
        """The named parameters, the hidden layer ``H`` and the logits ``Z`` on ``ops``."""
        p = self._layout.unflatten(x, ops)
        H = ops.sigmoid(ops.matmul(X, p["W1"]) + p["b1"])
        return p, H, ops.matmul(H, p["W2"]) + p["b2"]

    def _loss(self, ops: Any, Z: Any, Y: Any, R: Any = None) -> Any:
        """The objective from the logits ``Z`` (and the residuals ``sigmoid(Z) - Y``, if known)."""
        if self.loss == "cross_entropy":
            return ops.mean(ops.logsumexp(Z, axis=1) - ops.sum(Z * Y, axis=1))
        sq = ops.square(ops.sigmoid(Z) - Y if R is None else R)
        return ops.sum(sq) if self.loss == "mse_sum" else ops.mean(sq)

    def objective(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        if self.loss != "cross_entropy" and not getattr(x, "requires_grad", True):
            return self._objective_in_place(ops, x, batch)  # a torch tensor off the tape
        _, _, Z = self._forward(ops, x, batch["X"])
        return self._loss(ops, Z, batch["Y"])

    def _objective_in_place(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        """:meth:`objective`'s operations with each product and sigmoid written in place
        (the same value, two arrays the size of the hidden layer fewer)."""
        W1, b1, W2, b2 = self._views(x)
        H = ops.matmul(batch["X"], W1)
        H += b1
        ops.sigmoid(H, out=H)
        R = ops.matmul(H, W2)
        R += b2
        ops.sigmoid(R, out=R)
        R -= batch["Y"]
        return self._loss(ops, None, batch["Y"], R)

    has_gradient_ops = True
    has_numpy_grad = True

    def gradient_ops(self, ops: Any, x: Any, batch: dict[str, Any], *,
                     value: bool = True) -> tuple[Any, Any]:
        """Objective and gradient by backpropagation on ``ops`` (no tape)."""
        X, Y = batch["X"], batch["Y"]
        p, H, Z = self._forward(ops, x, X)
        if self.loss == "cross_entropy":
            R = None
            dZ = (ops.softmax(Z, axis=1) - Y) * (4.0 / ops.size(Z))
        else:
            out = ops.sigmoid(Z)
            R = out - Y
            scale = 1.0 if self.loss == "mse_sum" else 1.0 / ops.size(R)
            dZ = R * (out * (1.0 - out)) * (2.0 * scale)
        fun = self._loss(ops, Z, Y, R) if value else None
        dA1 = ops.matmul(dZ, ops.transpose(p["W2"])) * (H * (1.0 - H))
        g = ops.concat([ops.reshape(ops.matmul(ops.transpose(X), dA1), (-1,)),
                        ops.sum(dA1, axis=0),
                        ops.reshape(ops.matmul(ops.transpose(H), dZ), (-1,)),
                        ops.sum(dZ, axis=0)])
        return fun, g

    def gradient_into(self, ops: Any, x: Any, batch: dict[str, Any], work: dict[str, Any], *,
                      value: bool = True, out: Any = None) -> tuple[Any, Any]:
        """:meth:`gradient_ops`'s operations in their order, each product and sigmoid written
        into an array it made (ops whose ``matmul``, ``sigmoid`` and ``sum`` take ``out=``:
        numpy's and torch's): the same values with fewer arrays and calls. ``work`` (kept
        by the caller) keeps the views of the last ``x`` and ``out``; the gradient is written
        into ``out`` where given (then returned), else into a new vector."""
        if self.loss == "cross_entropy":
            return self.gradient_ops(ops, x, batch, value=value)
        W1, b1, W2, b2 = self._views(x, work, "x")
        X, Y = batch["X"], batch["Y"]
        H = ops.matmul(X, W1)
        H += b1
        ops.sigmoid(H, out=H)
        R = ops.matmul(H, W2)
        R += b2
        ops.sigmoid(R, out=R)
        t = 1.0 - R
        t *= R
        R -= Y  # R = out - Y, then dZ = R * (out * (1 - out)) * (2 scale), in place
        fun = self._loss(ops, None, Y, R) if value else None
        R *= t
        R *= 2.0 * (1.0 if self.loss == "mse_sum" else 1.0 / ops.size(R))
        g = ops.zeros_like(x) if out is None else out
        gW1, gb1, gW2, gb2 = self._views(g, work, "out") if out is not None else self._views(g)
        dA1 = ops.matmul(R, W2.T)
        t = 1.0 - H
        t *= H
        dA1 *= t
        ops.matmul(X.T, dA1, out=gW1)
        ops.sum(dA1, axis=0, out=gb1)
        ops.matmul(H.T, R, out=gW2)
        ops.sum(R, axis=0, out=gb2)
        return fun, g

    def _views(self, v: Any, work: dict[str, Any] | None = None, key: str = "") -> Any:
        """``W1, b1, W2, b2`` as views of the flat ``v`` (kept in ``work[key]`` for ``v``)."""
        kept = None if work is None else work.get(key)
        if kept is not None and kept[0] is v:
            return kept[1]
        views = tuple(v[a:b].reshape(s) for s, (a, b) in zip(self._layout.shapes,
                                                             self._layout.offsets()))
        if work is not None:
            work[key] = (v, views)
        return views

    def value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> tuple[float, np.ndarray]:
        return self._numpy_value_and_grad(x, batch, True)

    def grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> np.ndarray:
        return self._numpy_value_and_grad(x, batch, False)[1]

    @same_as_value
    def fun64(self, x: np.ndarray) -> float:
        """The float64 objective of the whole data, without the gradient (the value
        :meth:`value_and_grad` gives, to the bit)."""
        return self._numpy_value_and_grad(np.asarray(x, dtype=np.float64), self.train_data,
                                          True, grad=False)[0]

    def _numpy_value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray],
                              value: bool, grad: bool = True) -> tuple[float, Any]:
        """Value (NaN unless ``value``) and gradient (None unless ``grad``) in numpy, on reused
        work arrays."""
        W1, b1, W2, b2 = self._views(x)
        X, Y = batch["X"], batch["Y"]
        n = X.shape[0]
        work = (work_arrays((n, self.hidden), x.dtype, 3)  # full data: no page faults
                if n * self.hidden >= MIN_ELEMENTS and X.dtype == Y.dtype == x.dtype else None)
        H = sigmoid_of_negated(self._negated_layer(X, W1, b1, None if work is None else work[0]))
        Z = H @ W2
        Z += b2
        if self.loss == "cross_entropy":
            lse = row_logsumexp(Z)  # scipy's logsumexp, to the bit
            fun = float(np.mean(lse[:, 0] - row_sum(Z * Y))) if value else float("nan")
            if not grad:
                return fun, None
            dZ = np.exp(Z - lse)  # softmax
            dZ -= Y
            dZ *= 1.0 / n
        else:
            Out = sigmoid(Z, out=Z)  # Z is not read again
            R = Out - Y if grad else np.subtract(Out, Y, out=Out)
            scale = 1.0 if self.loss == "mse_sum" else 1.0 / R.size
            fun = float(np.vdot(R, R)) * scale if value else float("nan")
            if not grad:
                return fun, None
            dZ = R
            dZ *= Out * (1.0 - Out)
            dZ *= 2.0 * scale
        g = np.empty_like(x)
        gW1, gb1, gW2, gb2 = self._views(g)
        np.matmul(H.T, dZ, out=gW2)
        np.add.reduce(dZ, axis=0, out=gb2)
        dA1 = dZ @ W2.T if work is None else np.matmul(dZ, W2.T, out=work[1])
        dH = np.subtract(1.0, H, out=None if work is None else work[2])
        dH *= H
        dA1 *= dH
        np.matmul(X.T, dA1, out=gW1)
        np.add.reduce(dA1, axis=0, out=gb1)
        return fun, g

    def _negated_layer(self, X: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                       out: np.ndarray | None) -> np.ndarray:
        """``-(X @ W1 + b1)`` (negation is exact): one product with the bias as a last row of
        weights where ``X`` is the problem's training inputs (kept with a column of ones)."""
        Xa = self._with_ones(X) if out is not None else None
        if Xa is not None:
            W1a = np.concatenate((W1, b1[None, :]))
            return np.matmul(Xa, np.negative(W1a, out=W1a), out=out)
        N = np.matmul(X, -W1, out=out)
        N -= b1
        return N

    def _with_ones(self, X: np.ndarray) -> np.ndarray | None:
        """The problem's own training inputs ``X`` with a column of ones (made once), or None
        for another array."""
        if X is not self._data["X"]:
            return None
        kept = getattr(self, "_ones", None)
        if kept is None:
            kept = self._ones = np.hstack((X, np.ones((len(X), 1), X.dtype)))
        return kept

    def hess_diag(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        r"""Damped Gauss-Newton diagonal: exact :math:`\operatorname{diag}(J^\top H_L J) + \mu`.

        The generalized Gauss-Newton matrix (Schraudolph 2002) of the network output, in closed
        form; ``damping`` as in LeCun et al.'s :math:`\eta / (\mu + h_{kk})` (1998, Sec. 9.1).
        """
        X = batch["X"]
        n = X.shape[0]
        p, H, Z = self._forward(ops, x, X)
        D2 = ops.square(H * (1.0 - H))
        W2sq = ops.square(p["W2"])
        if self.loss == "cross_entropy":
            c = 1.0 / n
            P = ops.softmax(Z, axis=1)
            S2 = P * (1.0 - P)
            PW = ops.matmul(P, ops.transpose(p["W2"]))
            Q = ops.matmul(P, ops.transpose(W2sq)) - ops.square(PW)
        else:
            c = 2.0 if self.loss == "mse_sum" else 2.0 / (4 * n)
            Out = ops.sigmoid(Z)
            S2 = ops.square(Out * (1.0 - Out))
            Q = ops.matmul(S2, ops.transpose(W2sq))
        M = D2 * Q
        H2t = ops.transpose(ops.square(H))
        parts = [ops.matmul(ops.transpose(ops.square(X)), M), ops.sum(M, axis=0),  # W1, b1
                 ops.matmul(H2t, S2), ops.sum(S2, axis=0)]  # W2, b2
        flat = ops.concat([ops.reshape(a, (-1,)) for a in parts], axis=0)
        return flat * c + self.damping

    def plateau_loss(self, split: str = "train") -> float:
        """Objective of the class-prior net, which predicts the class frequencies of ``split``."""
        counts = self.class_counts(split)
        n = int(counts.sum())
        prior = counts / n
        if self.loss == "cross_entropy":
            nz = prior[prior > 0]
            return float(-np.sum(nz * np.log(nz)))
        per_sample = 1.0 - float(np.sum(prior**2))
        return per_sample * n if self.loss == "mse_sum" else per_sample / 4.0

    def plateau_params(self, split: str = "train") -> Array:
        """Parameters of the class-prior net: zero weights, ``b2`` giving :meth:`plateau_loss`."""
        counts = self.class_counts(split)
        prior = np.clip(counts / counts.sum(), 1e-12, 1 - 1e-12)
        x = np.zeros(self.n_params)
        x[-4:] = np.log(prior) if self.loss == "cross_entropy" else special().logit(prior)
        return x

    def default_target(self, tol: float | None = None) -> Any:
        from optcmp.stopping import LossTarget

        return LossTarget(self.target_loss)

    def predict(self, x: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Predicted class (int64, argmax of the outputs) of each row of ``X`` at ``x``."""
        p = self._layout.unflatten(np.asarray(x, dtype=np.float64))
        H = sigmoid(X @ p["W1"] + p["b1"])
        return np.argmax(H @ p["W2"] + p["b2"], axis=1).astype(np.int64)

    def metrics(self, x: np.ndarray) -> dict[str, float]:
        """``train_accuracy`` and, with a test set, ``test_accuracy`` and ``test_loss``."""
        xf = np.asarray(x, dtype=np.float64)
        out = {"train_accuracy": float(np.mean(self.predict(xf, self._data["X"])
                                               == self.train_labels))}
        if self.test_labels.size:
            out["test_accuracy"] = float(np.mean(self.predict(xf, self.test_data["X"])
                                                 == self.test_labels))
            out["test_loss"] = float(self.value_and_grad(xf, self.test_data)[0])
        return out

    def spec(self) -> dict[str, Any]:
        return {"problem": self.name, "source": "generated", "hidden": self.hidden,
                "loss": self.loss, "init": self.init, "init_std": self.init_std,
                "low": self.low, "high": self.high, "n_bits": self.n_bits,
                "test_fraction": self.test_fraction, "seed": self.seed,
                "damping": self.damping, "target_loss": self.target_loss,
                "drop_last": self.drop_last}


__all__ = ["DEFAULT_INIT_STD", "INITS", "LOSSES", "FizzBuzzMLP"]
