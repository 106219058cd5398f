"""The :class:`Backend` interface: data placement, ops namespace, compiled steps, device sync.

Every backend module (:mod:`optcmp.backends.numpy_`, ``torch_``, ``tensorflow_``) defines one
subclass of :class:`Backend` with the same public methods, so optimizers and problems are written
once. A backend converts arrays and places them on its device **once**, before any timing;
:meth:`Backend.sync` waits for queued device work and is called by the stopwatch before every
clock read.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    from optcmp.optimizers.base import UpdateRule
    from optcmp.problems.base import Problem

#: dtypes a backend accepts.
DTYPES = ("float64", "float32")

#: ``step(x, state, batch, curvature) -> (fun, grad_norm, x_new, state_new)``
StepFn = Callable[[Any, tuple[Any, ...], dict[str, Any], Any], tuple[Any, Any, Any, tuple[Any, ...]]]
#: ``value_and_grad(x, batch) -> (fun, grad)``
ValueGradFn = Callable[[Any, dict[str, Any]], tuple[Any, Any]]


class BackendUnavailable(ImportError):
    """A backend's framework is not installed; the message names the extra to install."""


def check_dtype(dtype: str) -> str:
    """Validate a dtype name.

    Parameters
    ----------
    dtype : str or numpy dtype
        ``"float64"`` or ``"float32"``.

    Returns
    -------
    str
        The dtype name.

    Raises
    ------
    ValueError
        ``dtype`` is not one of :data:`DTYPES`.
    """
    name = str(np.dtype(dtype)) if not isinstance(dtype, str) else dtype
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return name


#: Device names :func:`check_device` accepts (``N`` is a device index).
DEVICE_FORMS = ("cpu", "cuda", "cuda:N", "gpu", "gpu:N")

_DEVICE_RE = re.compile(r"(cpu|cuda|gpu)(:[0-9]+)?")


def check_device(device: str | None) -> str | None:
    """Validate a device name (its form only: whether the device exists is the backend's check).

    Parameters
    ----------
    device : str or None
        ``None`` (the CPU), ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"gpu"`` or ``"gpu:N"``
        (case-insensitive; ``"gpu"`` means ``"cuda"``).

    Returns
    -------
    str or None
        ``device`` with surrounding whitespace removed (``None`` stays ``None``).

    Raises
    ------
    ValueError
        Any other value; the message names it and lists the allowed forms.
    """
    if device is None:
        return None
    if isinstance(device, str):
        name = device.strip()
        m = _DEVICE_RE.fullmatch(name.lower())
        if m is not None and not (m.group(1) == "cpu" and m.group(2)):
            return name
    raise ValueError(f"device must be None or one of {', '.join(repr(f) for f in DEVICE_FORMS)} "
                     f"(N a device index), got {device!r}")


def is_cpu_device(device: str | None) -> bool:
    """Whether a (valid) device name means the CPU.

    Parameters
    ----------
    device : str or None
        A device name accepted by :func:`check_device`.

    Returns
    -------
    bool
        True for ``None`` and ``"cpu"`` (any case, surrounding whitespace ignored).
    """
    return device is None or device.strip().lower() == "cpu"


class Backend(ABC):
    """A numerical framework on one device, in one floating dtype.

    Parameters
    ----------
    device : str, optional
        ``"cpu"`` (default) or an accelerator such as ``"cuda"`` / ``"cuda:0"`` / ``"gpu"``.
    dtype : {"float64", "float32"}, default "float64"
        Floating dtype of data and iterates. float64 lets backends be compared exactly.

    Attributes
    ----------
    name : str
        Registry name (``"numpy"``, ``"torch"``, ``"tensorflow"``).
    ops : namespace
        Array functions the problems' objectives use (``matmul``, ``mean``, ``sum``,
        ``reshape``, ``sqrt``, ``exp``, ``log``, ``sigmoid``, ``logsumexp``, ``ones_like``, ...).
    """

    name: ClassVar[str] = "backend"
    ops: Any

    def __init__(self, device: str | None = None, dtype: str = "float64") -> None:
        self.dtype = check_dtype(dtype)
        self.device = device or "cpu"

    # ------------------------------------------------------------------ metadata
    @property
    @abstractmethod
    def version(self) -> str:
        """Version string of the underlying framework."""

    def describe(self) -> dict[str, Any]:
        """Backend, device, dtype and framework version, for results."""
        return {"backend": self.name, "device": self.device, "dtype": self.dtype,
                "framework_version": self.version}

    # ------------------------------------------------------------------ arrays
    @abstractmethod
    def asarray(self, a: np.ndarray) -> Any:
        """Convert a numpy array to this backend on its device (floats cast to ``dtype``)."""

    @abstractmethod
    def to_numpy(self, t: Any) -> np.ndarray:
        """Copy a backend array to the host as a numpy array."""

    def place(self, data: dict[str, np.ndarray]) -> dict[str, Any]:
        """Place a dict of arrays on the device, once, before timing."""
        return {k: self.asarray(v) for k, v in data.items()}

    @abstractmethod
    def index_array(self, idx: np.ndarray) -> Any:
        """An int64 index vector on the device (a minibatch order)."""

    @abstractmethod
    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        """Rows ``idx`` (backend index vector or slice) of every array in ``data``."""

    @abstractmethod
    def copy(self, t: Any) -> Any:
        """A copy of a backend array that later in-place updates cannot change."""

    def sync(self) -> None:  # noqa: B027 - a no-op default is the right one for CPU backends
        """Wait until all queued device work is done (no-op on CPU)."""

    # ------------------------------------------------------------------ compiled functions
    @abstractmethod
    def make_value_and_grad(self, problem: Problem) -> ValueGradFn:
        """``(x, batch) -> (fun, grad)`` on this backend, compiled where that is the fast path."""

    @abstractmethod
    def make_step(self, problem: Problem, rule: UpdateRule, hyper: dict[str, float], *,
                  grad_norm: bool = True) -> StepFn:
        """One optimizer iteration ``(x, state, batch, curvature) -> (fun, gnorm, x, state)``.

        ``fun`` is the objective at the **incoming** iterate (computed by the step anyway),
        ``gnorm`` the 2-norm of its gradient; both stay backend scalars (read off the clock).
        With ``grad_norm=False`` (minibatch steps, whose gradient norm nobody reads) ``gnorm``
        is ``None`` and is not computed inside the timed step.
        """
