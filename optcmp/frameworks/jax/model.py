"""A user's JAX model (Flax's convention ``apply(params, X)``) evaluated off the clock.

:class:`JaxModel` keeps the parameter pytree's structure, its leaves' names (their
``jax.tree_util`` paths), shapes and dtype, the loss, and ``jax.jit`` of the loss, its gradient
and the outputs at a flat float64 vector ``x`` (the leaves in ``jax.tree_util`` order), in the
parameters' dtype. The timed steps are :mod:`optcmp.frameworks.jax.model_stepper`.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

#: Loss names and their ``jax.numpy`` formulas (the mean over the batch).
LOSSES: dict[str, Callable[[Any, Any], Any]] = {
    "cross_entropy": lambda out, y: jnp.mean(
        optax.softmax_cross_entropy_with_integer_labels(out, y)),
    "mse": lambda out, y: jnp.mean((out - y) ** 2),
}


def _name(path: tuple[Any, ...]) -> str:
    """A leaf's path as ``"dense1/kernel"``."""
    return "/".join(str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k))))
                    for k in path) or "params"


def mlp_apply(params: list[dict[str, Any]], X: Any) -> Any:
    """Dense layers (``X @ kernel + bias``, ReLU between) in Flax's (in, out) layout."""
    for layer in params[:-1]:
        X = jax.nn.relu(X @ layer["kernel"] + layer["bias"])
    return X @ params[-1]["kernel"] + params[-1]["bias"]


def mlp(layers: list[tuple[np.ndarray, np.ndarray]], dtype: str) -> tuple[Any, Any]:
    """:func:`mlp_apply` and its params (a list of ``{"kernel", "bias"}`` numpy arrays)."""
    return mlp_apply, [{"kernel": np.asarray(W, dtype), "bias": np.asarray(b, dtype)}
                       for W, b in layers]


