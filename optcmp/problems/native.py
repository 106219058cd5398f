"""A user's own model as a problem: :func:`from_torch`, :func:`from_keras`, :func:`from_jax`.

The model runs on its own framework, with the framework's autodiff and optimizers on its own
parameters (no flat vector on the hot path: the steppers are
:mod:`optcmp.frameworks.models` and each framework's ``model_stepper``). The problem is what the
run loop reads off the clock: the loss and gradient at a flat iterate (the parameters in
the model's order), the validation metrics, the data, and the model's own initial point.

A float32 model is judged in its own arithmetic: its runs are float32 runs on its framework
(the result's ``dtype``), the loss at an observation is the model's float32 loss, and no
float64 re-evaluation confirms a target (there is no float64 model to evaluate).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from optcmp._io import install_hint
from optcmp.problems.base import ParamLayout, StoredProblem, count_rows

#: Metrics a native-model problem computes on its validation data, from the model's outputs.
METRICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "accuracy": lambda out, y: float(np.mean(
        (np.argmax(out, axis=1) if out.ndim == 2 and out.shape[1] > 1
         else (out.reshape(len(y), -1)[:, 0] > 0)) == y.reshape(-1))),
    "mse": lambda out, y: float(np.mean((out.reshape(y.shape) - y) ** 2)),
    "mae": lambda out, y: float(np.mean(np.abs(out.reshape(y.shape) - y))),
}
#: Frameworks' package extras (:func:`optcmp._io.install_hint`).
EXTRAS = {"torch": "torch", "keras": "tensorflow", "jax": "jax"}
#: Rows of the probe that checks the model, the loss and the targets at construction.
PROBE_ROWS = 2


def as_numpy(a: Any, what: str) -> np.ndarray:
    """A numpy copy of an array of any framework (torch tensors detached to the host)."""
    if hasattr(a, "detach"):
        a = a.detach().cpu().numpy()
    try:
        out = np.array(a)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be an array (numpy, torch, TensorFlow or JAX), got "
                        f"{type(a).__name__}") from exc
    if not (np.issubdtype(out.dtype, np.number) or out.dtype == np.bool_) or out.ndim == 0:
        raise ValueError(f"{what} must be a numeric array with a row axis, got dtype "
                         f"{out.dtype} and shape {out.shape}")
    return out


def split_data(data: Any, what: str, dtype: str) -> dict[str, np.ndarray]:
    """``{"X", "y"}`` of a ``(X, y)`` pair or a dict with keys ``X`` (or ``x``) and ``y``:
    inputs in the model's dtype, integer targets as int64, one row count."""
    if isinstance(data, Mapping):
        xk = next((k for k in ("X", "x", "inputs") if k in data), None)
        yk = next((k for k in ("y", "targets") if k in data), None)
        if xk is None or yk is None or len(data) != 2:
            raise ValueError(f"{what} as a dict needs exactly the keys 'X' and 'y', got "
                             f"{sorted(map(str, data))}")
        X, y = data[xk], data[yk]
    elif isinstance(data, Sequence) and not isinstance(data, str) and len(data) == 2:
        X, y = data
    else:
        raise TypeError(f"{what} must be a pair (X, y) or a dict {{'X': ..., 'y': ...}}, got "
                        f"{type(data).__name__}")
    X, y = as_numpy(X, f"{what} X"), as_numpy(y, f"{what} y")
    fx = np.float32 if dtype not in ("float64", "float32") else np.dtype(dtype)
    out = {"X": X.astype(fx) if np.issubdtype(X.dtype, np.floating) or X.dtype == np.uint8
           else X, "y": y.astype(np.int64) if np.issubdtype(y.dtype, np.integer)
           else y.astype(fx)}
    for k, a in out.items():
        if np.issubdtype(a.dtype, np.floating) and not np.all(np.isfinite(a)):
            raise ValueError(f"{what} {k} contains {int((~np.isfinite(a)).sum())} NaN or inf "
                             "value(s); drop or impute them first")
    if len(X) != len(y):
        raise ValueError(f"{what}: X has {len(X)} rows and y has {len(y)}; every row of X "
                         "needs its target")
    count_rows(out, what)
    return out


