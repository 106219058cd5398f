"""The registry of backends: numpy (always), PyTorch, TensorFlow and JAX (imported only when a
run needs them). Adding a framework: see docs/architecture.md, "Where to add a framework".
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from optcmp._imports import first_import
from optcmp._io import install_hint
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
    """Where a backend lives and what it needs."""

    name: str
    module: str
    """Module and class of the :class:`~optcmp.frameworks.base.Backend`, imported on first use."""
    cls: str
    requires: str
    """The framework's import name, and the pip extra of optcmp that installs it."""
    extra: str
    aliases: tuple[str, ...] = ()
    natives: tuple[str, ...] = ()
    """The ``framework`` of the native optimizers running on this backend (e.g. ``"keras"``)."""


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
    """Canonical backend name for ``name``.

    Parameters
    ----------
    name : str
        A name of :data:`BACKENDS` or an alias, case-insensitive.

    Returns
    -------
    str
    """
    key = str(name).strip().lower()
    for info in BACKENDS.values():
        if key == info.name or key in info.aliases:
            return info.name
    raise ValueError(f"unknown backend {name!r}; valid backends: {', '.join(BACKENDS)}")


def is_available(name: str) -> bool:
    """Whether a backend's framework is installed (without importing it).

    Parameters
    ----------
    name : str
        Backend name or alias.

    Returns
    -------
    bool
    """
    info = BACKENDS[canonical_backend(name)]
    return importlib.util.find_spec(info.requires) is not None


def available_backends() -> list[str]:
    """Names of the installed backends, in run order (no framework is imported).

    Returns
    -------
    list of str
    """
    return [n for n in BACKENDS if is_available(n)]


def get_backend(name: str, device: str | None = None, dtype: str = "float64") -> Backend:
    """Build a backend.

    Parameters
    ----------
    name : str
        Backend name or alias.
    device : str, optional
        ``"cpu"`` (default) or a GPU (:func:`check_device`).
    dtype : {"float64", "float32"}

    Returns
    -------
    Backend
    """
    canon = canonical_backend(name)
    check_dtype(dtype)
    device = check_device(device)
    return backend_class(canon)(device=device, dtype=dtype)


def backend_class(name: str) -> type[Backend]:
    """The :class:`~optcmp.frameworks.base.Backend` subclass of a backend (imports its framework).

    Parameters
    ----------
    name : str
        Backend name or alias.

    Returns
    -------
    type
    """
    canon = canonical_backend(name)
    info = BACKENDS[canon]
    if not is_available(canon):
        raise BackendUnavailable(
            f"backend {canon!r} needs the {info.requires!r} package, which is not installed; "
            f"install it with: {install_hint(info.extra)}"
        )
    try:
        module = first_import(info.module)
    except ModuleNotFoundError as exc:
        if exc.name == info.module:
            raise BackendUnavailable(f"backend {canon!r} is not part of this optcmp build") from exc
        raise
    cls: type[Backend] = getattr(module, info.cls)
    return cls


__all__ = ["BACKENDS", "DEVICE_FORMS", "DTYPES", "GRADIENTS", "OPS", "Backend", "BackendInfo",
           "BackendUnavailable", "available_backends", "backend_class", "canonical_backend",
           "check_device", "get_backend", "install_hint", "is_available"]
