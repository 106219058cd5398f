"""The digits data: 1,797 images of 8 x 8 pixels (values 0-16) of the digits 0-9.

The UCI "Optical Recognition of Handwritten Digits" test set as scikit-learn's
``load_digits`` ships it (CC BY 4.0), stored here (``digits.npz``, 45 kB) so that no extra
package is needed. :func:`load_digits` scales the pixels to [0, 1] and splits the rows, in a
fixed random order, into 1,437 training and 360 validation rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp.stopping import MetricTarget

if TYPE_CHECKING:
    from optcmp.problems.native import ModelProblem

#: Rows of the validation split.
N_VALID = 360


def load_digits() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``((X_train, y_train), (X_valid, y_valid))``: float64 pixels in [0, 1], int64 labels.

    Returns
    -------
    tuple
        1,437 training and 360 validation rows of 64 pixels; the split is a permutation
        drawn from ``numpy.random.default_rng(0)``.
    """
    with np.load(Path(__file__).with_name("digits.npz")) as f:
        X = f["images"].astype(np.float64) / 16.0
        y = f["target"].astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    tr, va = order[:-N_VALID], order[-N_VALID:]
    return (X[tr], y[tr]), (X[va], y[va])


#: The validation accuracy of the digits workloads' default target.
TARGET_ACCURACY = 0.95
#: The frameworks :func:`digits_mlp` writes the network in.
FRAMEWORKS = ("torch", "keras", "jax")


def mlp_layers(sizes: tuple[int, ...], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Kernels (in, out) and biases drawn as torch's ``Linear`` draws them, from numpy:
    uniform on +-1/sqrt(fan_in), from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    out = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / np.sqrt(n_in)
        out.append((rng.uniform(-bound, bound, (n_in, n_out)), rng.uniform(-bound, bound, n_out)))
    return out


def cnn_layers(filters: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """A 3 x 3 kernel (h, w, in, out) and a (6 * 6 * filters, 10) dense layer, drawn as
    :func:`mlp_layers` draws (uniform on +-1/sqrt(fan_in))."""
    rng = np.random.default_rng(seed)
    fan = 9
    conv = (rng.uniform(-fan ** -0.5, fan ** -0.5, (3, 3, 1, filters)),
            rng.uniform(-fan ** -0.5, fan ** -0.5, filters))
    n = 36 * filters
    return [conv, (rng.uniform(-n ** -0.5, n ** -0.5, (n, 10)), rng.uniform(-n ** -0.5,
                                                                             n ** -0.5, 10))]


def _digits(kind: str, framework: str, layers: list[tuple[np.ndarray, np.ndarray]],
            dtype: str) -> ModelProblem:
    """A digits workload: ``kind`` ("mlp", "cnn") built natively in ``framework``."""
    from optcmp.problems import native

    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {FRAMEWORKS}, got {framework!r}")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    train, valid = load_digits()
    kw: dict[str, Any] = {"valid": valid, "metrics": ("accuracy",), "name": f"digits-{kind}",
                          "target": MetricTarget("val_accuracy", TARGET_ACCURACY)}
    if framework == "torch":
        from optcmp.frameworks.torch import model as tm

        return native.from_torch(getattr(tm, kind)(layers, dtype), "cross_entropy", train, **kw)
    if framework == "keras":
        from optcmp.frameworks.tensorflow import model as km

        return native.from_keras(getattr(km, kind)(layers, dtype), "cross_entropy", train, **kw)
    from optcmp.frameworks.jax import model as jm

    apply, params = getattr(jm, kind)(layers, dtype)
    return native.from_jax(apply, params, "cross_entropy", train, **kw)


def digits_mlp(framework: str = "torch", *, hidden: int = 32, seed: int = 0,
               dtype: str = "float32") -> ModelProblem:
    """The digits classifier 64 -> ``hidden`` -> 10 (ReLU), written natively in a framework.

    The same network and initial point in every framework (drawn by :func:`mlp_layers`):
    a ``torch.nn.Sequential``, a ``keras.Sequential``, or a JAX apply function with a list
    of ``{"kernel", "bias"}`` parameters; mean cross-entropy on the 1,437 training rows,
    validation accuracy on the 360 others, default target ``val_accuracy >= 0.95``.

    Parameters
    ----------
    framework : {"torch", "keras", "jax"}, default "torch"
    hidden : int, default 32
    seed : int, default 0
        The initial weights' seed.
    dtype : {"float32", "float64"}, default "float32"

    Returns
    -------
    ModelProblem
        Named ``digits-mlp``.
    """
    return _digits("mlp", framework, mlp_layers((64, int(hidden), 10), seed), dtype)


def digits_cnn(framework: str = "torch", *, filters: int = 8, seed: int = 0,
               dtype: str = "float32") -> ModelProblem:
    """The digits classifier as a small CNN, written natively in a framework.

    The 8 x 8 image, a 3 x 3 convolution of ``filters`` channels (no padding) and ReLU,
    flattened in (height, width, channel) order, a dense layer to 10 logits: torch's
    ``Conv2d`` (its module permutes to that order before flattening, as a port from Keras must),
    Keras' ``Conv2D``, or ``jax.lax.conv_general_dilated`` in Flax's layout; one initial point
    (:func:`cnn_layers`); data, loss and target as :func:`digits_mlp`.

    Parameters
    ----------
    framework : {"torch", "keras", "jax"}, default "torch"
    filters : int, default 8
    seed : int, default 0
    dtype : {"float32", "float64"}, default "float32"

    Returns
    -------
    ModelProblem
        Named ``digits-cnn``.
    """
    return _digits("cnn", framework, cnn_layers(int(filters), seed), dtype)


__all__ = ["FRAMEWORKS", "N_VALID", "TARGET_ACCURACY", "cnn_layers", "digits_cnn", "digits_mlp",
           "load_digits", "mlp_layers"]