class ModelProblem(StoredProblem):
    """A native model, its loss, training and validation data: see :func:`from_torch`.

    Parameters
    ----------
    model
        The framework's evaluator (``TorchModel``, ``KerasModel`` or ``JaxModel``).
    data, valid, metrics, name
        As in :func:`from_torch`.
    target : optcmp.stopping.Rule, optional
        The default target (:meth:`default_target`), e.g. a ``MetricTarget``.
    """

    reads_only_own_data = False  # user code: f(x0) evaluated by every run

    def __init__(self, model: Any, data: Any, valid: Any = None, metrics: Sequence[str] = (),
                 name: str | None = None, *, target: Any = None) -> None:
        if model.dtype not in ("float32", "float64", "bfloat16", "float16"):
            raise ValueError(f"the model's parameters are {model.dtype}: optcmp runs native "
                             f"{model.framework} models in float32, float64, bfloat16 or "
                             "float16")
        self.model = model
        self.framework: str = model.framework
        #: The backend its runs take (``compare`` runs there by default).
        self.backend_name: str = model.backend
        #: The model's own dtype: its runs compute in it.
        self.native_dtype: str = model.dtype
        self.name = name or f"{self.framework}-model"
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self._layout = ParamLayout(tuple(model.names), tuple(model.shapes))
        self._x0 = np.asarray(model.x0(), dtype=np.float64)
        self._data = split_data(data, "data", model.dtype)
        self._valid = None if valid is None else split_data(valid, "valid", model.dtype)
        if isinstance(metrics, str):
            metrics = (metrics,)
        unknown = [m for m in metrics if m not in METRICS]
        if unknown:
            raise ValueError(f"metric(s) {unknown} cannot be computed; give names of "
                             f"{sorted(METRICS)}")
        if metrics and self._valid is None:
            raise ValueError(f"metrics {list(metrics)} are computed on the validation data: "
                             "give valid=(X, y)")
        self.metric_names = tuple(metrics)
        self._target = target
        self._probe(self._data, "data")
        if self._valid is not None:
            self._probe(self._valid, "valid")

    def _probe(self, data: dict[str, np.ndarray], what: str) -> None:
        """Run the model and loss on a few rows: outputs that fit the targets, a scalar loss."""
        X, y = data["X"][:PROBE_ROWS], data["y"][:PROBE_ROWS]
        try:
            out = self.model.outputs(self._x0, X)
        except Exception as exc:
            raise ValueError(f"the model fails on {what} X of shape {data['X'].shape[1:]} per "
                             f"row: {type(exc).__name__}: {exc}") from exc
        if out.shape[:1] != (len(X),):
            raise ValueError(f"the model's output has shape {out.shape} for {len(X)} rows of "
                             f"{what}; its first axis must be the rows")
        loss = getattr(self.model, "loss_name", "")
        fits = (out.ndim == 2 and y.ndim == 1 and np.issubdtype(y.dtype, np.integer)
                and int(y.max()) < out.shape[1] and int(data["y"].max()) < out.shape[1]
                ) if loss == "cross_entropy" else (loss != "mse" or out.shape == y.shape)
        if not fits:
            raise ValueError(f"the model's output shape {out.shape[1:]} per row does not fit "
                             f"the {what} targets of shape {y.shape[1:]} per row (dtype "
                             f"{y.dtype}, largest {data['y'].max()}) for loss {loss!r}")
        try:
            value = np.asarray(self.model.loss_value(self._x0, X, y))
        except Exception as exc:
            raise ValueError(f"the loss fails on the model's output of shape {out.shape} and "
                             f"{what} targets of shape {y.shape}: {type(exc).__name__}: "
                             f"{exc}") from exc
        if value.size != 1 or value.ndim > 1:
            raise ValueError(f"the loss must return a scalar (reduce over the batch, e.g. "
                             f"its mean), got shape {value.shape}")

    def default_target(self, tol: float | None = None) -> Any:
        """The target given at construction (a shipped workload's), else None."""
        return self._target

    def init_params(self, seed: int = 0) -> np.ndarray:
        """The model's own initial parameters (the same for every seed)."""
        return self._x0.copy()

    def objective(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        raise NotImplementedError(f"problem {self.name!r} is a native {self.framework} model: "
                                  "it runs on its own framework, not against optcmp's ops")

    def value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray]
                       ) -> tuple[float, np.ndarray]:
        """The loss and gradient by the framework's autodiff, in the model's dtype."""
        return self.model.value_and_grad(np.asarray(x, dtype=np.float64), batch["X"],
                                         batch["y"])

    def fun64(self, x: np.ndarray) -> float:
        """The training loss in the model's own arithmetic (a float32 model has no float64
        twin to re-evaluate it)."""
        return float(self.model.loss_value(np.asarray(x, dtype=np.float64), self._data["X"],
                                           self._data["y"]))

    def metrics(self, x: np.ndarray) -> dict[str, float]:
        """``val_loss`` and ``val_<name>`` of every metric, on the validation data."""
        if self._valid is None:
            return {}
        X, y = self._valid["X"], self._valid["y"]
        x = np.asarray(x, dtype=np.float64)
        out = {"val_loss": float(self.model.loss_value(x, X, y))}
        if self.metric_names:
            pred = self.model.outputs(x, X)
            out.update({f"val_{m}": METRICS[m](pred, y) for m in self.metric_names})
        return out

    def unsupported_backend(self, backend: str) -> str | None:
        if backend == self.backend_name:
            return None
        return (f"a native {self.framework} model runs on backend {self.backend_name!r} only, "
                f"not {backend!r}")

    def spec(self) -> dict[str, Any]:
        h = hashlib.sha256(self._x0.tobytes())
        for part in (self._data, self._valid or {}):
            for k in sorted(part):
                h.update(k.encode() + str(part[k].shape).encode() + part[k].tobytes())
        arch = hashlib.sha256(self.model.describe().encode()).hexdigest()[:16]
        return {"problem": self.name, "source": f"{self.framework} model in its own "
                f"{self.native_dtype} arithmetic", "name": self.name,
                "framework": self.framework, "dtype": self.native_dtype,
                "loss": str(getattr(self.model, "loss_name", "loss")),
                "metrics": list(self.metric_names), "n_params": self.n_params,
                "n_samples": self.n_samples, "architecture": arch,
                "fingerprint": h.hexdigest()[:16]}


