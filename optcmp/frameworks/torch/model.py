"""A user's ``torch.nn.Module`` evaluated off the clock: loss, gradient and outputs at a flat iterate.

:class:`TorchModel` is what :func:`optcmp.problems.from_torch` keeps of a module: its trainable
parameters (names, shapes, dtype, in ``named_parameters()`` order), the loss, and evaluations at
a flat float64 vector ``x`` through ``torch.func.functional_call`` (the module itself is never
changed) with torch's autograd, in the module's own dtype and on its device. The timed steps
work on a copy of the module (:mod:`optcmp.frameworks.torch.model_stepper`).
"""

from __future__ import annotations

import copy
import inspect
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.func import functional_call

#: Loss names and torch's functions (the mean over the batch).
LOSSES: dict[str, Callable[..., Any]] = {"cross_entropy": torch.nn.functional.cross_entropy,
                                         "mse": torch.nn.functional.mse_loss}
_DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.bfloat16: "bfloat16",
           torch.float16: "float16"}


class TorchModel:
    """A module, its loss ``loss(outputs, targets) -> scalar`` (or a name of :data:`LOSSES`)."""

    framework = "torch"
    backend = "torch"

    def __init__(self, model: Any, loss: Any, compile_step: bool | str = False,
                 scheduler: Callable[[Any], Any] | None = None) -> None:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        if not named:
            raise ValueError("the module has no trainable parameter (requires_grad=True)")
        dtypes = {p.dtype for _, p in named}
        if len(dtypes) > 1 or next(iter(dtypes)) not in _DTYPES:
            raise ValueError(f"the module's parameters must share one floating dtype of "
                             f"{list(_DTYPES.values())}, got {sorted(map(str, dtypes))}")
        if not isinstance(compile_step, (bool, str)) or compile_step == "":
            raise TypeError(f"compile_step must be True, False or the name of a torch.compile "
                            f"backend (e.g. 'inductor'), got {compile_step!r}")
        self.model = model
        #: ``torch.compile`` the optimizer's update (True: its default backend; a name: that
        #: backend), as a user who compiles ``opt.step()`` and ``sched.step()`` does
        self.compile_step = compile_step
        if scheduler is not None and not callable(scheduler):
            raise TypeError(f"scheduler must be a function scheduler(optimizer) -> torch LR "
                            f"scheduler, got {type(scheduler).__name__}")
        #: ``scheduler(optimizer)``: the user's LR scheduler, stepped after each step
        self.scheduler = scheduler
        self.names = tuple(n for n, _ in named)
        self.shapes = tuple(tuple(int(d) for d in p.shape) for _, p in named)
        self.torch_dtype = named[0][1].dtype
        self.dtype = _DTYPES[self.torch_dtype]
        self.device = named[0][1].device
        self.loss_name = loss if isinstance(loss, str) else getattr(loss, "__name__", "loss")
        self.loss = _loss(loss)
        owners = dict(model.named_modules())
        self._kinds = tuple(type(owners.get(n.rpartition(".")[0])).__name__ for n in self.names)
        #: ``functional_call`` swaps the module's parameters while it runs: one call at a time
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """The state to pickle, without the lock."""
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    def _call(self, params: dict[str, torch.Tensor], X: Any) -> torch.Tensor:
        """The module's outputs with ``params`` in place of its own (one thread at a time)."""
        with self._lock:
            return functional_call(self.model, params, (self.tensor(X),))

    def module_copy(self) -> Any:
        """A deep copy of the module, taken while no evaluation has swapped its parameters."""
        with self._lock:
            return copy.deepcopy(self.model)

    def describe(self) -> str:
        """The architecture as torch prints it (and the scheduler's source)."""
        if self.scheduler is None:
            return repr(self.model)
        try:
            source = inspect.getsource(self.scheduler)
        except (OSError, TypeError):
            source = getattr(self.scheduler, "__qualname__", type(self.scheduler).__name__)
        return f"{self.model!r}\nscheduler: {source}"

    def x0(self) -> np.ndarray:
        """The module's parameters now, as one flat float64 vector."""
        return np.concatenate([p.detach().reshape(-1).cpu().double().numpy()
                               for n, p in self.model.named_parameters() if n in self.names])

    def params(self, x: np.ndarray, grad: bool = False) -> dict[str, torch.Tensor]:
        """The named parameter tensors of flat ``x``, in the module's dtype and device."""
        out, a = {}, 0
        for name, shape in zip(self.names, self.shapes):
            b = a + int(np.prod(shape, dtype=np.int64))
            t = torch.as_tensor(np.asarray(x[a:b]).reshape(shape), device=self.device)
            out[name] = t.to(self.torch_dtype).requires_grad_(grad)
            a = b
        return out

    def tensor(self, a: Any) -> torch.Tensor:
        """A data array as a tensor on the module's device (floats in its dtype)."""
        t = torch.as_tensor(np.asarray(a), device=self.device)
        return t.to(self.torch_dtype) if t.is_floating_point() else t

    def outputs(self, x: np.ndarray, X: Any) -> np.ndarray:
        """The module's outputs at ``x`` on inputs ``X`` (float64 numpy)."""
        with torch.no_grad():
            out = self._call(self.params(x), X)
        return out.detach().cpu().double().numpy()

    def loss_value(self, x: np.ndarray, X: Any, y: Any) -> Any:
        """The loss at ``x`` as the loss returned it (a tensor; a non-scalar is the caller's
        error to report)."""
        with torch.no_grad():
            out = self._call(self.params(x), X)
            return self.loss(out, self.tensor(y)).detach().cpu().double().numpy()

    def value_and_grad(self, x: np.ndarray, X: Any, y: Any) -> tuple[float, np.ndarray]:
        """The loss and its gradient at ``x`` (torch's autograd), the gradient flat float64."""
        ps = self.params(x, grad=True)
        with torch.enable_grad():
            f = self.loss(self._call(ps, X), self.tensor(y))
            gs = torch.autograd.grad(f, list(ps.values()), allow_unused=True)
        g = [torch.zeros_like(p) if gi is None else gi for p, gi in zip(ps.values(), gs)]
        return float(f.detach()), torch.cat([gi.reshape(-1) for gi in g]).cpu().double().numpy()

    def canonical(self, i: int, a: np.ndarray) -> np.ndarray:
        """Parameter ``i`` in the (in, out) layout of Keras and Flax: a ``Linear`` weight
        (out, in) transposed, a ``Conv2d`` weight (out, in, h, w) as (h, w, in, out)."""
        if self._kinds[i] == "Linear" and a.ndim == 2:
            return a.T
        if self._kinds[i].startswith("Conv") and a.ndim >= 3:
            return np.transpose(a, (*range(2, a.ndim), 1, 0))
        return a

    def from_canonical(self, i: int, a: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`canonical`."""
        if self._kinds[i] == "Linear" and a.ndim == 2:
            return a.T
        if self._kinds[i].startswith("Conv") and a.ndim >= 3:
            return np.transpose(a, (a.ndim - 1, a.ndim - 2, *range(a.ndim - 2)))
        return a

    def float64(self) -> TorchModel:
        """The same model computing in float64 (a copy of the module)."""
        m = self.module_copy().to(torch.float64)
        return TorchModel(m, self._loss_arg(), self.compile_step, self.scheduler)

    def _loss_arg(self) -> Any:
        """The loss as given (a name or the callable)."""
        return self.loss_name if self.loss_name in LOSSES else self.loss


def mlp(layers: list[tuple[np.ndarray, np.ndarray]], dtype: str) -> torch.nn.Module:
    """``Linear``/``ReLU`` layers with the given (in, out) kernels and biases, in ``dtype``."""
    mods: list[torch.nn.Module] = []
    for W, b in layers:
        lin = torch.nn.Linear(W.shape[0], W.shape[1], dtype=getattr(torch, dtype))
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(W.T))
            lin.bias.copy_(torch.as_tensor(b))
        mods += [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*mods[:-1])


class DigitsCNN(torch.nn.Module):
    """8 x 8 images (rows of 64 pixels): a 3 x 3 convolution, ReLU, flattened in (h, w, c)
    order as Keras and Flax flatten, and a linear layer."""

    def __init__(self, filters: int, n_out: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(1, filters, 3, dtype=dtype)
        self.fc = torch.nn.Linear(6 * 6 * filters, n_out, dtype=dtype)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.conv(X.reshape(-1, 1, 8, 8)))
        return self.fc(h.permute(0, 2, 3, 1).flatten(1))


def cnn(layers: list[tuple[np.ndarray, np.ndarray]], dtype: str) -> torch.nn.Module:
    """:class:`DigitsCNN` with the given (h, w, in, out) kernel, (in, out) weights, biases."""
    (K, c), (W, b) = layers
    net = DigitsCNN(K.shape[3], W.shape[1], getattr(torch, dtype))
    with torch.no_grad():
        net.conv.weight.copy_(torch.as_tensor(np.transpose(K, (3, 2, 0, 1))))
        net.conv.bias.copy_(torch.as_tensor(c))  # type: ignore[union-attr]
        net.fc.weight.copy_(torch.as_tensor(W.T))
        net.fc.bias.copy_(torch.as_tensor(b))
    return net


def _loss(loss: Any) -> Callable[..., Any]:
    """The loss function of a name or a callable."""
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise ValueError(f"loss {loss!r} is not a loss name; give one of {sorted(LOSSES)} "
                             "or a function loss(outputs, targets) -> scalar tensor")
        return LOSSES[loss]
    if not callable(loss):
        raise TypeError(f"loss must be a name of {sorted(LOSSES)} or a function "
                        f"loss(outputs, targets) -> scalar tensor, got {type(loss).__name__}")
    return loss  # type: ignore[no-any-return]


__all__ = ["LOSSES", "DigitsCNN", "TorchModel", "cnn", "mlp"]
