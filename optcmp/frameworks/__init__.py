"""The registry of backends: numpy (always), PyTorch, TensorFlow and JAX (imported only when a
run needs them).

Use :func:`get_backend` to build one by name; :func:`available_backends` lists the installed
ones without importing the frameworks. :data:`BACKENDS` is the one table of backends: adding a
framework is one folder, ``optcmp/frameworks/<name>/`` with its ``backend.py`` (a
:class:`~optcmp.frameworks.base.Backend` subclass) and ``ops.py``, plus one row here (see
``docs/architecture.md``).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from optcmp.frameworks.base import (
    DEVICE_FORMS,
    DTYPES,
    GRADIENTS,
    Backend,
    BackendUnavailable,
    check_device,
    check_dtype,
)
from optcmp.frameworks.ops import OPS


@dataclass(frozen=True)
class BackendInfo:
    """Where a backend lives and what it needs.

    Attributes
    ----------
    name : str
        Canonical name.
    module, cls : str
        Module and class of the :class:`~optcmp.frameworks.base.Backend`, imported on first use.
    requires : str
        The framework's import name (its presence is checked without importing it).
    extra : str
        The pip extra of optcmp that installs it.
    aliases : tuple of str
        Other accepted names.
    natives : tuple of str
        Frameworks whose own optimizers run on this backend as ``impl="native"`` (the
        ``framework`` of an optimizer's native declarations, e.g. ``"torch"``, ``"keras"``).
    """

    name: str
    module: str
    cls: str
    requires: str
    extra: str
    aliases: tuple[str, ...] = ()
    natives: tuple[str, ...] = ()


#: Registry of backends, in the order they are run (torch before tensorflow: importing them in the
#: reverse order has been seen to crash the process).
BACKENDS: dict[str, BackendInfo] = {
    "numpy": BackendInfo("numpy", "optcmp.frameworks.numpy.backend", "NumpyBackend", "numpy", "", ("np",)),
    "torch": BackendInfo("torch", "optcmp.frameworks.torch.backend", "TorchBackend", "torch", "torch",
                         ("pytorch",), natives=("torch",)),
    "tensorflow": BackendInfo("tensorflow", "optcmp.frameworks.tensorflow.backend", "TensorFlowBackend",
                              "tensorflow", "tensorflow", ("tf", "keras"), natives=("keras",)),
    "jax": BackendInfo("jax", "optcmp.frameworks.jax.backend", "JaxBackend", "jax", "jax", (),
                       natives=("optax",)),
}


def canonical_backend(name: str) -> str:
    """Canonical backend name for ``name`` (case-insensitive, aliases allowed).

    Parameters
    ----------
    name : str
        ``"numpy"``, ``"torch"``, ``"tensorflow"`` or an alias (``np``, ``pytorch``, ``tf``,
        ``keras``).

    Returns
    -------
    str
        The canonical name.

    Raises
    ------
    ValueError
        Unknown name; the message lists the valid ones.
    """
    key = str(name).strip().lower()
    for info in BACKENDS.values():
        if key == info.name or key in info.aliases:
            return info.name
    raise ValueError(f"unknown backend {name!r}; valid backends: {', '.join(BACKENDS)}")


def is_available(name: str) -> bool:
    """Whether a backend's framework is installed (does not import it).

    Parameters
    ----------
    name : str
        Backend name or alias.

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        Unknown backend name.
    """
    info = BACKENDS[canonical_backend(name)]
    return importlib.util.find_spec(info.requires) is not None


def available_backends() -> list[str]:
    """Names of the installed backends, in run order (no framework is imported).

    Returns
    -------
    list of str
        A subset of ``["numpy", "torch", "tensorflow"]``, in that order.
    """
    return [n for n in BACKENDS if is_available(n)]


def get_backend(name: str, device: str | None = None, dtype: str = "float64") -> Backend:
    """Build a backend.

    Parameters
    ----------
    name : str
        ``"numpy"``, ``"torch"`` or ``"tensorflow"`` (aliases ``np``, ``pytorch``, ``tf``).
    device : str, optional
        ``"cpu"`` (default), ``"cuda"``, ``"cuda:N"``, ``"gpu"``, ``"gpu:N"``.
    dtype : {"float64", "float32"}

    Returns
    -------
    Backend

    Raises
    ------
    ValueError
        Unknown name, dtype, a device name of no allowed form (:func:`check_device`), or a
        device that is absent (the message lists the available ones).
    BackendUnavailable
        The framework is not installed; the message names the pip extra.
    """
    canon = canonical_backend(name)
    check_dtype(dtype)
    device = check_device(device)
    backend: Backend = backend_class(canon)(device=device, dtype=dtype)
    return backend


def backend_class(name: str) -> type[Backend]:
    """The :class:`~optcmp.frameworks.base.Backend` subclass of a backend (imports its framework).

    Parameters
    ----------
    name : str
        Backend name or alias.

    Returns
    -------
    type

    Raises
    ------
    ValueError
        Unknown backend name.
    BackendUnavailable
        The framework is not installed; the message names the pip extra.
    """
    canon = canonical_backend(name)
    info = BACKENDS[canon]
    if not is_available(canon):
        raise BackendUnavailable(
            f"backend {canon!r} needs the {info.requires!r} package, which is not installed; "
            f"install it with: pip install 'optcmp[{info.extra}]'"
        )
    try:
        module = importlib.import_module(info.module)
    except ModuleNotFoundError as exc:
        if exc.name == info.module:
            raise BackendUnavailable(f"backend {canon!r} is not part of this optcmp build") from exc
        raise
    cls: type[Backend] = getattr(module, info.cls)
    return cls


__all__ = [
    "BACKENDS",
    "DEVICE_FORMS",
    "DTYPES",
    "GRADIENTS",
    "OPS",
    "Backend",
    "BackendInfo",
    "BackendUnavailable",
    "available_backends",
    "backend_class",
    "canonical_backend",
    "check_device",
    "get_backend",
    "is_available",
]