def _missing(fn: str, framework: str, exc: ImportError) -> ImportError:
    """The error of a ``from_*`` whose framework is not installed, naming the extra."""
    return ImportError(f"{fn} needs {framework}, which is not installed ({exc}); install it "
                       f"with {install_hint(EXTRAS[framework])}")


def from_torch(model: Any, loss: Any, data: Any, *, valid: Any = None,
               metrics: Sequence[str] = (), name: str | None = None,
               target: Any = None, compile_step: bool | str = False,
               scheduler: Callable[[Any], Any] | None = None) -> ModelProblem:
    """A problem from a ``torch.nn.Module``, trained by ``torch.optim`` on its parameters.

    Parameters
    ----------
    model : torch.nn.Module
        Its trainable parameters, in ``named_parameters()`` order, are the iterate; their
        values now are the initial point; their dtype (float32, float64, bfloat16, float16)
        the run's. A bfloat16 or float16 run counts the steps that changed no parameter
        (``conditions.noop_steps``); one that ends short of its target with most of its steps
        such is ``rounded`` (its updates round away), not ``stalled``.
    loss : callable or {"cross_entropy", "mse"}
        ``loss(outputs, targets) -> scalar tensor`` (the mean over the batch, as torch's).
    data : (X, y) or dict {"X": ..., "y": ...}
        Training rows (numpy arrays or tensors); integer targets are class labels.
    valid : (X, y) or dict, optional
        Validation rows: ``val_loss`` and ``val_<metric>`` are reported at every observation
        (``optcmp.MetricTarget("val_accuracy", 0.95)`` is then a target).
    metrics : sequence of {"accuracy", "mse", "mae"}, optional
    name : str, optional
        Default ``"torch-model"``.
    target : optcmp.stopping.Rule, optional
        The problem's default target (used when ``compare`` is given no ``stopping``), e.g.
        ``MetricTarget("val_accuracy", 0.95)``; without it a run needs ``stopping=``.
    compile_step : bool or str, default False
        Run the optimizer's update (``opt.step()``, then the schedule's ``LambdaLR.step()``)
        under ``torch.compile`` (a string: its ``backend``), as people compile it; a compile
        inside the timed region (a scheduler that changes a float hyperparameter makes torch
        recompile) is counted in ``conditions.compiles_in_timed`` and warned about; each run
        starts from empty dynamo caches (``torch._dynamo.reset()``), and a run in which dynamo
        hit its recompile limit (it then runs the step eagerly) is marked
        ``conditions.compiled == "torch.compile -> eager fallback"``. A module compiled with
        ``torch.compile(model)`` is given as ``model``.
    scheduler : callable, optional
        ``scheduler(optimizer) -> torch.optim.lr_scheduler.LRScheduler``, e.g.
        ``lambda opt: torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=1000)``:
        each run builds it on its own optimizer and steps it after every ``opt.step()``
        (under ``torch.compile`` with ``compile_step``); an optimizer spec's ``schedule`` is
        then refused. A tensor learning rate (torch's recipe for compiled steps) is set in
        the function, ``opt.param_groups[0]["lr"] = torch.tensor(...)``, before the scheduler
        is made.

    Returns
    -------
    ModelProblem
        Runs on the ``"torch"`` backend (``compare``'s default for it).

    Raises
    ------
    ImportError
        PyTorch is not installed (the message names the extra).
    ValueError
        Data of different row counts, a model output that does not fit the targets, a loss
        that is not a scalar, a metric it cannot compute.
    """
    try:
        from optcmp.frameworks.torch.model import TorchModel
    except ImportError as exc:
        raise _missing("from_torch", "torch", exc) from exc
    return ModelProblem(TorchModel(model, loss, compile_step, scheduler), data, valid, metrics,
                        name, target=target)