def cnn_apply(params: list[dict[str, Any]], X: Any) -> Any:
    """8 x 8 images: a 3 x 3 convolution (NHWC, HWIO kernel, Flax's layout), ReLU, flattened,
    a dense layer."""
    conv, dense = params
    x = X.reshape(-1, 8, 8, 1)
    h = jax.lax.conv_general_dilated(x, conv["kernel"], (1, 1), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jax.nn.relu(h + conv["bias"])
    return h.reshape(h.shape[0], -1) @ dense["kernel"] + dense["bias"]


def cnn(layers: list[tuple[np.ndarray, np.ndarray]], dtype: str) -> tuple[Any, Any]:
    """:func:`cnn_apply` and its params."""
    return cnn_apply, [{"kernel": np.asarray(W, dtype), "bias": np.asarray(b, dtype)}
                       for W, b in layers]


class JaxModel:
    """``apply(params, X) -> outputs``, the parameter pytree and ``loss(outputs, targets)``."""

    framework = "jax"
    backend = "jax"

    def __init__(self, apply: Callable[..., Any], params: Any, loss: Any, *,
                 x64: bool = False) -> None:
        if not callable(apply):
            raise TypeError(f"apply must be callable apply(params, X), got "
                            f"{type(apply).__name__}")
        leaves, self.treedef = jax.tree_util.tree_flatten_with_path(params)
        arrays = [np.asarray(a) for _, a in leaves]
        if not arrays or any(not jnp.issubdtype(a.dtype, jnp.floating) for a in arrays):
            raise ValueError("params must be a pytree of floating-point arrays, got leaves of "
                             f"dtypes {sorted({str(a.dtype) for a in arrays})}")
        dtypes = {str(a.dtype) for a in arrays}
        if len(dtypes) > 1:
            raise ValueError(f"the parameters must share one dtype, got {sorted(dtypes)}")
        self.apply, self.params0 = apply, params
        self.names = tuple(_name(path) for path, _ in leaves)
        self.shapes = tuple(tuple(int(d) for d in a.shape) for a in arrays)
        self.dtype = dtypes.pop()
        self._x64 = x64 or self.dtype == "float64"
        self._x0 = np.concatenate([a.reshape(-1).astype(np.float64) for a in arrays])
        if isinstance(loss, str) and loss not in LOSSES:
            raise ValueError(f"loss {loss!r} is not a loss name; give one of "
                             f"{sorted(LOSSES)} or a function loss(outputs, targets)")
        if not isinstance(loss, str) and not callable(loss):
            raise TypeError(f"loss must be a name of {sorted(LOSSES)} or a function "
                            f"loss(outputs, targets), got {type(loss).__name__}")
        self.loss_arg = loss
        self.loss_name = loss if isinstance(loss, str) else getattr(loss, "__name__", "loss")
        self._compile()

    def _compile(self) -> None:
        """The loss function and the jitted evaluations (rebuilt after unpickling)."""
        self.loss = LOSSES[self.loss_arg] if isinstance(self.loss_arg, str) else self.loss_arg
        self._value_and_grad = jax.jit(jax.value_and_grad(self.objective))
        self._value = jax.jit(self.objective)
        self._outputs = jax.jit(self.apply)

    def __getstate__(self) -> dict[str, Any]:
        """The state to pickle (a worker compiles its own evaluations)."""
        drop = ("loss", "_value_and_grad", "_value", "_outputs")
        return {k: v for k, v in self.__dict__.items() if k not in drop}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._compile()

    def objective(self, params: Any, X: Any, y: Any) -> Any:
        """The loss of the model's outputs on ``X`` against ``y``."""
        return self.loss(self.apply(params, X), y)

    def describe(self) -> str:
        """The apply function and the parameters' tree."""
        fn = getattr(self.apply, "__qualname__", type(self.apply).__name__)
        try:
            source = inspect.getsource(self.apply)
        except (OSError, TypeError):
            source = ""
        return f"{fn}\n{source}\n{self.treedef}\n{self.shapes}"

    def x0(self) -> np.ndarray:
        """The initial parameters as one flat float64 vector."""
        return self._x0.copy()

    @contextlib.contextmanager
    def _scope(self) -> Iterator[None]:
        """``jax_enable_x64`` on inside, for the float64 twin (:meth:`float64`)."""
        with jax.enable_x64(True) if self._x64 else contextlib.nullcontext():
            yield

    def tree(self, x: np.ndarray) -> Any:
        """The parameter pytree of flat ``x``, in the parameters' dtype."""
        leaves, a = [], 0
        for shape in self.shapes:
            b = a + int(np.prod(shape, dtype=np.int64))
            leaves.append(jnp.asarray(np.asarray(x[a:b]).reshape(shape).astype(self.dtype)))
            a = b
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    def array(self, a: Any) -> Any:
        """A data array as a JAX array (floats in the parameters' dtype)."""
        a = jnp.asarray(a)
        return a.astype(self.dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a

    def outputs(self, x: np.ndarray, X: Any) -> np.ndarray:
        with self._scope():
            return np.asarray(self._outputs(self.tree(x), self.array(X)), dtype=np.float64)

    def loss_value(self, x: np.ndarray, X: Any, y: Any) -> Any:
        with self._scope():
            return np.asarray(self._value(self.tree(x), self.array(X), self.array(y)),
                              dtype=np.float64)

    def value_and_grad(self, x: np.ndarray, X: Any, y: Any) -> tuple[float, np.ndarray]:
        with self._scope():
            f, g = self._value_and_grad(self.tree(x), self.array(X), self.array(y))
            leaves = jax.tree_util.tree_leaves(g)
            return float(f), np.concatenate([np.asarray(v, np.float64).reshape(-1) for v in leaves])

    def canonical(self, i: int, a: np.ndarray) -> np.ndarray:
        """Parameter ``i`` in the (in, out) layout: Flax's own."""
        return a

    def from_canonical(self, i: int, a: np.ndarray) -> np.ndarray:
        return a

    def float64(self) -> JaxModel:
        """The same model computing in float64 (``jax_enable_x64`` on around each of its
        evaluations only)."""
        p64 = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), self.params0)
        return JaxModel(self.apply, p64, self.loss_arg, x64=True)


__all__ = ["LOSSES", "JaxModel", "cnn", "cnn_apply", "mlp", "mlp_apply"]