def from_keras(model: Any, loss: Any, data: Any, *, valid: Any = None,
               metrics: Sequence[str] = (), name: str | None = None,
               target: Any = None) -> ModelProblem:
    """A problem from a built Keras 3 model, trained by ``keras.optimizers`` on its
    ``trainable_variables``, on the TensorFlow backend.

    Parameters
    ----------
    model : keras.Model
        Built (called once, or made with an ``Input``); Keras must run on TensorFlow in this
        process (Keras 3 has one backend per process). Its variables' dtype (float32,
        float64, or bfloat16 and float16, counted as in :func:`from_torch`) is the run's.
    loss : keras loss, callable or {"cross_entropy", "mse"}
        Keras' convention ``loss(y_true, y_pred) -> scalar``; ``"cross_entropy"`` is
        ``SparseCategoricalCrossentropy(from_logits=True)``.
    data, valid, metrics, name, target
        As in :func:`from_torch` (default name ``"keras-model"``).

    Returns
    -------
    ModelProblem
        Runs on the ``"tensorflow"`` backend.

    Raises
    ------
    ImportError
        TensorFlow or Keras is not installed (the message names the extra).
    ValueError
        As :func:`from_torch`; also Keras running on another backend than TensorFlow.
    """
    try:
        from optcmp.frameworks.tensorflow.model import KerasModel
    except ImportError as exc:
        raise _missing("from_keras", "keras", exc) from exc
    return ModelProblem(KerasModel(model, loss), data, valid, metrics, name, target=target)


def from_jax(apply: Callable[..., Any], params: Any, loss: Any, data: Any, *,
             valid: Any = None, metrics: Sequence[str] = (), name: str | None = None,
             target: Any = None) -> ModelProblem:
    """A problem from a JAX model in Flax's convention, trained by optax on its parameters.

    Parameters
    ----------
    apply : callable
        ``apply(params, X) -> outputs`` in ``jax.numpy`` (e.g. a Flax module's ``apply``).
    params : pytree
        The initial parameters (any pytree of float arrays: dicts, lists, Flax variables);
        their leaves, in ``jax.tree_util`` order, are the iterate; their dtype (float32,
        float64, or bfloat16 and float16, counted as in :func:`from_torch`) the run's.
    loss : callable or {"cross_entropy", "mse"}
        ``loss(outputs, targets) -> scalar`` in ``jax.numpy``.
    data, valid, metrics, name, target
        As in :func:`from_torch` (default name ``"jax-model"``).

    Returns
    -------
    ModelProblem
        Runs on the ``"jax"`` backend; its steps are one ``jax.jit`` of the gradient and the
        optax update.

    Raises
    ------
    ImportError
        JAX or optax is not installed (the message names the extra).
    ValueError
        As :func:`from_torch`.
    """
    try:
        from optcmp.frameworks.jax.model import JaxModel
    except ImportError as exc:
        raise _missing("from_jax", "jax", exc) from exc
    return ModelProblem(JaxModel(apply, params, loss), data, valid, metrics, name,
                        target=target)


__all__ = ["METRICS", "ModelProblem", "as_numpy", "from_jax", "from_keras", "from_torch",
           "split_data"]
